"""The streaming N-Triples reader (elquery.indexing.ntriples): escapes, malformed lines, compression."""

from __future__ import annotations

import bz2
import itertools
import re
from pathlib import Path

import pytest

from elquery.indexing.entity_documents import spill
from elquery.base import ElqueryError
from elquery.indexing.ntriples import (
    ObjectKind,
    ParseReport,
    Triple,
    dump_files,
    parse_line,
    read_triples,
)
from elquery.kb.entities import entity_id
from conftest import write_compressed as _write  # tests/conftest.py, on the path as pytest loads it

R = "http://dbpedia.org/resource/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
XSD = "http://www.w3.org/2001/XMLSchema#"


# --- tricky lines ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # escaped quote and backslash inside a literal
        (
            rf'<{R}Normandy> <{COMMENT}> "the word for \"northman\" and a back\\slash"@en .',
            Triple(f"{R}Normandy", COMMENT, 'the word for "northman" and a back\\slash', ObjectKind.LITERAL, "en"),
        ),
        # \uXXXX and \UXXXXXXXX escapes, and raw non-ASCII text
        (
            rf'<{R}Caf%C3%A9_Wha%3F> <{LABEL}> "Caf\u00E9 Wha? \U0001D49C ˈnɔrməndi 你好"@en .',
            Triple(f"{R}Caf%C3%A9_Wha%3F", LABEL, "Café Wha? \U0001d49c ˈnɔrməndi 你好", ObjectKind.LITERAL, "en"),
        ),
        # a surrogate pair written as two \u escapes (Java style) is one character
        (
            rf'<{R}Smile> <{LABEL}> "a \uD83D\uDE00 b"@en .',
            Triple(f"{R}Smile", LABEL, "a \U0001f600 b", ObjectKind.LITERAL, "en"),
        ),
        # other simple escapes
        (
            rf'<{R}X> <http://dbpedia.org/property/hubs> "* Heathrow \n* Gatwick\t\r\'q\'"@en .',
            Triple(f"{R}X", "http://dbpedia.org/property/hubs", "* Heathrow \n* Gatwick\t\r'q'", ObjectKind.LITERAL, "en"),
        ),
        # datatypes, including a DBpedia unit datatype; no space before the final dot
        (
            rf'<{R}Rome> <http://dbpedia.org/ontology/PopulatedPlace/areaTotal> "1285.41"^^<http://dbpedia.org/datatype/squareKilometre>.',
            Triple(f"{R}Rome", "http://dbpedia.org/ontology/PopulatedPlace/areaTotal", "1285.41", ObjectKind.LITERAL,
                   None, "http://dbpedia.org/datatype/squareKilometre"),
        ),
        (
            rf'<{R}KLM> <http://dbpedia.org/ontology/iataAirlineCode> "KL".',
            Triple(f"{R}KLM", "http://dbpedia.org/ontology/iataAirlineCode", "KL", ObjectKind.LITERAL),
        ),
        # language tag with a subtag; an empty literal; a trailing comment
        (
            rf'<{R}A> <http://xmlns.com/foaf/0.1/name> ""@en-GB . # note',
            Triple(f"{R}A", "http://xmlns.com/foaf/0.1/name", "", ObjectKind.LITERAL, "en-GB"),
        ),
        # IRI object; a title with a colon and an apostrophe; a \u escape in an IRI
        (
            f"<{R}Assassin's_Creed:_Brotherhood> <http://purl.org/dc/terms/subject> <{R}Category:Open_world_video_games> .",
            Triple(f"{R}Assassin's_Creed:_Brotherhood", "http://purl.org/dc/terms/subject",
                   f"{R}Category:Open_world_video_games", ObjectKind.IRI),
        ),
        (
            rf"<{R}Caf\u00E9> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://dbpedia.org/ontology/Restaurant> .",
            Triple(f"{R}Café", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
                   "http://dbpedia.org/ontology/Restaurant", ObjectKind.IRI),
        ),
        # blank nodes as subject and as object (labels may contain dots, not at the end)
        (
            "_:genid1 <http://www.w3.org/2002/07/owl#onProperty> _:b.2.x .",
            Triple("_:genid1", "http://www.w3.org/2002/07/owl#onProperty", "_:b.2.x", ObjectKind.BLANK),
        ),
        (
            f'_:node7 <{LABEL}> "anonymous"@en .',
            Triple("_:node7", LABEL, "anonymous", ObjectKind.LITERAL, "en"),
        ),
        # Windows line ending and surrounding whitespace
        (
            f'  <{R}A>\t<{LABEL}>\t"A"@en\t.\r\n',
            Triple(f"{R}A", LABEL, "A", ObjectKind.LITERAL, "en"),
        ),
    ],
)
def test_tricky_lines(line: str, expected: Triple) -> None:
    assert parse_line(line) == expected


