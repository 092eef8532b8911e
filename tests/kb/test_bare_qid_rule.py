"""The one rule for a bare ``Q<digits>`` (docs/identifiers.md): the Wikidata item the identifiers
table maps that QID to; failing that, the DBpedia entity titled ``Q<digits>`` when the table holds
it; failing both (or with no table) it resolves to nothing, and where ids are kept as written
(qrels, runs, LTR ground truth) it keeps its DBpedia reading ``<dbpedia:Q42>``, which is what
:func:`canonical_entity_id` (no table) gives. The table is built from real-format DBpedia files:
the sample's page ids and mids, and page ids and Wikidata links written here in DBpedia's shapes
for the titles ``Q1``, ``Q2`` (DBpedia 2015-10 has no such title in the sample nor in the
DBpedia-Entity v2 or ELQ qrels, but Wikipedia titles of that shape can exist)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elquery.indexing.identifiers import build_identifiers
from elquery.kb.entities import canonical_entity_id
from elquery.kb.identifiers import IdentifierTable, WrittenIds, resolve
from elquery.linking.ltr.feature_file import read_ground_truth

PAGE_ID = "<http://dbpedia.org/ontology/wikiPageID>"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"
SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"


@pytest.fixture(scope="module")
def table(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> IdentifierTable:
    root = tmp_path_factory.mktemp("bare-qid")
    data = root / "dumps"
    data.mkdir()
    for name in ("page_ids_en.ttl.bz2", "freebase_links_en.ttl.bz2"):
        shutil.copy(dbpedia_sample / name, data / name)
    (data / "page_ids_q_en.ttl").write_text("".join(
        f'<http://dbpedia.org/resource/{title}> {PAGE_ID} "{page}"^^{INTEGER} .\n'
        for title, page in (("Q1", 900001), ("Q2", 900002), ("Universe", 900003))), encoding="utf-8")
    (data / "interlanguage_links_en.ttl").write_text(
        f"<http://dbpedia.org/resource/Universe> {SAME_AS} <http://wikidata.dbpedia.org/resource/Q1> .\n"
        f"<http://dbpedia.org/resource/British_Airways> {SAME_AS} <http://wikidata.dbpedia.org/resource/Q8691> .\n",
        encoding="utf-8")
    (root / "index").mkdir()
    build_identifiers([data], root / "index")
    return IdentifierTable(root / "index" / "identifiers.db")


def test_a_qid_the_table_maps_wins_over_a_title(table: IdentifierTable) -> None:
    assert table.has_entity("<dbpedia:Q1>")  # the title exists, and the QID Q1 is Universe's
    assert resolve("Q1", table) == "<dbpedia:Universe>"
    assert resolve("Q8691", table) == "<dbpedia:British_Airways>"
    for title in ("<dbpedia:Q1>", "dbpedia:Q1", "http://dbpedia.org/resource/Q1"):
        assert resolve(title, table) == "<dbpedia:Q1>"  # written as a DBpedia id: always the title


def test_an_unmapped_qid_is_the_title_the_table_holds(table: IdentifierTable) -> None:
    assert resolve("Q2", table) == "<dbpedia:Q2>"
    assert resolve("wikidata:Q2", table) is None  # written as a Wikidata id: no title fallback
    assert resolve("Q3", table) is None  # neither a QID of the table nor a title it holds
    assert resolve("Q2", None) is None  # no table: nothing to resolve it with
    assert canonical_entity_id("Q2") == "<dbpedia:Q2>"  # its DBpedia reading, kept where ids stay as written
    assert canonical_entity_id("Q0") == resolve("Q0", None) == "<dbpedia:Q0>"  # not a QID's shape: a title


def test_ids_kept_as_written_are_counted(table: IdentifierTable) -> None:
    ids = WrittenIds(table)
    assert [ids(text) for text in ("Q1", "Q2", "Q3", "/m/0zzzzzz", "Q3", "<dbpedia:Rome>", "curid:999999999")] == [
        "<dbpedia:Universe>", "<dbpedia:Q2>", "<dbpedia:Q3>", "/m/0zzzzzz", "<dbpedia:Q3>", "<dbpedia:Rome>",
        "curid:999999999"]
    assert ids.note("qrels.txt") == ("qrels.txt: 3 of 6 entity ids name no entity in the index's identifiers table "
                                     "and are compared as written (e.g. '/m/0zzzzzz')")
    assert WrittenIds(table).note("qrels.txt") is None
    alone = WrittenIds(None)
    assert alone("Q8691") == "<dbpedia:Q8691>" and alone("<dbpedia:Rome>") == "<dbpedia:Rome>"
    assert alone.note("q.txt") == ("q.txt: 1 of 2 entity ids name no entity (no identifiers table: "
                                   "`elquery build` makes one) and are compared as written (e.g. 'Q8691')")


def test_ltr_ground_truth_takes_the_same_rule(table: IdentifierTable, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels-elq.txt"
    qrels.write_text("a\t1\tQ1\tQ2\nb\t1\tQ3\nb\t1\tQ8691\nc\t1\tcurid:900002\n", encoding="utf-8")
    ids = WrittenIds(table)
    truth = read_ground_truth(qrels, ids)
    assert truth == {"a": frozenset({"<dbpedia:Universe>", "<dbpedia:Q2>"}),
                     "b": frozenset({"<dbpedia:Q3>", "<dbpedia:British_Airways>"}), "c": frozenset({"<dbpedia:Q2>"})}
    note = ids.note(qrels.name)
    assert note is not None and note.startswith("qrels-elq.txt: 1 of 5 entity ids name no entity")
