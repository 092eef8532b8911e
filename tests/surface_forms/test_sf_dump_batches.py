"""The dumps' Freebase links read a batch at a time give what the one-link-at-a-time path gives:
entity numbers, the mapping and the report (the step that runs alone before the FACC readers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from elquery.indexing.surface_forms.mid_numbers import MAX_CODE_CHARS, FreebaseLinks, mid_codes
from elquery.indexing.surface_forms.sources import DumpReport, DumpSources, Entities


def test_ids_of_numbers_names_as_id_does() -> None:
    names = ["<dbpedia:B>", "<dbpedia:A>", "<dbpedia:B>", "<dbpedia:C>", "<dbpedia:A>", "<dbpedia:D>"]
    one, batch = Entities(), Entities()
    assert one.id("<dbpedia:C>") == batch.id("<dbpedia:C>") == 0
    assert batch.ids_of(names) == [one.id(name) for name in names] == [1, 2, 1, 0, 2, 3]
    assert batch.names == one.names == ["<dbpedia:C>", "<dbpedia:B>", "<dbpedia:A>", "<dbpedia:D>"]
    assert batch.ids == one.ids
    assert batch.ids_of([]) == [] and batch.ids_of(["<dbpedia:E>", "<dbpedia:E>"]) == [4, 4]
    assert batch.names[-1] == "<dbpedia:E>" and len(batch.names) == len(batch.ids) == 5


def _sources() -> DumpSources:
    redirects = {"<dbpedia:Roma>": "<dbpedia:Rome>", "<dbpedia:Mercury_(planet)>": "<dbpedia:Mercury_(disambiguation)>"}
    return DumpSources(dict(redirects), Entities(), DumpReport())


def test_a_batch_of_links_is_read_as_links_one_at_a_time() -> None:
    links = [("<dbpedia:Roma>", "/m/06c62"), ("<dbpedia:Paris>", "/m/05qtj"), ("<dbpedia:Rome>", "/m/0bbb"),
             ("<dbpedia:Mercury_(planet)>", "/m/04jpl"), ("<dbpedia:Java_(disambiguation)>", "/m/0jv"),
             ("<dbpedia:Paris>", "/m/05qtj"), ("<dbpedia:Lyon>", "/m/" + "a" * (MAX_CODE_CHARS + 1))]
    one, batch = _sources(), _sources()
    for entity, mid in links:
        one._freebase(entity, mid)
    batch._freebase_batch([entity for entity, _ in links[:3]], [mid for _, mid in links[:3]])
    batch._freebase_batch([entity for entity, _ in links[3:]], [mid for _, mid in links[3:]])
    assert batch.entities.names == one.entities.names == ["<dbpedia:Rome>", "<dbpedia:Paris>", "<dbpedia:Lyon>"]
    assert batch.report == one.report and one.report.freebase_links == 5  # the two disambiguation pages left out
    mapped, expected = batch.mid_numbers(), one.mid_numbers()
    mids = ["/m/06c62", "/m/05qtj", "/m/0bbb", "/m/04jpl", "/m/0jv", "/m/" + "a" * (MAX_CODE_CHARS + 1), "/m/zz"]
    assert mapped.numbers(mids).tolist() == expected.numbers(mids).tolist() == [0, 1, 0, -1, -1, 2, -1]


def test_mid_codes_are_the_same_from_a_chunk_of_valid_mids_and_a_chunk_with_others() -> None:
    valid = ["/m/0", "/m/06c62", "/m/0_9z", "/m/" + "z" * MAX_CODE_CHARS]
    mixed = valid + ["/m/", "m/06c62", "/m/06C62", "/m/é1", "/m/" + "a" * (MAX_CODE_CHARS + 1), "/m/0\udcff"]
    assert (mid_codes(valid) >= 0).all()
    assert mid_codes(mixed).tolist() == mid_codes(valid).tolist() + [-1] * 6
    # base 38, digits 0-9 -> 1-10, a-z -> 11-36, _ -> 37, 0 after the end (MAX_CODE_CHARS digits in all)
    assert mid_codes(["/m/0"])[0] == 1 * 38 ** (MAX_CODE_CHARS - 1)
    assert mid_codes(["/m/0_"])[0] == 1 * 38 ** (MAX_CODE_CHARS - 1) + 37 * 38 ** (MAX_CODE_CHARS - 2)