@pytest.mark.parametrize("line", ["", "   \n", "# started 2016-06-16T17:52:53Z\n", "  # indented comment"])
def test_blank_and_comment_lines_are_no_statement(line: str) -> None:
    assert parse_line(line) is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (f'<{R}A> <{LABEL}> "no final dot"@en', "not an N-Triples statement"),
        (f'<{R}A> <{LABEL}> "unterminated@en .', "not an N-Triples statement"),
        (f'<{R}A B> <{LABEL}> "space in IRI"@en .', "not an N-Triples statement"),
        (f'<{R}A> "literal predicate" "x" .', "not an N-Triples statement"),
        (f'<{R}A> <{LABEL}> "x"@en . trailing garbage', "not an N-Triples statement"),
        (f'<{R}A> <{LABEL}> "bad \\q escape"@en .', "unknown escape \\q"),
        (f'<{R}A> <{LABEL}> "\\U00110000"@en .', "beyond Unicode"),
        (f'<{R}A> <{LABEL}> "lone \\uD800 surrogate"@en .', "surrogate"),
    ],
)
def test_malformed_lines_raise_value_error(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse_line(line)


def test_entity_id() -> None:
    assert entity_id(f"{R}Caf%C3%A9_Wha%3F") == "<dbpedia:Caf%C3%A9_Wha%3F>"
    assert entity_id(f"{R}Terminator_2:_Judgment_Day") == "<dbpedia:Terminator_2:_Judgment_Day>"
    assert entity_id("http://dbpedia.org/ontology/Company") is None
    assert entity_id(R) is None


# --- files ----------------------------------------------------------------------------------------


GOOD = [
    f'<{R}A> <{LABEL}> "A"@en .\n',
    f'<{R}A> <{COMMENT}> "An \\"a\\"."@en .\n',
    f'<{R}B> <{LABEL}> "B\\u00E9"@en .\n',
    f'<{R}B> <{COMMENT}> "B is b."@en .\n',
    f"<{R}B> <http://dbpedia.org/ontology/country> <{R}A> .\n",
    f'<{R}B> <http://dbpedia.org/ontology/populationTotal> "7"^^<{XSD}nonNegativeInteger> .\n',
]


def test_malformed_lines_are_counted_reported_and_skipped(tmp_path: Path) -> None:
    bad = [
        f'<{R}A> <{LABEL}> "no dot"@en\n',
        "this is not a triple\n",
        f'<{R}A> <{LABEL}> "bad \\q"@en .\n',
        f"<{R}A> <{LABEL}> <unterminated .\n",
        f'<{R}A> <{LABEL}> "\\uDC00"@en .\n',
        f'<{R}A> <{LABEL}> "two" "objects" .\n',
        "<> .\n",
    ]
    # valid lines before, between and after the malformed ones, with comments and blank lines
    lines = ["# started\n", GOOD[0], bad[0], bad[1], GOOD[1], "\n", bad[2], GOOD[2], bad[3], bad[4],
             GOOD[3], bad[5], GOOD[4], bad[6], GOOD[5], "# completed\n"]
    path = _write(tmp_path / "labels_en.ttl", "".join(lines))
    report = ParseReport()
    triples = list(read_triples(path, report))
    assert triples == [parse_line(line) for line in GOOD]
    file_report = report.files[str(path)]
    assert (file_report.triples, file_report.malformed) == (len(GOOD), len(bad))
    assert (report.triples, report.malformed) == (len(GOOD), len(bad))
    # only the first max_errors (5) are kept, as ``file:line: reason`` with 1-based line numbers
    bad_line_numbers = [number for number, line in enumerate(lines, 1) if line in bad]
    assert len(file_report.errors) == report.max_errors == 5
    for message, number in zip(file_report.errors, bad_line_numbers):
        assert message.startswith(f"{path}:{number}: ")
    assert file_report.errors[0] == f"{path}:3: not an N-Triples statement"
    assert file_report.errors[2] == f"{path}:7: unknown escape \\q"
    summary = report.summary_lines()
    assert summary[0] == f"{path}: {len(GOOD)} triples, {len(bad)} malformed lines"
    assert summary[1:] == file_report.errors


def test_max_errors_is_configurable(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.nt", "junk\n" * 10 + GOOD[0])
    report = ParseReport(max_errors=2)
    assert len(list(read_triples(path, report))) == 1
    assert report.malformed == 10
    assert report.files[str(path)].errors == [f"{path}:1: not an N-Triples statement", f"{path}:2: not an N-Triples statement"]


@pytest.mark.parametrize("name", ["dump.ttl", "dump.nt", "dump.ttl.bz2", "dump.nt.gz"])
def test_plain_bz2_and_gz_give_the_same_triples(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name, "# c\n" + "".join(GOOD) + "\n")
    assert list(read_triples(path)) == [parse_line(line) for line in GOOD]


def test_multistream_bz2_is_read_whole(tmp_path: Path) -> None:
    # DBpedia's and our synthetic dumps may be concatenated bz2 streams
    path = tmp_path / "labels_en.ttl.bz2"
    path.write_bytes(b"".join(bz2.compress(line.encode()) for line in GOOD))
    assert list(read_triples(path)) == [parse_line(line) for line in GOOD]


@pytest.mark.parametrize("name", ["empty.ttl", "empty.ttl.bz2", "empty.nt.gz"])
def test_empty_file(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / name, "")
    report = ParseReport()
    assert list(read_triples(path, report)) == []
    assert (report.triples, report.malformed) == (0, 0)


def test_only_comments_and_blank_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.ttl.bz2", "# started\n\n   \n# completed\n")
    report = ParseReport()
    assert list(read_triples(path, report)) == []
    assert (report.triples, report.malformed) == (0, 0)


def _big_text(n: int = 30_000) -> str:
    return "".join(f'<{R}E{i}> <{COMMENT}> "entity number {i} {i * 7919 % 10007}"@en .\n' for i in range(n))


@pytest.mark.parametrize("name", ["cut.ttl.bz2", "cut.ttl.gz"])
def test_truncated_compressed_file_is_a_clear_error(tmp_path: Path, name: str) -> None:
    whole = _write(tmp_path / ("whole-" + name), _big_text())
    path = tmp_path / name
    path.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(ElqueryError, match=rf"^{re.escape(str(path))}: truncated or corrupt file"):
        for _ in read_triples(path):
            pass


def test_corrupt_and_zero_byte_bz2_are_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.ttl.bz2"
    garbage.write_bytes(b"this is not bzip2 data at all\n" * 10)
    zero = tmp_path / "zero.ttl.bz2"
    zero.write_bytes(b"")
    for path in (garbage, zero):
        with pytest.raises(ElqueryError, match="truncated or corrupt"):
            list(read_triples(path))


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ElqueryError, match="no such file"):
        list(read_triples(tmp_path / "absent.ttl"))


def test_invalid_utf8_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "latin1.ttl"
    path.write_bytes(f'<{R}A> <{LABEL}> "caf'.encode() + b"\xe9" + b'"@en .\n' + GOOD[1].encode())
    triples = list(read_triples(path))
    assert [t.object for t in triples] == ["caf\ufffd", 'An "a".']


def test_dump_files_expands_directories_sorted(tmp_path: Path) -> None:
    for name in ["b.ttl.bz2", "a.nt", "c.ttl.gz", "README.md", "facc.tsv", "d.ttl"]:
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "sub.ttl").mkdir()
    single = tmp_path / "README.md"
    assert dump_files([tmp_path, single]) == [tmp_path / n for n in ["a.nt", "b.ttl.bz2", "c.ttl.gz", "d.ttl"]] + [single]
    with pytest.raises(ElqueryError, match="no such file or directory"):
        dump_files([tmp_path / "missing"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ElqueryError, match="no .ttl/.nt dump files"):
        dump_files([empty])


def test_spill_survives_escaped_surrogates(tmp_path: Path) -> None:
    """A surrogate pair escape becomes one character; a lone one is a malformed line, not a crash
    when the statement is written to a UTF-8 partition file."""
    path = _write(
        tmp_path / "labels_en.ttl",
        f'<{R}A> <{LABEL}> "smile \\uD83D\\uDE00"@en .\n<{R}A> <{COMMENT}> "lone \\uD83D here"@en .\n' + GOOD[1],
    )
    result = spill([path], tmp_path / "spill", 1)
    assert (result.report.triples, result.report.malformed, result.spilled) == (2, 1, 2)
    text = (tmp_path / "spill" / "part-0000.tsv").read_text(encoding="utf-8")
    assert "smile \U0001f600" in text


# --- the real sample ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def raw_sample_lines(dbpedia_sample: Path) -> dict[str, list[str]]:
    """The real dump files' lines, read with bz2 only."""
    lines = {}
    for path in sorted(dbpedia_sample.glob("*.bz2")):
        with bz2.open(path, "rt", encoding="utf-8") as handle:
            lines[path.name] = handle.read().split("\n")
    return lines


def test_real_sample_parses_without_malformed_lines(dbpedia_sample: Path, raw_sample_lines: dict[str, list[str]]) -> None:
    """Every statement line of every real dump file is a triple (the first 5000 of the two big
    link datasets); the counts match an independent line count."""
    limit = 5000
    for path in sorted(dbpedia_sample.glob("*.bz2")):
        statements = [line for line in raw_sample_lines[path.name] if line.strip() and not line.lstrip().startswith("#")]
        report = ParseReport()
        triples = list(itertools.islice(read_triples(path, report), limit))
        assert (len(triples), report.malformed) == (min(limit, len(statements)), 0), path.name
        assert [t.subject for t in triples[:50]] == [line.split(">", 1)[0][1:] for line in statements[:50]]


def test_real_tricky_lines(raw_sample_lines: dict[str, list[str]]) -> None:
    """Lines of the real sample with escaped quotes, \\n escapes, non-ASCII text, no space before
    the final dot, another language tag and a unit datatype."""
    raw = raw_sample_lines

    def line_with(name: str, *fragments: str) -> str:
        return next(line for line in raw[name] if all(f in line for f in fragments))

    normandy = parse_line(line_with("short_abstracts_en.ttl.bz2", "resource/Normandy>"))
    assert normandy is not None and normandy.lang == "en" and normandy.kind is ObjectKind.LITERAL
    assert '"northman"' in normandy.object and '\\"' not in normandy.object
    assert "nɔrməndi" in normandy.object

    lounge = parse_line(line_with("infobox_properties_en.ttl.bz2", "resource/British_Airways>", "property/lounge>"))
    assert lounge is not None and "\n* " in lounge.object and "\\n" not in lounge.object

    code = line_with("mappingbased_literals_en.ttl.bz2", "iataAirlineCode", '"BA".')
    assert parse_line(code) == Triple(f"{R}British_Airways", "http://dbpedia.org/ontology/iataAirlineCode", "BA",
                                      ObjectKind.LITERAL)

    latin = parse_line(line_with("mappingbased_literals_en.ttl.bz2", "@la"))
    assert latin is not None and latin.lang == "la" and latin.object == "Universitas Kentuckiensis"

    area = parse_line(line_with("specific_mappingbased_properties_en.ttl.bz2", "squareKilometre"))
    assert area is not None and area.datatype == "http://dbpedia.org/datatype/squareKilometre"
    assert float(area.object) > 0

    chinese = parse_line(line_with("page_links_en.ttl.bz2", "你好"))
    assert chinese is not None and chinese.kind is ObjectKind.IRI and "你好" in chinese.object
