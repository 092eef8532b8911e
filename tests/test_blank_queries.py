"""A blank query (empty or only whitespace) is a user error at every door, with the same message:
``elquery link ""`` (one line, exit status 2), a query file of ``link`` and ``rank`` (naming the
file, line and qid), the Python API (:class:`ElqueryError` from Linker and TagmeLinker) and the
service (422). It used to print ``q1`` and exit 0 on the command line, and 422 only in the
service. Blank lines of a TSV query file are not queries and are still skipped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.indexing.demo import demo_knowledge_base
from elquery.linking import Linker
from elquery.linking.tagme import TagmeLinker
from elquery.retrieval.queries import read_queries
from elquery.serve.app import Artefacts, create_app

BLANK = "the query is blank (empty or only whitespace)"
BLANKS = ["", " ", "\t  ", "\u3000\u00a0"]  # empty, spaces, a tab, ideographic and no-break spaces


def blank_in_batch(qid: str) -> str:
    return f"query {qid!r} is blank (empty or only whitespace)"


@pytest.fixture(scope="module")
def demo() -> tuple[Path, Path, Path]:
    return demo_knowledge_base()


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    return line


# --- the command line ------------------------------------------------------------------------

@pytest.mark.parametrize("method", [[], ["--method", "cmns"], ["--method", "tagme"]], ids=["mlmcg", "cmns", "tagme"])
@pytest.mark.parametrize("text", BLANKS, ids=["empty", "space", "tab", "unicode"])
def test_link_refuses_a_blank_query(text: str, method: list[str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.elq"
    assert elquery(["link", text, *method, "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {BLANK}"
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".tsv", ".json"])
@pytest.mark.parametrize("command", ["link", "rank"])
def test_a_blank_query_in_a_file_names_file_line_and_qid(command: str, suffix: str, demo: tuple[Path, Path, Path],
                                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / f"queries{suffix}"
    if suffix == ".tsv":
        queries.write_text("a\tnew york pizza\n\nb\t  \nc\trome\n", encoding="utf-8")
        where = f"{queries}:3"
    else:
        queries.write_text(json.dumps({"a": "new york pizza", "b": "  ", "c": "rome"}), encoding="utf-8")
        where = str(queries)
    out = tmp_path / "run"
    index = ["--index", str(demo[0])] if command == "rank" else []
    assert elquery([command, "--queries", str(queries), *index, "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {where}: {blank_in_batch('b')}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [queries.name]


def test_standard_input_follows_the_same_rule(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a\trome\nb\t\n")))
    assert elquery(["link", "--queries", "-"]) == 2
    assert one_error_line(capsys) == f"elquery: error: <stdin>:2: {blank_in_batch('b')}"


def test_blank_lines_are_not_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("\na\tnew york pizza\n   \n\t\nb\trome\n", encoding="utf-8")
    assert [(q.qid, q.text) for q in read_queries(queries)] == [("a", "new york pizza"), ("b", "rome")]
    assert elquery(["link", "--queries", str(queries)]) == 0
    assert {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()} == {"a", "b"}


# --- the Python API ----------------------------------------------------------------------------

@pytest.mark.parametrize("text", BLANKS, ids=["empty", "space", "tab", "unicode"])
def test_the_linkers_refuse_a_blank_query(text: str, demo: tuple[Path, Path, Path]) -> None:
    index, surface_forms, tagme = demo
    with Linker(index, surface_forms) as linker:
        for call in (linker.link, linker.rank, linker.result):
            with pytest.raises(ElqueryError) as refused:
                call(text)
            assert str(refused.value) == BLANK
        with pytest.raises(ElqueryError, match=re.escape(blank_in_batch("q9"))):
            linker.result(text, "q9")
        with pytest.raises(ElqueryError, match=re.escape(blank_in_batch("b"))):
            list(linker.link_many([("a", "new york pizza"), ("b", text)]))
    tagme_linker = TagmeLinker(tagme)
    for call in (tagme_linker.link, tagme_linker.rank, tagme_linker.annotate, tagme_linker.result):
        with pytest.raises(ElqueryError) as refused:
            call(text)
        assert str(refused.value) == BLANK


def test_a_query_of_punctuation_is_not_blank(demo: tuple[Path, Path, Path]) -> None:
    """Only whitespace is blank: a query without a token is linked, to nothing."""
    with Linker(demo[0], demo[1]) as linker:
        assert linker.link("?!") == []


# --- the service -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def client(demo: tuple[Path, Path, Path]) -> TestClient:
    index, surface_forms, tagme = demo
    return TestClient(create_app(Artefacts(index, surface_forms, tagme, demo_thresholds=True)))


@pytest.mark.parametrize(("method", "url", "params"), [
    ("GET", "/link", {"q": ""}),
    ("GET", "/link", {"q": "  "}),
    ("POST", "/link", {"q": "\t"}),
    ("GET", "/link", {"q": " ", "method": "tagme"}),
    ("GET", "/rank", {"q": ""}),
    ("GET", "/tag", {"text": " "}),
    ("GET", "/spot", {"text": ""}),
])
def test_the_service_answers_422_with_the_same_message(client: TestClient, method: str, url: str,
                                                       params: dict[str, str]) -> None:
    answer = client.request(method, url, params=params)
    assert (answer.status_code, answer.json()) == (422, {"error": BLANK})


def test_a_blank_query_in_a_batch_request_is_named(client: TestClient) -> None:
    answer = client.post("/link", json={"queries": {"a": "new york pizza", "b": " "}})
    assert (answer.status_code, answer.json()) == (422, {"error": blank_in_batch("b")})
    answer = client.post("/rank", json={"queries": ["rome", ""]})
    assert (answer.status_code, answer.json()) == (422, {"error": blank_in_batch("q2")})
