"""The spill phase in Java (org.elquery.index.DumpSpiller behind entity_documents.spill) against
the Python spill it replaced (python_spill_reference, reading with ntriples.read_triples): the same
partition files byte for byte, the same labels, the same report (counts, malformed lines, reasons,
line numbers), on the real DBpedia sample and on generated dumps full of tricky and broken lines,
with and without files read for their wiki page links only (the LTR fields)."""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.indexing.entity_documents import (
    LABELS_FILE,
    SpillResult,
    is_link_dataset,
    is_skipped_dataset,
    spill,
    title_text,
)
from elquery.kb.jvm import java_class, utf8_texts
from elquery.indexing.ntriples import MAX_LINE_CHARS, ParseReport, dump_files, read_triples
from python_documents_reference import read_labels  # pytest puts this folder on sys.path
from python_spill_reference import PythonSpill, python_spill
from conftest import write_compressed as _compress  # tests/conftest.py, on the path as pytest loads it

R = "http://dbpedia.org/resource/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
REDIRECTS = "http://dbpedia.org/ontology/wikiPageRedirects"
SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"
FOAF_NAME = "http://xmlns.com/foaf/0.1/name"
WIKI_LINK = "http://dbpedia.org/ontology/wikiPageWikiLink"


def _parts(directory: Path, partitions: int) -> list[bytes]:
    return [(directory / f"part-{p:04d}.tsv").read_bytes() for p in range(partitions)]


def _reports(report: ParseReport) -> dict[str, tuple[int, int, list[str]]]:
    return {name: (f.triples, f.malformed, f.errors) for name, f in report.files.items()}


def assert_same_spill(files: list[Path], tmp_path: Path, partitions: int,
                      links_only: tuple[Path, ...] = ()) -> tuple[SpillResult, PythonSpill]:
    java = spill(files, tmp_path / "java", partitions, links_only=links_only)
    python = python_spill(files, tmp_path / "python", partitions, links_only)
    assert _reports(java.report) == _reports(python.report)
    assert java.labels_file == tmp_path / "java" / LABELS_FILE
    assert read_labels([java.labels_file]) == python.labels
    assert java.spilled == python.spilled
    assert _parts(tmp_path / "java", partitions) == _parts(tmp_path / "python", partitions)
    assert sorted(p.name for p in (tmp_path / "java").iterdir()) == sorted(
        [LABELS_FILE, *(f"part-{p:04d}.tsv" for p in range(partitions))])
    return java, python


# --- the real sample ------------------------------------------------------------------------------


@pytest.mark.parametrize("partitions", [1, 4, 7])
def test_sample_dumps_spill_byte_for_byte(dbpedia_sample: Path, tmp_path: Path, partitions: int) -> None:
    files = [f for f in dump_files([dbpedia_sample]) if not is_skipped_dataset(f)]
    java, _ = assert_same_spill(files, tmp_path, partitions)
    assert java.spilled > 4000 and java.report.triples >= java.spilled


def test_sample_page_links_spill_as_links_only(dbpedia_sample: Path, tmp_path: Path) -> None:
    """page_links read for its links alone (W lines), beside the other files read whole."""
    links = [f for f in dump_files([dbpedia_sample]) if is_link_dataset(f)]
    files = [f for f in dump_files([dbpedia_sample]) if not is_skipped_dataset(f)] + links
    java, _ = assert_same_spill(files, tmp_path, 4, tuple(links))
    w_lines = [line for p in range(4) for line in (tmp_path / "java" / f"part-{p:04d}.tsv").read_text().splitlines()
               if line.split("\t")[1] == "W"]
    assert len(w_lines) == 13099 and all(line.split("\t")[2] == "" for line in w_lines)
    assert f"{R}British_Airways\tW\t\tHeathrow_Airport" in w_lines


# --- generated dumps --------------------------------------------------------------------------------

