"""Readers: formats, bad input (one error naming file and line)."""

from pathlib import Path

import pytest

from elquery.evaluation import (EvaluationInputError, read_elq, read_jsonl, read_trec_qrels,
                        read_trec_run)


def write(tmp_path: Path, text: str | bytes, name: str = "f.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(reader, path: Path) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(EvaluationInputError) as info:
        reader(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_elq_reads_interpretations_and_bare_queries(tmp_path: Path) -> None:
    path = write(tmp_path, "q1\nq2\t0.5\t<a>\t<b>\nq2\t0.4\t<c>\nq3\t0.9\t<a>\nq3\nq4\t1\n"
                 "q5\t1\tm.1\tm.1\n")
    assert read_elq(path) == {
        "q1": frozenset(),
        "q2": frozenset({frozenset({"<a>", "<b>"}), frozenset({"<c>"})}),
        "q3": frozenset({frozenset({"<a>"})}),
        "q4": frozenset(),
        "q5": frozenset({frozenset({"m.1"})}),
    }


def test_elq_accepts_crlf_bom_blank_lines_and_trailing_tab(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeffq1\t1\t<a>\t\r\n\r\nq2\r\n".encode("utf-8"))
    assert read_elq(path) == {"q1": frozenset({frozenset({"<a>"})}), "q2": frozenset()}


def test_elq_repeated_interpretation_collapses_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A query's interpretations are a set: the same entity set again (in any order) counts once."""
    path = write(tmp_path, "q1\t1\t<a>\t<b>\nq2\nq1\t0.5\t<b>\t<a>\nq1\t0.2\t<c>\nq1\t0.1\t<b>\t<a>\t<a>\n")
    assert read_elq(path) == {"q1": frozenset({frozenset({"<a>", "<b>"}), frozenset({"<c>"})}),
                              "q2": frozenset()}
    assert capsys.readouterr().err == (f"warning: {path}: 2 repeated interpretations (the same "
                                       "entity set again for a query) count once\n")


@pytest.mark.parametrize("reader", [read_elq, read_trec_qrels, read_trec_run, read_jsonl])
@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_empty_file_is_an_error(tmp_path: Path, reader, text: str) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, text)
    assert error_of(reader, path) == f"{path}:1: empty file: no lines to read"


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, b"q1\t1\t<a>\nq2\t1\t<\xff>\n")
    assert error_of(read_elq, path).startswith(f"{path}:2: not valid UTF-8")


def test_trec_qrels(tmp_path: Path) -> None:
    path = write(tmp_path, "q1 0 d1 1\nq1\tQ0\td2\t0\nq2 0 d1 2\n")
    assert read_trec_qrels(path) == {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}


def test_trec_run(tmp_path: Path) -> None:
    path = write(tmp_path, "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 -1e3 tag\nq1 Q0 d3 3 -inf tag\n")
    assert read_trec_run(path) == {"q1": {"d1": 2.5, "d2": -1000.0, "d3": float("-inf")}}


def test_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path, '{"qid": "q1", "n": 1}\n\n{"qid": "q2"}\n')
    assert read_jsonl(path) == [{"qid": "q1", "n": 1}, {"qid": "q2"}]


@pytest.mark.parametrize("reader, text, line, words", [
    (read_elq, "q1\t1\t<a>\nq2\tx\t<b>\n", 2, "score 'x' is not a number"),
    (read_elq, "q1\t1\t\t<a>\n", 1, "empty field"),
    (read_elq, "q1 1 <a>\n", 1, "bad query id"),
    (read_elq, "q1\tnan\t<a>\n", 1, "is NaN"),
    (read_trec_qrels, "q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 fields"),
    (read_trec_qrels, "q1 0 d1 high\n", 1, "relevance 'high' is not an integer"),
    (read_trec_qrels, "q1 0 d1 1\nq1 0 d1 0\n", 2, "'d1' judged twice for query 'q1'"),
    (read_trec_run, "q1 Q0 d1 1 2.5\n", 1, "expected 6 fields"),
    (read_trec_run, "q1 Q0 d1 1 high tag\n", 1, "score 'high' is not a number"),
    (read_trec_run, "q1 Q0 d1 1 1_000 tag\n", 1, "score '1_000' is not a number"),
    (read_trec_run, "q1 Q0 d1 1 0x10 tag\n", 1, "score '0x10' is not a number"),
    (read_trec_run, "q1 Q0 d1 first 2.5 tag\n", 1, "rank 'first' is not an integer"),
    (read_trec_run, "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.5 t\n", 2, "'d1' retrieved twice for query 'q1'"),
    (read_jsonl, '{"a": 1}\n{"a": \n', 2, "invalid JSON"),
    (read_jsonl, '{"a": 1}\n[1, 2]\n', 2, "expected a JSON object, got list"),
])
def test_a_malformed_line_is_one_error_naming_file_and_line(  # type: ignore[no-untyped-def]
        tmp_path: Path, reader, text: str, line: int, words: str) -> None:
    path = write(tmp_path, text)
    message = error_of(reader, path)
    assert message.startswith(f"{path}:{line}: ") and words in message
