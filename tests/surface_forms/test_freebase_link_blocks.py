"""The dumps' Freebase links read a block of lines at a time (``freebase_link_batches``) are the
links ``scan`` finds line by line, with the same report (triples, malformed lines by number):
blocks of every size against the lines (one, a few, many), malformed lines, lines longer than
``MAX_LINE_CHARS`` inside a block and across blocks, CR and CR LF line ends, a last line
without its line end."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from elquery.indexing import ntriples
from elquery.indexing.ntriples import ParseReport
from elquery.indexing.surface_forms import sources
from elquery.indexing.surface_forms.sources import FREEBASE_MID_PREFIX, SAME_AS, freebase_link_batches, scan
from elquery.kb.entities import entity_id

MAX = 150  # MAX_LINE_CHARS, patched: a link of a short title is about 110 characters


def _link(title: str, mid: str, end: str = "\n") -> str:
    return f"<http://dbpedia.org/resource/{title}> <http://www.w3.org/2002/07/owl#sameAs> <http://rdf.freebase.com/ns/m.{mid}> .{end}"


def _reference(path: Path) -> tuple[list[tuple[str, str]], ParseReport]:
    report = ParseReport()
    links = []
    for _, subject, obj, literal in scan(path, frozenset({SAME_AS}), report):
        entity = entity_id(subject)
        if entity is not None and not literal and obj.startswith(FREEBASE_MID_PREFIX):
            links.append((entity, "/m/" + obj[len(FREEBASE_MID_PREFIX):]))
    return links, report


@pytest.mark.parametrize("block_chars", [7, 100, 1 << 20])
def test_blocks_as_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_chars: int) -> None:
    for module in (ntriples, sources):
        monkeypatch.setattr(module, "MAX_LINE_CHARS", MAX)
    monkeypatch.setattr(sources, "_LINK_BLOCK_CHARS", block_chars)
    rng = random.Random(block_chars)
    found = malformed = 0
    odd = ["not a triple\n", "\n", "<http://dbpedia.org/resource/A> <http://www.w3.org/2002/07/owl#sameAs> \"lit\" .\n",
           _link("B", "0b", "\r\n"), _link("C", "0c", "\r"), _link("D" * 30, "0d"), _link("E" * 200, "0e"),
           "x" * 500 + "\n", _link("F", "0f", ""), "\x00"]
    for trial in range(60):
        lines = [_link(f"T{rng.randrange(50)}", f"0{rng.randrange(99)}") for _ in range(rng.randrange(40))]
        for _ in range(rng.choice([0, 1, 3])):
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(odd[:-1]))
        if rng.random() < 0.3:
            lines.append(rng.choice(odd[-2:]))  # a last line without its line end: a link, or not one
        path = tmp_path / f"links{trial}.ttl"
        path.write_text("".join(lines), encoding="utf-8")
        expected, expected_report = _reference(path)
        report = ParseReport()
        got = [link for entities, mids in freebase_link_batches(path, report) for link in zip(entities, mids)]
        assert got == expected
        assert report == expected_report
        found += len(got)
        malformed += report.malformed
    assert found > 1_000 and malformed > 20