# Pieces of lines, valid and broken, as bytes: escapes of every kind, non-ASCII text, invalid
# UTF-8, Python-only whitespace, blank nodes whose label ends in dots, comments, percent-encoded
# titles (some labels equal their title, some do not: the spill keeps only those that differ).
_TITLES = ["A", "B_b", "Caf%C3%A9", "Caf%c3%a9", "%e2%82%ac", "%c3%bf%Cf", "Caf\u00e9", "Caf%E9", "%E2%82%ACx", "%zz%4", "%41%", "Category:Cats",
           "File:X.png", "Foo:Bar", "\U0001f600_x", "\\u00E9t\\u00E9", "\\U0001F600", "\\uD83D\\uDE00",
           "A%20B", "%C3%28", "%F0%9F%98", "\u00e9%C3%A9\u00e9"]
_BAD_TITLES = ["\\uD83D", "\\U00110000", "\\u0020", "\\u2028x", "\\u003E", "x\\q", "", "a b"]
_LITERALS = ["plain", "caf\u00e9", "\U0001f600", '\\"q\\"', "\\\\", "\\t\\n\\r\\b\\f\\'", "\\u00e9", "\\U0001F600",
             "\\uD83D\\uDE00", "tab\there", "back\\\\slash\\\\t", "A", "Caf\u00e9", "Cats", "X.png", "B b", "\u00e9\u00e9\u00e9",
             "\u20acx", "\u2028sep\u0085", ""]
