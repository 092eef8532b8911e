"""Every statement a maintained RDF parser (pyoxigraph) accepts is read the same by elquery's line
parser, and survives the spill -> documents round trip unchanged; what elquery refuses by rule
(an IRI that would become an entity id no line-based file can hold) is counted as malformed."""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from elquery.indexing.entity_documents import count_predicates, document_texts, spill
from elquery.indexing.ntriples import ObjectKind, ParseReport, parse_line, read_triples
from python_documents_reference import field_text, python_build_documents, read_labels  # tests/indexing, on the path

RESOURCE = "http://dbpedia.org/resource/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
FORBIDDEN_IN_IRI = set(map(chr, range(0x21))) | set('<>"{}|^`\\') | {"\x85", "\u2028", "\u2029"}

# every Unicode class except surrogates, across planes
characters = st.characters(blacklist_categories=("Cs",))
iri_chars = characters.filter(lambda c: c not in FORBIDDEN_IN_IRI)


def escaped(char: str, how: int) -> str:
    """A character written raw, as \\uXXXX or as \\UXXXXXXXX."""
    if how == 1 and ord(char) <= 0xFFFF:
        return f"\\u{ord(char):04X}"
    if how == 2:
        return f"\\U{ord(char):08X}"
    return char


@st.composite
def iri_title(draw: st.DrawFn) -> tuple[str, str]:
    """(title as written in the file, title value)."""
    chars = draw(st.lists(iri_chars, min_size=1, max_size=12))
    written = "".join(escaped(c, draw(st.integers(0, 2))) for c in chars)
    return written, "".join(chars)


_SIMPLE = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


@st.composite
def literal(draw: st.DrawFn) -> tuple[str, str]:
    chars = draw(st.lists(characters, max_size=20))
    out = []
    for c in chars:
        how = draw(st.integers(0, 2))
        out.append(_SIMPLE[c] if c in _SIMPLE and how == 0 else escaped(c, how) if c not in '"\\\n\r' or how else _SIMPLE[c])
    return "".join(out), "".join(chars)


def accepted(line: str) -> pyoxigraph.Triple | None:
    """The statement as pyoxigraph reads it, or None if it refuses it."""
    try:
        [triple] = list(pyoxigraph.parse(line.encode("utf-8"), format=pyoxigraph.RdfFormat.N_TRIPLES))
    except SyntaxError:
        return None
    return triple


@st.composite
def statement(draw: st.DrawFn) -> tuple[str, str, str]:
    title_written, title = draw(iri_title())
    text_written, text = draw(literal())
    lang = draw(st.sampled_from(["", "@en", "@en-GB", "@de"]))
    line = f'<{RESOURCE}{title_written}> <{LABEL}> "{text_written}"{lang} .'
    return line, RESOURCE + title, text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(statement())
def test_line_parser_agrees_with_pyoxigraph(case: tuple[str, str, str]) -> None:
    line, subject, text = case
    reference = accepted(line)
    assume(reference is not None)  # pyoxigraph also checks IRIs against RFC 3987 (e.g. no U+FFF0)
    ours = parse_line(line)
    assert ours is not None
    assert (ours.subject, ours.predicate, ours.object) == (reference.subject.value, reference.predicate.value,
                                                           reference.object.value) == (subject, LABEL, text)
    assert ours.kind is ObjectKind.LITERAL
    assert (ours.lang or "").lower() == (reference.object.language or "")  # language tags ignore case


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(statement(), min_size=1, max_size=5))
@example([('<http://dbpedia.org/resource/0> <http://www.w3.org/2000/01/rdf-schema#label> "\ufeff" .',
           "http://dbpedia.org/resource/0", "\ufeff")])  # a leading U+FEFF, which pyjnius drops from a Java string
