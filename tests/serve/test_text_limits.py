"""One length limit for every door that takes query text, with one message: the service's /link,
/rank, /tag, /spot and /nif answer 422 ``{"error": MESSAGE}``, ``elquery link`` and ``elquery rank``
(one query or a query file) exit 2 with ``elquery: error: MESSAGE`` as their one line on
stderr, before any output is written; a query at the limit is taken everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from elquery.cli import main as elquery
from elquery.indexing.demo import demo_knowledge_base
from elquery.serve.app import Artefacts, Limits, create_app

LIMIT = 1000
WORDS = "new york pizza manhattan"  # 4 normalized tokens
OVER = " ".join([WORDS] * 250) + " nyc"  # 1001 tokens
AT = " ".join([WORDS] * 250)  # 1000 tokens
MESSAGE = (f"query of 1001 tokens is longer than the limit of {LIMIT} "
           "(raise it with --max-query-tokens / max_query_tokens)")


def batch_message(qid: str) -> str:
    return MESSAGE.replace("query of", f"query {qid!r} of", 1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path, str]]:
    cache = str(tmp_path_factory.mktemp("elquery-cache-text-limits"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", cache)
        index, surface_forms, tagme = demo_knowledge_base()
    yield index, surface_forms, tagme, cache


@pytest.fixture(scope="module")
def client(demo: tuple[Path, Path, Path, str]) -> TestClient:
    index, surface_forms, tagme, _ = demo
    return TestClient(create_app(Artefacts(index, surface_forms, tagme, demo_thresholds=True), Limits()))


def nif_document(text: str) -> str:
    return ("@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .\n"
            "<http://example.org/doc1#char=0,1> a nif:Context, nif:String ;\n"
            f"    nif:isString {json.dumps(text)} .\n")


def requests(text: str) -> list[dict[str, Any]]:
    """One request of each door taking a single query (text), GET and POST alike."""
    return [
        {"method": "GET", "url": "/link", "params": {"q": text}},
        {"method": "POST", "url": "/link", "json": {"q": text, "method": "tagme"}},
        {"method": "GET", "url": "/rank", "params": {"q": text}},
        {"method": "POST", "url": "/rank", "json": {"q": text, "model": "sdm"}},
        {"method": "POST", "url": "/rank", "json": {"q": text, "model": "bm25"}},
        {"method": "GET", "url": "/tag", "params": {"text": text}},
        {"method": "POST", "url": "/spot", "data": {"text": text}},
        {"method": "GET", "url": "/spot", "params": {"text": text}},
        {"method": "POST", "url": "/nif", "content": nif_document(text).encode(),
         "headers": {"content-type": "text/turtle"}},
    ]


@pytest.mark.parametrize("index", range(len(requests(""))))
def test_every_door_refuses_a_query_over_the_limit_with_the_one_message(client: TestClient, index: int) -> None:
    answer = client.request(**requests(OVER)[index])
    assert (answer.status_code, answer.json()) == (422, {"error": MESSAGE})


@pytest.mark.parametrize("index", range(len(requests(""))))
def test_every_door_takes_a_query_at_the_limit(client: TestClient, index: int) -> None:
    answer = client.request(**requests(AT)[index])
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("url", ["/link", "/rank"])
def test_a_batch_names_the_query_over_the_limit(client: TestClient, url: str) -> None:
    answer = client.post(url, json={"queries": {"a": "pizza", "b": OVER}})
    assert (answer.status_code, answer.json()) == (422, {"error": batch_message("b")})


def test_the_service_limit_is_its_own(demo: tuple[Path, Path, Path, str]) -> None:
    index, surface_forms, tagme, _ = demo
    small = TestClient(create_app(Artefacts(index, surface_forms, tagme, demo_thresholds=True),
                                  Limits(max_query_tokens=3)))
    expected = {"error": "query of 4 tokens is longer than the limit of 3 "
                         "(raise it with --max-query-tokens / max_query_tokens)"}
    for request in requests(WORDS):
        answer = small.request(**request)
        assert (answer.status_code, answer.json()) == (422, expected), request


@pytest.fixture()
def cache(demo: tuple[Path, Path, Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELQUERY_CACHE", demo[3])


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.mark.parametrize("method", ["mlmcg", "tagme"])
def test_link_refuses_a_query_over_the_limit(cache: None, method: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.txt"
    assert elquery(["link", OVER, "--method", method, "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {MESSAGE}"
    assert not out.exists()
    assert elquery(["link", AT, "--method", method, "--out", str(out)]) == 0
    assert out.exists()


@pytest.mark.parametrize("method", ["mlmcg", "tagme"])
def test_link_refuses_a_query_file_holding_one_over_the_limit(cache: None, method: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = tmp_path / "queries.tsv", tmp_path / "run.txt"
    queries.write_text(f"a\tpizza\nb\t{OVER}\n", encoding="utf-8")
    assert elquery(["link", "--queries", str(queries), "--method", method, "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {batch_message('b')}"
    assert not out.exists() and list(tmp_path.iterdir()) == [queries]


@pytest.mark.parametrize("suffix", [".tsv", ".json"])
def test_rank_refuses_a_query_file_holding_one_over_the_limit(cache: None, demo: tuple[Path, Path, Path, str],
                                                             suffix: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = tmp_path / f"queries{suffix}", tmp_path / "run.txt"
    pairs = {"a": "pizza", "b": OVER}
    queries.write_text(json.dumps(pairs) if suffix == ".json" else "".join(f"{q}\t{t}\n" for q, t in pairs.items()),
                       encoding="utf-8")
    assert elquery(["rank", "--index", str(demo[0]), "--queries", str(queries), "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"elquery: error: {batch_message('b')}"
    assert list(tmp_path.iterdir()) == [queries]


def test_rank_takes_its_limit_from_max_query_tokens(cache: None, demo: tuple[Path, Path, Path, str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    queries, out = tmp_path / "queries.tsv", tmp_path / "run.txt"
    queries.write_text(f"a\t{OVER}\n", encoding="utf-8")
    assert elquery(["rank", "--index", str(demo[0]), "--queries", str(queries), "--out", str(out),
                    "--max-query-tokens", "1001"]) == 0
    assert out.read_text(encoding="utf-8").startswith("a Q0 ")
    capsys.readouterr()
    refused = "elquery: error: the maximum query length must be a whole number of tokens >= 1, got 0"
    assert elquery(["rank", "--index", str(demo[0]), "--queries", str(queries), "--out", str(out),
                    "--max-query-tokens", "0"]) == 2
    assert one_error_line(capsys) == refused
    assert elquery(["link", "--queries", str(queries), "--out", str(out), "--max-query-tokens", "0"]) == 2
    assert one_error_line(capsys) == refused


def test_serve_takes_its_limit_from_max_query_tokens(demo: tuple[Path, Path, Path, str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`elquery serve --max-query-tokens 4`: the workers' application refuses a 5-token query at
    /link, /rank and /spot with the message that names the option, and takes a 4-token one."""
    import uvicorn

    from elquery.serve.cli import app_from_environment

    index, surface_forms, tagme, _ = demo
    monkeypatch.setattr(uvicorn.Server, "run", lambda server: None)
    for name in ("ELQUERY_SERVE_MODEL", "ELQUERY_SERVE_DEMO", "ELQUERY_SERVE_PARAMS"):
        monkeypatch.delenv(name, raising=False)
    assert elquery(["serve", "--index", str(index), "--surface-forms", str(surface_forms), "--tagme", str(tagme),
                    "--max-query-tokens", "4", "--warm-up", "0", "--workers", "1"]) == 0
    served = TestClient(app_from_environment())
    over = MESSAGE.replace("1001", "5").replace(f"limit of {LIMIT}", "limit of 4")
    for request in ({"method": "GET", "url": "/link", "params": {"q": WORDS + " nyc"}},
                    {"method": "GET", "url": "/rank", "params": {"q": WORDS + " nyc"}},
                    {"method": "POST", "url": "/spot", "data": {"text": WORDS + " nyc"}}):
        answer = served.request(**request)
        assert (answer.status_code, answer.json()) == (422, {"error": over}), request
    assert served.get("/link", params={"q": WORDS}).status_code == 200


def test_serve_refuses_a_bad_max_query_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        elquery(["serve", "--max-query-tokens", "0"])
    assert exited.value.code == 2
    assert one_error_line(capsys).startswith("elquery serve: error: argument --max-query-tokens: must be a positive")


def test_serve_defaults_are_the_services_limits() -> None:
    """serve's argparse layer keeps its own copies of the defaults (it imports no service code)."""
    from elquery.serve.cli import TIME_LIMIT
    from elquery.serve.service import Limits

    assert (Limits().seconds, Limits().max_query_tokens) == (TIME_LIMIT, LIMIT)
