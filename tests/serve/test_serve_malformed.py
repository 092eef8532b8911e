"""Malformed requests (issue 31.4): every one is a 4xx in the service's one error shape,
``{"error": "<one line>"}`` (404 and 405 too), the worker logs no traceback, and the kept-alive
connection serves the next request. The scenarios are those the reliability pass found answered
500 (or FastAPI's ``{"detail": ...}``), plus their neighbours."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.indexing.demo import demo_knowledge_base
from elquery.serve.app import Artefacts, Limits, create_app

from served_http import Connection, Served, served  # noqa: F401  # served: the fixture (tests/serve is on the path)

NESTED = "[" * 100_000

# (method, path, raw JSON body or None, status, words of the error)
SCENARIOS = [
    ("POST", "/rank", '{"q": "obama", "k": NaN}', 422, "k must be a whole number, got nan"),
    ("POST", "/rank", '{"q": "obama", "k": Infinity}', 422, "k must be a whole number, got inf"),
    ("POST", "/rank", '{"q": "obama", "k": -Infinity}', 422, "k must be a whole number, got -inf"),
    ("POST", "/rank", '{"q": "obama", "k": 1e400}', 422, "k must be a whole number, got inf"),
    ("GET", "/rank?q=obama&k=1e400", None, 422, "k must be a whole number, got '1e400'"),
    ("POST", "/rank", '{"q": "obama", "k": true}', 422, "k must be a whole number, got True"),
    ("POST", "/rank", '{"q": "obama", "params": {"k1": 1}}', 422,
     "params: expected NAME=VALUE or a list of them, got {'k1': 1}"),
    ("POST", "/rank", '{"q": "obama", "params": [1]}', 422, "params: expected NAME=VALUE or a list of them, got [1]"),
    ("POST", "/rank", '{"q": "obama", "params": 1}', 422, "params: expected NAME=VALUE or a list of them, got 1"),
    ("POST", "/rank", '{"q": "obama", "model": ["bm25"]}', 422, "unknown model ['bm25']"),
    ("POST", "/link", '{"q": "obama", "method": ["mlm"]}', 422, "unknown method ['mlm']"),
    ("POST", "/link", '{"q": "klm \\ud800"}', 400, "q holds a lone surrogate (U+D800)"),
    ("POST", "/rank", '{"q": "klm \\ud800", "model": "bm25"}', 400, "q holds a lone surrogate (U+D800)"),
    ("POST", "/link", '{"queries": {"a\\udfff": "klm"}}', 400, "queries holds a lone surrogate (U+DFFF)"),
    ("POST", "/link", '{"q": "klm", "qid": "x\\udc80"}', 400, "qid holds a lone surrogate (U+DC80)"),
    ("POST", "/tag", '{"text": "klm", "lang": "\\ud800"}', 400, "lang holds a lone surrogate (U+D800)"),
    ("POST", "/link", NESTED, 400, "the JSON body is nested too deeply"),
    ("POST", "/link", '{"q": ' + NESTED, 400, "the JSON body is nested too deeply"),
    ("POST", "/link", '{"q": "klm", "qid": ["x"]}', 422, "qid: expected a string, got ['x']"),
    ("POST", "/rank", '{"q": "obama", "model": "mlm-elr", "links": [{"entity": ["x"], "score": 1}]}', 422,
     "linked entity ['x'] is not a DBpedia entity id"),
    ("POST", "/rank", '{"q": "obama", "model": "mlm-elr", "links": [{"entity": "Barack_Obama", "score": true}]}',
     422, "linked entity <dbpedia:Barack_Obama>: score must be positive, got True"),
    ("POST", "/tag", '{"text": "klm", "lang": [1]}', 422, "lang: expected a string, got [1]"),
    ("POST", "/link", '{"q": "obama", "commonness_threshold": 2}', 422,
     "commonness_threshold must be 0 <= commonness_threshold <= 1, got 2"),
    ("GET", "/link?q=obama&commonness_threshold=2", None, 422,
     "commonness_threshold must be 0 <= commonness_threshold <= 1, got 2"),
    ("GET", "/no/such/door", None, 404, "no such path: /no/such/door"),
    ("DELETE", "/link", None, 405, "method DELETE not allowed on /link (allowed: GET, POST)"),
    ("PUT", "/rank", '{}', 405, "method PUT not allowed on /rank (allowed: GET, POST)"),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-malformed")))
        index, surface_forms, tagme = demo_knowledge_base()
    return TestClient(create_app(Artefacts(index, surface_forms, tagme, demo_thresholds=True), Limits(max_batch=5)),
                      raise_server_exceptions=False)


@pytest.mark.parametrize(("method", "path", "body", "status", "words"), SCENARIOS,
                         ids=[f"{m} {p[:20]} {(b or '')[:40]}" for m, p, b, _, _ in SCENARIOS])
def test_a_malformed_request_is_a_4xx_in_the_error_shape(client: TestClient, method: str, path: str,
                                                         body: str | None, status: int, words: str) -> None:
    response = client.request(method, path, content=body, headers={"content-type": "application/json"} if body else {})
    assert response.status_code == status, response.text[:300]
    answer = response.json()
    assert list(answer) == ["error"] and words in answer["error"] and "\n" not in answer["error"]


def test_405_names_the_allowed_methods_in_its_header(client: TestClient) -> None:
    assert client.request("DELETE", "/link").headers["allow"] == "GET, POST"


def test_on_a_real_server_each_is_answered_and_the_connection_serves_the_next(served: Served) -> None:
    connection = Connection(served.port)
    try:
        valid = connection.request("GET", "/rank?q=obama+mother&k=3")
        assert valid.status == 200
        for method, path, body, status, words in SCENARIOS:
            answer = connection.request(method, path, None if body is None else body.encode())
            assert answer.status == status and words in answer.json()["error"], (method, path, answer)
            assert answer.headers.get("connection") != "close"
            assert connection.request("GET", "/rank?q=obama+mother&k=3").body == valid.body
    finally:
        connection.close()
    log = served.log()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]


def test_a_client_leaving_mid_body_is_no_error_worth_a_traceback(served: Served) -> None:
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            sock.sendall(b"POST /link HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100000\r\n\r\n{\"q\": \"new york")
            time.sleep(0.2)
    connection = Connection(served.port)
    try:  # the server is still there, and the request after the aborted ones is answered
        assert connection.request("GET", "/link?q=pizza").status == 200
    finally:
        connection.close()
    time.sleep(0.5)
    log = served.log()
    assert "Traceback" not in log and "ClientDisconnect" not in log, log[-3000:]


def test_the_statistics_count_doors_not_every_path_asked_for(client: TestClient) -> None:
    """A client asking for a million different paths must not grow the worker's memory: the
    requests are counted by route (``/entity/{entity}``), and every unknown path as one."""
    before = client.get("/stats").json()["requests"]
    for number in range(50):
        client.get(f"/nope/{number}")
        client.get(f"/entity/Thing_{number}")
    after = client.get("/stats").json()["requests"]
    assert set(after) - set(before) <= {"(no such path)", "/entity/{entity:path}", "/stats"}
    assert after["(no such path)"] - before.get("(no such path)", 0) == 50
    assert after["/entity/{entity:path}"] - before.get("/entity/{entity:path}", 0) == 50


def test_commonness_threshold_2_is_refused_by_the_cli_as_by_link(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    """The message /link gives (above) is the command line's: the registry validates both."""
    from elquery.cli import main as elquery

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path))
        assert elquery(["link", "obama", "--commonness-threshold", "2"]) == 2
    assert "commonness_threshold must be 0 <= commonness_threshold <= 1, got 2" in capsys.readouterr().err
