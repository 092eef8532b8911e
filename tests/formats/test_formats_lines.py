"""One line reader for every text format: the same bytes (a BOM, CRLF line ends, blank lines, a
qid with a space, a bad byte, a long line, standard input) give the same lines, qids and errors
whichever format reads them."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elquery.base import ElqueryError
from elquery.formats.elq import read_elq
from elquery.formats.jsonl import read_jsonl
from elquery.formats.lines import MAX_LINE_BYTES, text_lines
from elquery.formats.links import read_links
from elquery.formats.queries import read_queries
from elquery.formats.trec_qrels import read_trec_qrels
from elquery.formats.trec_run import read_trec_run

QIDS = ["q1", "Q-2", "trec-2010-100_1"]


def _links(path: Path | str) -> dict[str, Any]:
    return read_links(path, lambda entity: entity)


# Each format: the line of one query, and how to read the qids back in file order.
FORMATS: dict[str, tuple[Callable[[str], str], Callable[[Path | str], list[str]]]] = {
    "queries": (lambda qid: f"{qid}\tnew york pizza", lambda p: [q.qid for q in read_queries(p)]),
    "elq": (lambda qid: f"{qid}\t1\t<dbpedia:New_York_City>", lambda p: list(read_elq(p))),
    "trec_run": (lambda qid: f"{qid} Q0 <dbpedia:New_York_City> 1 2.5 tag", lambda p: list(read_trec_run(p))),
    "trec_qrels": (lambda qid: f"{qid} 0 <dbpedia:New_York_City> 2", lambda p: list(read_trec_qrels(p))),
    "jsonl": (lambda qid: json.dumps({"qid": qid}), lambda p: [r["qid"] for r in read_jsonl(p)]),
    "links_tsv": (lambda qid: f"{qid}\t<dbpedia:New_York_City>\t0.5", lambda p: list(_links(p))),
    "links_json": (lambda qid: json.dumps({"qid": qid, "links": [{"entity": "<dbpedia:A>", "score": 1}]}),
                   lambda p: list(_links(p))),
}


def _bytes(lines: list[str], bom: bool, end: str) -> bytes:
    """``lines`` with a blank and a whitespace-only line between them, each ended by ``end``."""
    text = ""
    for line in lines:
        text += line + end + end + " \t" + end
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("end", ["\n", "\r\n", "\r\r\n"])
def test_every_reader_reads_the_same_qids(tmp_path: Path, fmt: str, bom: bool, end: str) -> None:
    line, qids = FORMATS[fmt]
    path = tmp_path / "input.txt"
    path.write_bytes(_bytes([line(q) for q in QIDS], bom, end))
    assert qids(path) == QIDS


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_the_line_reader_drops_the_bom_and_one_line_end(tmp_path: Path, end: str) -> None:
    """Lines split at \\n only (U+2028, U+0085 and a lone \\r stay inside); of \\r\\r\\n the one \\r
    before \\n is the line end, the other is the line's."""
    path = tmp_path / "input.txt"
    bom = b"\xef\xbb\xbf"
    path.write_bytes(bom + "a\u2028b".encode() + end.encode() + "c\u0085d\re".encode() + end.encode()
                     + b"\r\r\n" + bom + b"last\r")
    assert list(text_lines(path, "file")) == [
        (1, "a\u2028b"), (2, "c\u0085d\re"), (3, "\r"), (4, "\ufefflast")]


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "jsonl"])
def test_a_qid_with_a_space_is_refused_at_its_line(tmp_path: Path, fmt: str) -> None:
    """In every format that has qids (JSON Lines as such has none: its records are the caller's)."""
    line, qids = FORMATS[fmt]
    path = tmp_path / "input.txt"
    path.write_bytes(_bytes([line("q1"), line("q 2")], True, "\r\n"))
    with pytest.raises(ElqueryError) as info:
        qids(path)
    assert str(info.value).startswith(f"{path}:4: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_invalid_byte_is_named_by_its_line(tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a file and from standard input alike (a TSV query file on standard input was decoded
    whole: "<stdin>: not UTF-8 text (... at byte 30)")."""
    line, qids = FORMATS[fmt]
    data = _bytes([line("q1"), line("q2")], False, "\n").replace(b"q2", b"q\xff2")
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    with pytest.raises(ElqueryError, match=rf"^{path}:4: not valid UTF-8 \(invalid start byte\)$"):
        qids(path)
    if fmt != "queries":
        return
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    with pytest.raises(ElqueryError, match=r"^<stdin>:4: not valid UTF-8 \(invalid start byte\)$"):
        qids("-")


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "jsonl"])
def test_a_line_longer_than_the_limit_is_refused(tmp_path: Path, fmt: str) -> None:
    """Runs and qrels too (they were read into memory whatever their length)."""
    line, qids = FORMATS[fmt]
    path = tmp_path / "input.txt"
    path.write_text(line("q1") + "\n" + line("q2") + "x" * MAX_LINE_BYTES + "\n", encoding="utf-8")
    with pytest.raises(ElqueryError, match=rf"^{path}:2: line longer than {MAX_LINE_BYTES} bytes$"):
        qids(path)


def test_json_lines_records_have_no_line_limit(tmp_path: Path) -> None:
    """A JSON Lines record is one query's whole output (all its candidates at c = 0, in an
    experiment's cache), so it is read whatever its length."""
    record = {"qid": "q1", "candidates": ["x" * 100] * (MAX_LINE_BYTES // 50)}
    path = tmp_path / "cache.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert path.stat().st_size > 2 * MAX_LINE_BYTES
    assert read_jsonl(path) == [record]


@pytest.mark.parametrize("fmt", FORMATS)
def test_standard_input_is_dash(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reader takes ``-`` as standard input (the evaluation readers opened a file named
    "-")."""
    line, qids = FORMATS[fmt]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_bytes([line(q) for q in QIDS], True, "\r\n"))))
    assert qids("-") == QIDS


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_missing_or_folder_input_is_one_line(tmp_path: Path, fmt: str) -> None:
    _, qids = FORMATS[fmt]
    for path, words in ((tmp_path / "missing.txt", "no such"), (tmp_path, "is a directory")):
        with pytest.raises(ElqueryError, match=rf"^{path}: {words}"):
            qids(path)