_BAD_LITERALS = ["\\q", "\\u12", "\\uD800", "\\uDE00x", "\\U00110000", "\\", '"', "\\\U0001f600", "\\\u00e9"]
_RAW_BYTES = [b"\xe9", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf", b"\xff", b"\xf4\x90\x80\x80"]
_PREDICATES = [LABEL, LABEL, LABEL, COMMENT, COMMENT, REDIRECTS, SAME_AS, FOAF_NAME, "http://dbpedia.org/ontology/x",
               WIKI_LINK]
_SUFFIXES = ["", "", "@en", "@en", "@en", "@en-GB", "@en-gb-1", "^^<http://www.w3.org/2001/XMLSchema#string>", "@en-", "@1", "@",
             "^^<bad iri>", "^^xsd:int", "^^<\\u0041>"]
_TAILS = [" .", ".", " . # note", "\t.\t", " .x", " ", "", " . .", ". #", " .#x"]
_SPACES = [" ", " ", "\t", "  ", ""]
_EDGES = [""] * 12 + [" ", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\u00a0", "\u1680", "\u2028",
                      "\u2029", "\u202f", "\u3000", "\ufeff", "\u200b"]
_ENDS = [b"\n", b"\n", b"\n", b"\r\n", b"\r"]


def _iri(rng: random.Random) -> bytes:
    """``<...>``: mostly DBpedia resources, some other IRIs, some refused ones, a few with bytes
    that are not UTF-8."""
    roll = rng.random()
    if roll < 0.06:
        text = R + rng.choice(_BAD_TITLES)
    elif roll < 0.12:
        text = rng.choice(["http://example.org/x", "http://dbpedia.org/ontology/Thing"])
    else:
        text = R + "".join(rng.choice(_TITLES) for _ in range(rng.randint(1, 3)))
    raw = rng.choice(_RAW_BYTES) if rng.random() < 0.02 else b""
    return b"<" + text.encode() + raw + b">"


def _blank(rng: random.Random) -> bytes:
    return b"_:" + rng.choice([b"b1", b"b.2.x", b"a.", b".a", b"a..", b"a.#c", b"x#y", b"q", b"\xc3\xa9"])


def _literal(rng: random.Random, subject: bytes) -> bytes:
    iri = subject[1:-1].decode("utf-8", "replace")
    if rng.random() < 0.15 and iri.startswith(R) and "\\" not in iri:  # a label that is the title
        return ('"' + title_text(iri).replace("\\", "\\\\").replace('"', '\\"') + '"').encode()
    pieces: list[bytes] = []
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.05:
            pieces.append(rng.choice(_BAD_LITERALS).encode())
        elif roll < 0.1:
            pieces.append(rng.choice(_RAW_BYTES))
        else:
            pieces.append(rng.choice(_LITERALS).encode())
    return b'"' + b"".join(pieces) + b'"'


def _line(rng: random.Random) -> bytes:
    if rng.random() < 0.03:
        return rng.choice([b"", b"# a comment", b"   ", b"  # indented", b"not a triple", b"<x> <y>"])
    subject = _iri(rng) if rng.random() < 0.92 else _blank(rng)
    predicate = _iri(rng) if rng.random() < 0.05 else f"<{rng.choice(_PREDICATES)}>".encode()
    kind = rng.random()
    if kind < 0.55:
        obj = _literal(rng, subject) + rng.choice(_SUFFIXES).encode()
    elif kind < 0.93:
        obj = _iri(rng)
    else:
        obj = _blank(rng)
    tail = rng.choice(_TAILS) if rng.random() < 0.15 else " ."
    return b"".join([rng.choice(_EDGES).encode(), subject, rng.choice(_SPACES).encode(), predicate,
                     rng.choice(_SPACES).encode(), obj, tail.encode(), rng.choice(_EDGES).encode()])


def generated_dump(seed: int, lines: int) -> bytes:
    rng = random.Random(seed)
    out = [b"\xef\xbb\xbf"] if seed % 2 else []
    for _ in range(lines):
        out += [_line(rng), rng.choice(_ENDS)]
    if seed % 3 == 0:
        out.append(_line(rng))  # a last line without a line end
    return b"".join(out)


@pytest.mark.parametrize("seed", range(6))
def test_generated_dumps_spill_byte_for_byte(tmp_path: Path, seed: int) -> None:
    files = [
        _compress(tmp_path / f"d{seed}_{k}{suffix}", generated_dump(seed * 10 + k, 4000))
        for k, suffix in enumerate([".ttl", ".ttl.bz2", ".nt.gz"])
    ]
    java, python = assert_same_spill(files, tmp_path, 5)
    # the dumps do hold what they are meant to test
    assert java.report.malformed > 100 and java.report.triples > 3000 and len(python.labels) > 100


@pytest.mark.parametrize("seed", range(3))
def test_generated_dumps_spill_links_only_byte_for_byte(tmp_path: Path, seed: int) -> None:
    files = [_compress(tmp_path / f"l{seed}_{k}.ttl", generated_dump(seed * 10 + k, 4000)) for k in range(2)]
    java, python = assert_same_spill(files, tmp_path, 3, (files[1],))
    kinds = [line.split(b"\t")[1] for part in _parts(tmp_path / "java", 3) for line in part.splitlines()]
    assert kinds.count(b"W") > 50 and kinds.count(b"L") > 500


def test_generated_dumps_hold_every_reason(tmp_path: Path) -> None:
    """All malformed lines and their reasons (not only the first five) agree: each line on its
    own file would be slow, so the lines are compared one by one through the Java parser's report
    with max_errors raised."""
    path = _compress(tmp_path / "all.ttl", generated_dump(99, 6000))
    python = ParseReport(max_errors=10**6)
    list(read_triples(path, python))
    spiller = java_class("org.elquery.index.DumpSpiller")(str(tmp_path / "java"), 3)
    spiller.begin(str(path), 10**6)
    data = path.read_bytes()
    spiller.feed(data, len(data))
    triples, malformed, *errors = utf8_texts(spiller.end())
    spiller.close()
    expected = python.files[str(path)]
    assert (int(triples), int(malformed), errors) == (expected.triples, expected.malformed, expected.errors)
    assert {_kind_of_reason(e.split(": ", 1)[1]) for e in errors} == {
        "not an N-Triples statement", "unknown escape", "escape \\U is beyond Unicode",
        "unpaired UTF-16 surrogate escape", "IRI holds U+, which no entity id may hold",
        "IRI is not valid UTF-8", "DBpedia resource IRI with an empty title"}


def _kind_of_reason(reason: str) -> str:
    if reason.startswith("unknown escape"):
        return "unknown escape"
    return re.sub(r"U\+[0-9A-F]{4,6}", "U+", re.sub(r"\\U[0-9A-Fa-f]{8}", r"\\U", reason))


@pytest.mark.parametrize("seed", range(3))
def test_pieces_of_any_size_give_the_same_spill(tmp_path: Path, seed: int) -> None:
    """Line ends (CR LF split between two pieces), the byte order mark and UTF-8 sequences cut
    anywhere: the spill does not depend on where the decompressed bytes are cut."""
    data = generated_dump(seed * 2 + 1, 1500)
    path = _compress(tmp_path / "cut.ttl", data)
    expected = python_spill([path], tmp_path / "python", 3)
    rng = random.Random(seed)
    spiller = java_class("org.elquery.index.DumpSpiller")(str(tmp_path / "java"), 3)
    spiller.begin(str(path), 5)
    position = 0
    while position < len(data):
        size = rng.choice([1, 1, 2, 3, 5, 64, 4096])
        spiller.feed(data[position:position + size], len(data[position:position + size]))
        position += size
    triples, malformed, *errors = utf8_texts(spiller.end())
    spiller.close()
    file_report = expected.report.files[str(path)]
    assert (int(triples), int(malformed), errors) == (file_report.triples, file_report.malformed, file_report.errors)
    assert _parts(tmp_path / "java", 3) == _parts(tmp_path / "python", 3)


def test_long_lines_are_malformed_at_the_same_length(tmp_path: Path) -> None:
    """A line is too long when it holds more than MAX_LINE_CHARS characters with its line end
    (characters, not bytes: a line of two-byte characters may have twice as many bytes)."""
    body = f'<{R}Long> <{COMMENT}> "'.encode()
    tail = b'"@en .'
    lines = []
    for total in (MAX_LINE_CHARS - 1, MAX_LINE_CHARS, MAX_LINE_CHARS + 1, 3 * MAX_LINE_CHARS):
        filler = total - 1 - len(body) - len(tail)  # total characters, with the line end
        lines += [body + b"x" * filler + tail, body + "\u00e9".encode() * filler + tail,
                  f'<{R}Short> <{COMMENT}> "after"@en .'.encode()]
    last = body + b"y" * (MAX_LINE_CHARS - len(body) - len(tail)) + tail  # no line end: fits
    data = b"\n".join(lines) + b"\r\n" + last
    files = [_compress(tmp_path / "long.ttl", data), _compress(tmp_path / "long.ttl.bz2", data)]
    java, _ = assert_same_spill(files, tmp_path, 2)
    assert java.report.files[str(files[0])].errors == [
        f"{files[0]}:{n}: line longer than {MAX_LINE_CHARS} characters" for n in (7, 8, 10, 11)]
    assert (java.report.malformed, java.report.triples) == (8, 18)


# --- files that cannot be read ------------------------------------------------------------------------


def _big_text(n: int = 30_000) -> bytes:
    return "".join(f'<{R}E{i}> <{COMMENT}> "entity number {i}"@en .\n' for i in range(n)).encode()


def _python_error(path: Path) -> str:
    with pytest.raises(ElqueryError) as python:
        python_spill([path], path.parent / "python", 2)
    return str(python.value)


@pytest.mark.parametrize("name", ["cut.ttl.bz2", "cut.ttl.gz"])
def test_truncated_files_fail_as_before(tmp_path: Path, name: str) -> None:
    whole = _compress(tmp_path / ("whole-" + name), _big_text())
    path = tmp_path / name
    path.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    expected = _python_error(path)
    assert expected.startswith(f"{path}: truncated or corrupt file (")
    with pytest.raises(ElqueryError, match=f"^{re.escape(expected)}$"):
        spill([path], tmp_path / "java", 2)


def test_corrupt_zero_byte_and_missing_files_fail_as_before(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.ttl.bz2"
    garbage.write_bytes(b"this is not bzip2 data at all\n" * 10)
    zero = tmp_path / "zero.ttl.bz2"
    zero.write_bytes(b"")
    bad_gzip = tmp_path / "bad.ttl.gz"
    bad_gzip.write_bytes(gzip.compress(_big_text(10)) + b"trailing garbage")
    for path in (garbage, zero, bad_gzip, tmp_path / "absent.ttl"):
        expected = _python_error(path)
        with pytest.raises(ElqueryError, match=f"^{re.escape(expected)}$"):
            spill([path], tmp_path / "java", 2)


def test_empty_files_spill_nothing(tmp_path: Path) -> None:
    files = [_compress(tmp_path / "empty.ttl.gz", b""), _compress(tmp_path / "empty.ttl", b""),
             _compress(tmp_path / "bom.ttl", b"\xef\xbb\xbf"), _compress(tmp_path / "empty2.ttl.bz2", b"")]
    java, _ = assert_same_spill(files, tmp_path, 2)
    assert java.spilled == 0 and java.report.triples == 0 and len(java.report.files) == 4
