"""Hostile query files (issue 31.5): a JSON query file nested 100,000 deep and a query or qid
holding a lone surrogate (``"\\ud800"``, a JSON escape that is not Unicode text) are one line and
exit status 2 in every command that reads query files, as in the reader they share
(:func:`elquery.formats.queries.read_queries`); they were a RecursionError or UnicodeEncodeError
traceback, exit 1. And on arbitrary bytes the reader gives queries or one line, never a crash."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.formats.lines import is_qid
from elquery.formats.queries import read_queries
from elquery.indexing.demo import demo_knowledge_base

SURROGATE = "holds a lone surrogate (U+D800), which is not Unicode text"
HOSTILE = [  # (file name, content, the error after "elquery: error: FILE")
    ("nested.json", "[" * 100_000, ": invalid JSON (nested too deeply)"),
    ("nested-object.json", '{"q1": ' + "[" * 100_000, ": invalid JSON (nested too deeply)"),
    ("nested-closed.json", "[" * 50_000 + "]" * 50_000, ": invalid JSON (nested too deeply)"),
    ("surrogate.json", '{"q1": "klm \\ud800"}', f": query 'q1' {SURROGATE}"),
    ("surrogate-qid.json", '{"q\\ud800": "klm"}', f": query 'q\\ud800': query id 'q\\ud800' {SURROGATE}"),
    ("late-surrogate.json", '{"q1": "rome", "q2": "\\ud800 pizza"}', f": query 'q2' {SURROGATE}"),
]


@pytest.fixture(scope="module")
def demo() -> tuple[Path, Path, Path]:
    return demo_knowledge_base()


@pytest.mark.parametrize(("name", "content", "error"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_the_reader_refuses_in_one_line(name: str, content: str, error: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="ascii")
    with pytest.raises(ElqueryError) as refused:
        read_queries(path)
    assert str(refused.value) == f"{path}{error}"


@pytest.mark.parametrize(("name", "content", "error"), HOSTILE, ids=[h[0] for h in HOSTILE])
@pytest.mark.parametrize("command", ["link", "link-tagme", "rank", "rank-sdm"])
def test_every_command_refuses_in_one_line_exit_2(command: str, name: str, content: str, error: str,
                                                  demo: tuple[Path, Path, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="ascii")
    out = tmp_path / "out"
    argv = {"link": ["link"], "link-tagme": ["link", "--method", "tagme"],
            "rank": ["rank", "--index", str(demo[0])],
            "rank-sdm": ["rank", "--index", str(demo[0]), "--model", "sdm"]}[command]
    assert elquery([*argv, "--queries", str(path), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"elquery: error: {path}{error}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_standard_input_is_read_by_the_same_rules(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for content, error in (('{"q1": "klm \\ud800"}', f"query 'q1' {SURROGATE}"),
                           ('{"q1": ' + "[" * 100_000, "invalid JSON (nested too deeply)")):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(content.encode())))
        assert elquery(["link", "--queries", "-"]) == 2
        assert capsys.readouterr().err == f"elquery: error: <stdin>: {error}\n"


def test_the_linker_and_elquery_link_refuse_a_lone_surrogate(demo: tuple[Path, Path, Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.linking import Linker

    with Linker(demo[0], demo[1]) as linker:
        with pytest.raises(ElqueryError, match=r"the query holds a lone surrogate \(U\+DC00\)"):
            linker.link("klm \udc00")
    assert elquery(["link", "klm \udc00"]) == 2
    assert capsys.readouterr().err == "elquery: error: the query holds a lone surrogate (U+DC00), which is not Unicode text\n"


# --- arbitrary bytes ---------------------------------------------------------------------------

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                           max_leaves=12)
TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=30)  # lone surrogates too


@st.composite
def query_file_bytes(draw: st.DrawFn) -> bytes:
    """Bytes a query file may hold: random bytes, JSON of any shape (surrogate escapes, NaN,
    deep nesting), TSV-like lines of any characters, each perhaps cut short or behind a BOM."""
    kind = draw(st.sampled_from(["bytes", "json", "json-object", "tsv", "nested"]))
    if kind == "bytes":
        data = draw(st.binary(max_size=200))
    elif kind == "json":
        data = json.dumps(draw(JSON_VALUES)).encode()
    elif kind == "json-object":
        data = json.dumps(draw(st.dictionaries(TEXT, TEXT | JSON_VALUES, max_size=5))).encode()
    elif kind == "tsv":
        lines = draw(st.lists(st.tuples(TEXT, st.sampled_from(["\t", " ", ""]), TEXT), max_size=5))
        data = "\n".join(q + sep + t for q, sep, t in lines).encode("utf-8", "surrogatepass")
    else:
        depth = draw(st.integers(1, 200_000))
        data = (draw(st.sampled_from(["", '{"a": '])) + draw(st.sampled_from(["[", '{"x":'])) * depth).encode()
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=query_file_bytes(), suffix=st.sampled_from([".json", ".tsv", "-"]))
def test_any_bytes_give_queries_or_one_line(data: bytes, suffix: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if suffix == "-":
        path = "-"
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    else:
        path = str(tmp_path / f"queries{suffix}")
        Path(path).write_bytes(data)
    try:
        queries = read_queries(path)
    except ElqueryError as refused:
        message = str(refused)
        assert message and "\n" not in message and message.encode("utf-8")  # one line, writable as UTF-8
        return
    assert queries and len({q.qid for q in queries}) == len(queries)
    for query in queries:
        assert is_qid(query.qid) and query.text.strip() == query.text != ""
        query.qid.encode("utf-8"), query.text.encode("utf-8")  # no lone surrogate: writable as UTF-8


def test_the_searcher_refuses_a_lone_surrogate_and_ranks_a_blank_query_to_nothing(demo: tuple[Path, Path, Path]) -> None:
    """It raised UnicodeEncodeError ('utf-16', on the way to Java)."""
    from elquery.retrieval import Searcher, mlm
    from elquery.retrieval.scoring import LinkedQuery

    with Searcher(demo[0]) as searcher:
        for query in ("klm \ud800", LinkedQuery("klm \ud800", ())):
            with pytest.raises(ElqueryError) as refused:
                searcher.rank(query, mlm(), k=3)
            assert str(refused.value) == f"the query {SURROGATE}"
        assert searcher.rank("  ", mlm(), k=3) == []