def test_statements_survive_the_spill_round_trip(tmp_path_factory: pytest.TempPathFactory,
                                                 cases: list[tuple[str, str, str]]) -> None:
    """Each subject gets a label (generated) and a comment: its document's names hold the
    generated label text exactly, whatever escapes and characters it holds (in the Python
    reference's values; in the names text the index receives, as that text's own line, its tabs
    and line ends as spaces)."""
    work = tmp_path_factory.mktemp("spill")
    dump = work / "dump_en.ttl"
    lines = []
    expected: dict[str, set[str]] = {}
    for line, subject, text in cases:
        assume(accepted(line) is not None)
        lines += [line, f'<{subject}> <{COMMENT}> "c" .'.replace(subject, line[1:line.index(">")], 1)]
        expected.setdefault(subject, set()).add(text)
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = spill([dump], work / "spill", 2)
    assert result.report.malformed == 0
    parts = sorted((work / "spill").glob("part-*.tsv"))
    predicates = frozenset(count_predicates(parts))
    documents = {d.entity: d for d in document_texts(parts, [result.labels_file], predicates)}
    reference = {d.entity: d for d in python_build_documents(parts, read_labels([result.labels_file]), predicates)}
    assert len(documents) == len(reference) == len(expected)
    for subject, texts in expected.items():
        entity = "<dbpedia:" + subject[len(RESOURCE):] + ">"
        assert texts <= set(reference[entity].names)
        assert documents[entity].names == field_text(reference[entity].names)
        assert {field_text([t]) for t in texts} <= set(documents[entity].names.split("\n"))


@pytest.mark.parametrize(("line", "reason"), [
    (f"<{RESOURCE}A\\u000AB> <{LABEL}> \"x\" .", "U+000A"),
    (f"<{RESOURCE}A\\u0009B> <{LABEL}> \"x\" .", "U+0009"),
    (f"<{RESOURCE}A\\u0020B> <{LABEL}> \"x\" .", "U+0020"),
    (f"<{RESOURCE}A\\u2028B> <{LABEL}> \"x\" .", "U+2028"),
    (f"<{RESOURCE}A\\u0085B> <{LABEL}> \"x\" .", "U+0085"),
    (f"<{RESOURCE}> <{LABEL}> \"x\" .", "empty title"),
])
def test_iris_no_entity_id_may_hold_are_malformed(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse_line(line)


@pytest.mark.parametrize("line", [
    f"<{RESOURCE}Nbsp\u00a0Title> <{LABEL}> \"x\" .",
    f"<{RESOURCE}Ideographic\u3000Space> <{LABEL}> \"x\" .",
    f"_:a..b <{LABEL}> \"x\" .",
])
def test_lines_pyoxigraph_accepts_are_accepted(line: str) -> None:
    [reference] = list(pyoxigraph.parse(line.encode(), format=pyoxigraph.RdfFormat.N_TRIPLES))
    ours = parse_line(line)
    assert ours is not None and ours.object == reference.object.value


def test_reader_conventions(tmp_path: Path) -> None:
    """CR-only line ends, a BOM, invalid UTF-8 in an IRI (malformed) and in a literal (U+FFFD)."""
    path = tmp_path / "odd_en.ttl"
    path.write_bytes(b"\xef\xbb\xbf" + f'<{RESOURCE}A> <{LABEL}> "a" .\r<{RESOURCE}B> <{LABEL}> "b" .\r'.encode()
                     + f"<{RESOURCE}C".encode() + b"\xff" + f'> <{LABEL}> "c" .\r\n'.encode()
                     + f'<{RESOURCE}D> <{LABEL}> "d'.encode() + b"\xff" + b'" .\n')
    report = ParseReport()
    triples = list(read_triples(path, report))
    assert [(t.subject[len(RESOURCE):], t.object) for t in triples] == [("A", "a"), ("B", "b"), ("D", "d\ufffd")]
    assert report.malformed == 1 and "not valid UTF-8" in report.summary_lines()[-1]


def test_a_ten_megabyte_line_is_reported_not_read_in_whole(tmp_path: Path) -> None:
    path = tmp_path / "long_en.ttl"
    path.write_text(f'<{RESOURCE}A> <{COMMENT}> "' + "x" * 10_000_000 + f'" .\n<{RESOURCE}B> <{LABEL}> "b" .\n')
    report = ParseReport()
    assert [t.object for t in read_triples(path, report)] == ["b"]
    assert report.malformed == 1 and "line longer than" in report.summary_lines()[-1]
