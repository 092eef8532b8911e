"""`elquery mcp` and `/mcp` of `elquery serve`: the tools called with the MCP client library over
stdio (`elquery mcp` spawned as a subprocess) and over streamable HTTP (the /mcp endpoint of the
service's application served by uvicorn on a loopback port, and `elquery mcp --transport http`),
on the demo knowledge base. Every answer equals the service's (/link, /rank, /entity, /stats) or
the command's (`elquery surface-forms lookup`, `elquery evaluate ... --format json`) for the same
input, and every refused call is a tool error carrying the service's one-line message."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters

from elquery.cli import main as elquery
from conftest import data_root, require_data  # tests/conftest.py, on the path as pytest loads it
from elquery.serve.app import Artefacts, Limits, create_app

Answers = dict[str, Any]
TOOLS = {"link", "rank", "entity", "surface_form", "artefacts", "evaluate"}
QUERIES = {"a": "new york pizza manhattan", "b": "the music man", "c": "Ｍａｎｈａｔｔａｎ, NYC!", "d": "obama mother"}
LONG = " ".join(["manhattan"] * 1001)
"""One token over the service's default query limit (1,000 tokens)."""
LINKS = {f"link {qid} {method}": ("link", {"q": text, "qid": qid, "method": method})
         for qid, text in QUERIES.items() for method in ("mlmcg", "cmns", "tagme")}
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    **LINKS,
    "link batch": ("link", {"queries": QUERIES, "method": "mlmcg", "gif_threshold": 5, "commonness_threshold": 0.2}),
    "link list top": ("link", {"queries": list(QUERIES.values()), "top_ranked": True}),
    "link tagme rho": ("link", {"q": QUERIES["a"], "method": "tagme", "rho_na": 0.05}),
    "rank mlm": ("rank", {"q": "obama mother", "k": 5}),
    "rank batch bm25": ("rank", {"queries": QUERIES, "model": "bm25", "k": 3, "params": ["k1=0.9", "b=0.5"]}),
    "entity Manhattan": ("entity", {"entity": "Manhattan"}),
    "entity Obama uri": ("entity", {"entity": "http://dbpedia.org/resource/Barack_Obama"}),
    "surface_form nyc": ("surface_form", {"text": "NYC"}),
    "surface_form manhattan 1": ("surface_form", {"text": "Manhattan", "limit": 1}),
    "artefacts": ("artefacts", {}),
}
BAD: dict[str, tuple[str, dict[str, Any], str, dict[str, Any]]] = {
    # label: tool, arguments, and the same request to the service (path, JSON body)
    "threshold out of range": ("link", {"q": "x", "commonness_threshold": 2}, "/link", {"q": "x", "commonness_threshold": 2}),
    "not a number": ("link", {"q": "x", "gif_threshold": "many"}, "/link", {"q": "x", "gif_threshold": "many"}),
    "parameter of another method": ("link", {"q": "x", "rho_na": 0.1}, "/link", {"q": "x", "rho_na": 0.1}),
    "unknown method": ("link", {"q": "x", "method": "magic"}, "/link", {"q": "x", "method": "magic"}),
    "blank query": ("link", {"q": "  "}, "/link", {"q": "  "}),
    "blank query of a batch": ("link", {"queries": {"q1": "x", "q2": " "}}, "/link", {"queries": {"q1": "x", "q2": " "}}),
    "query not a string": ("link", {"q": 5}, "/link", {"q": 5}),
    "no query": ("link", {"method": "cmns"}, "/link", {"method": "cmns"}),
    "too long": ("link", {"q": LONG}, "/link", {"q": LONG}),
    "batch over the limit": ("link", {"queries": ["x"] * 1001}, "/link", {"queries": ["x"] * 1001}),
    "k zero": ("rank", {"q": "x", "k": 0}, "/rank", {"q": "x", "k": 0}),
    "k too large": ("rank", {"q": "x", "k": 1001}, "/rank", {"q": "x", "k": 1001}),
    "unknown model": ("rank", {"q": "x", "model": "magic"}, "/rank", {"q": "x", "model": "magic"}),
    "bad model parameter": ("rank", {"q": "x", "params": "k1=-1", "model": "bm25"}, "/rank",
                            {"q": "x", "params": "k1=-1", "model": "bm25"}),
    "links for a model without": ("rank", {"q": "x", "links": []}, "/rank", {"q": "x", "links": []}),
}


# --- fixtures: the demo KB, the service, and the answers over each transport --------------------

@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = str(tmp_path_factory.mktemp("elquery-cache-mcp"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", folder)
        from elquery.indexing.demo import demo_knowledge_base

        demo_knowledge_base()
        yield folder


@pytest.fixture(scope="module")
def app(cache: str) -> Any:
    """The service's application over the demo KB, as `elquery serve` serves it."""
    from elquery.indexing.demo import demo_knowledge_base

    index, surface_forms, tagme = demo_knowledge_base()
    return create_app(Artefacts(index, surface_forms, tagme, demo_thresholds=True), Limits())


@pytest.fixture(scope="module")
def service(app: Any) -> TestClient:
    return TestClient(app)


def call_all(server: Any, extra: dict[str, tuple[str, dict[str, Any]]] | None = None) -> Answers:
    """Every call of :data:`CALLS` and :data:`BAD` (and ``extra``) on one connection to
    ``server``: the structured answer, or ``("error", text)``; and the tools listed."""
    calls = {**CALLS, **{label: (tool, args) for label, (tool, args, _, _) in BAD.items()}, **(extra or {})}

    async def run() -> Answers:
        answers: Answers = {}
        async with Client(server, read_timeout_seconds=120) as client:
            answers["tools"] = (await client.list_tools()).tools
            for label, (tool, arguments) in calls.items():
                result = await client.call_tool(tool, arguments)
                answers[label] = ("error", result.content[0].text) if result.is_error else result.structured_content
        return answers
    return asyncio.run(run())


@pytest.fixture(scope="module")
def over_stdio(cache: str, evaluation_calls: dict[str, tuple[str, dict[str, Any]]]) -> Answers:
    """The answers of `elquery mcp` (stdio, the demo KB) spawned by the client."""
    env = {**os.environ, "ELQUERY_CACHE": cache}
    return call_all(StdioServerParameters(command=sys.executable, args=["-m", "elquery", "mcp"], env=env),
                    evaluation_calls)


@pytest.fixture(scope="module")
def served(app: Any) -> Iterator[str]:
    """The service's application served by uvicorn on a free loopback port: its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(30)


@pytest.fixture(scope="module")
def over_http(served: str, evaluation_calls: dict[str, tuple[str, dict[str, Any]]]) -> Answers:
    """The answers of /mcp of the served application (streamable HTTP)."""
    return call_all(f"{served}/mcp", evaluation_calls)


@pytest.fixture(params=["stdio", "http"])
def answers(request: pytest.FixtureRequest) -> Answers:
    return request.getfixturevalue("over_stdio" if request.param == "stdio" else "over_http")


# --- evaluation inputs: real qrels, runs in their real formats -----------------------------------

@pytest.fixture(scope="module")
def evaluation_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """ERD-dev's ELQ qrels and a run of every other of its lines plus an unjudged query; the
    TREC qrels of the same queries (qrels-er) and a run ranking each query's judged entities and
    one unjudged entity, a query missing. Empty without the real data (their tests skip)."""
    elq_data = data_root() / "elq"
    if not (elq_data / "erd-dev").is_dir():
        return {}
    root = tmp_path_factory.mktemp("mcp-evaluate")
    elq_qrels = elq_data / "erd-dev" / "qrels-elq.txt"
    lines = elq_qrels.read_text(encoding="utf-8").splitlines()
    (root / "run.elq").write_text("\n".join(lines[::2] + ["unjudged-query\t1\t<dbpedia:Manhattan>"]) + "\n",
                                  encoding="utf-8")
    er_qrels = elq_data / "erd-dev" / "qrels-er.txt"
    judged: dict[str, list[str]] = {}
    for line in er_qrels.read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, _, entity, _ = line.split()
            judged.setdefault(qid, []).append(entity)
    run = []
    for qid, entities in list(judged.items())[1:]:
        ranked = ["<dbpedia:Manhattan>", *entities] if len(entities) % 2 else [*entities, "<dbpedia:Manhattan>"]
        run += [f"{qid} Q0 {entity} {rank} {10.0 - rank} mcp" for rank, entity in enumerate(ranked, 1)]
    (root / "run.trec").write_text("\n".join(run) + "\n", encoding="utf-8")
    (root / "bad.trec").write_text("q1 Q0 <dbpedia:A> 1 2.5 mcp\nq1 Q0 <dbpedia:B> two 1.5 mcp\n", encoding="utf-8")
    return {"elq_qrels": elq_qrels, "elq_run": root / "run.elq", "er_qrels": er_qrels, "er_run": root / "run.trec",
            "bad_run": root / "bad.trec"}


@pytest.fixture(scope="module")
def evaluation_calls(evaluation_files: dict[str, Path]) -> dict[str, tuple[str, dict[str, Any]]]:
    if not evaluation_files:
        return {}
    text = {name: path.read_text(encoding="utf-8") for name, path in evaluation_files.items()}
    big = "q1 0 <dbpedia:A> 1\n" * 60_000  # 1.1 MiB
    return {
        "evaluate elq": ("evaluate", {"kind": "elq", "qrels": text["elq_qrels"], "run": text["elq_run"], "per_query": True}),
        "evaluate rank": ("evaluate", {"kind": "rank", "qrels": text["er_qrels"], "run": text["er_run"]}),
        "evaluate rank skip": ("evaluate", {"kind": "rank", "qrels": text["er_qrels"], "run": text["er_run"],
                                            "metrics": ["ndcg@10", "p@1"], "skip_missing": True, "per_query": True}),
        "evaluate bad run": ("evaluate", {"kind": "rank", "qrels": text["er_qrels"], "run": text["bad_run"]}),
        "evaluate bad metric": ("evaluate", {"kind": "rank", "qrels": text["er_qrels"], "run": text["er_run"],
                                             "metrics": "ndcg@10,magic"}),
        "evaluate bad kind": ("evaluate", {"kind": "trec", "qrels": text["er_qrels"], "run": text["er_run"]}),
        "evaluate too large": ("evaluate", {"kind": "rank", "qrels": big, "run": text["er_run"]}),
    }


# --- the tools -----------------------------------------------------------------------------------

def test_the_tools_and_their_arguments_are_the_services(answers: Answers, app: Any) -> None:
    tools = {tool.name: tool for tool in answers["tools"]}
    assert set(tools) == TOOLS
    link = tools["link"].input_schema["properties"]
    served = [m.name for m in app.state.service.artefacts.methods()]
    assert link["method"]["enum"] == served and "tagme" in served
    assert {"q", "qid", "queries", "commonness_threshold", "gif_threshold", "rho_na", "top_ranked"} <= set(link)
    assert link["commonness_threshold"]["type"] == "number" and link["commonness_threshold"]["maximum"] == 1
    rank = tools["rank"].input_schema["properties"]
    assert {"q", "queries", "model", "k", "params", "links", "method"} <= set(rank)
    assert rank["k"]["maximum"] == 1000
    assert all(tool.annotations.read_only_hint for tool in tools.values())


def test_link_answers_as_the_service_and_the_cli(answers: Answers, service: TestClient, cache: str,
                                                 monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for label, (_, arguments) in CALLS.items():
        if label.startswith("link"):
            assert answers[label] == service.post("/link", json=arguments).json(), label
    monkeypatch.setenv("ELQUERY_CACHE", cache)
    for qid, text in QUERIES.items():
        assert elquery(["link", text, "--method", "cmns", "--format", "jsonl"]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert answers[f"link {qid} cmns"]["results"] == [{**cli, "qid": qid}]
    first = answers["link a mlmcg"]["results"][0]
    assert [a["entity"] for a in first["interpretations"][0]["annotations"]] == ["<dbpedia:New_York-style_pizza>",
                                                                                 "<dbpedia:Manhattan>"]


def test_rank_answers_as_the_service_and_the_searcher(answers: Answers, service: TestClient, app: Any) -> None:
    from elquery.retrieval import mlm
    from elquery.retrieval.models import BM25

    for label in ("rank mlm", "rank batch bm25"):
        assert answers[label] == service.post("/rank", json=CALLS[label][1]).json(), label
    searcher = app.state.service.artefacts.searcher
    direct = searcher.rank("obama mother", mlm(), k=5)
    assert answers["rank mlm"]["results"][0]["ranking"] == [{"rank": r.rank, "entity": r.entity, "score": r.score}
                                                            for r in direct]
    third = searcher.rank(QUERIES["c"], BM25(k1=0.9, b=0.5), k=3)
    assert answers["rank batch bm25"]["results"][2]["ranking"] == [{"rank": r.rank, "entity": r.entity,
                                                                    "score": r.score} for r in third]


def test_entity_answers_as_the_service_with_abstract_and_identifiers(answers: Answers, service: TestClient,
                                                                      app: Any) -> None:
    manhattan = answers["entity Manhattan"]
    assert {k: v for k, v in manhattan.items() if k != "abstract"} == service.get("/entity/Manhattan").json()
    obama = answers["entity Obama uri"]
    assert obama["entity"] == "<dbpedia:Barack_Obama>"
    assert {k: v for k, v in obama.items() if k != "abstract"} == service.get("/entity/Barack_Obama").json()
    tagged = service.post("/tag", data={"text": "barack obama"}).json()["annotations"]
    page_id = next(a.get("id") for a in tagged if a["dbpedia_id"] == "<dbpedia:Barack_Obama>")
    assert obama["ids"] == {"dbpedia": "<dbpedia:Barack_Obama>", "dbpedia_uri": "http://dbpedia.org/resource/Barack_Obama",
                            "wikipedia_title": "Barack Obama", "wikipedia_url": "https://en.wikipedia.org/wiki/Barack_Obama",
                            "wikipedia_page_id": page_id, "freebase": None, "wikidata": None}  # the demo has no table
    index = app.state.service.artefacts.entity_index
    stored = index.document("<dbpedia:Manhattan>").get("short_abstract") if "short_abstract" in index.text_fields else None
    assert manhattan["abstract"] == (stored or None)


def test_surface_form_answers_as_the_cli(answers: Answers, app: Any, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(app.state.service.artefacts.surface_forms)
    for label, limit in (("surface_form nyc", "1000"), ("surface_form manhattan 1", "1")):
        text = CALLS[label][1]["text"]
        assert elquery(["surface-forms", "lookup", store, text, "--limit", limit]) == 0
        assert answers[label] == json.loads(capsys.readouterr().out)
    assert answers["surface_form nyc"]["candidates"][0]["entity"] == "<dbpedia:New_York_City>"
    assert len(answers["surface_form manhattan 1"]["candidates"]) == 1


def test_artefacts_answer_as_stats(answers: Answers, service: TestClient, app: Any) -> None:
    stats = service.get("/stats").json()
    expected = {k: v for k, v in stats.items() if k not in ("worker", "uptime_s", "requests", "errors", "latency_ms")}
    methods = [m.name for m in app.state.service.artefacts.menu()]
    from elquery.retrieval.models import MODELS

    assert answers["artefacts"] == {**expected, "methods": methods, "models": list(MODELS.names())}
    assert answers["artefacts"]["index"]["entities"] == 54


def test_evaluate_answers_as_the_cli(answers: Answers, evaluation_files: dict[str, Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    if not evaluation_files:
        require_data("elq/erd-dev")
    files = {name: str(path) for name, path in evaluation_files.items()}
    commands = {
        "evaluate elq": ["evaluate", "elq", "--qrels", files["elq_qrels"], "--run", files["elq_run"], "--per-query"],
        "evaluate rank": ["evaluate", "rank", "--qrels", files["er_qrels"], "--run", files["er_run"]],
        "evaluate rank skip": ["evaluate", "rank", "--qrels", files["er_qrels"], "--run", files["er_run"],
                               "--metrics", "ndcg@10,p@1", "--skip-missing", "--per-query"],
    }
    for label, command in commands.items():
        assert elquery([*command, "--format", "json"]) == 0
        captured = capsys.readouterr()
        answer = dict(answers[label])
        warnings = answer.pop("warnings")
        assert answer == json.loads(captured.out), label
        cli_warnings = [line.removeprefix("warning: ") for line in captured.err.splitlines()]
        assert [re.sub(r"^\S*run\S*: ", "run: ", w).replace("--skip-missing", "skip_missing") for w in cli_warnings] \
            == warnings, label
    assert answers["evaluate elq"]["warnings"][0].startswith("run: 1 of ")  # the unjudged query
    assert answers["evaluate rank"]["warnings"][0].startswith("run: 1 of ")  # the first judged query is missing


# --- refusals ------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", list(BAD))
def test_a_refused_call_is_a_tool_error_with_the_services_message(label: str, answers: Answers,
                                                                   service: TestClient) -> None:
    tool, _, path, body = BAD[label]
    refused = service.post(path, json=body)
    assert refused.status_code in (404, 413, 422)
    assert answers[label] == ("error", f"Error executing tool {tool}: {refused.json()['error']}")


def test_a_refused_lookup_or_evaluation_is_a_tool_error_with_the_cli_message(
        answers: Answers, evaluation_files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    if not evaluation_files:
        require_data("elq/erd-dev")
    assert answers["evaluate bad run"] == ("error", "Error executing tool evaluate: run:2: rank 'two' is not an integer")
    bad = str(evaluation_files["bad_run"])
    assert elquery(["evaluate", "rank", "--qrels", str(evaluation_files["er_qrels"]), "--run", bad]) == 2
    assert capsys.readouterr().err == f"elquery: error: {bad}:2: rank 'two' is not an integer\n"
    assert answers["evaluate bad kind"] == ("error", "Error executing tool evaluate: kind must be one of elq, rank, "
                                                     "got 'trec'")
    assert answers["evaluate too large"] == ("error", "Error executing tool evaluate: qrels larger than 1 MiB")
    assert answers["evaluate bad metric"][0] == "error" and "magic" in answers["evaluate bad metric"][1]


# --- the endpoints and the command -------------------------------------------------------------------

def test_the_mount_refuses_a_foreign_host_a_get_and_is_not_in_the_openapi_schema(served: str) -> None:
    import httpx

    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    foreign = httpx.post(f"{served}/mcp", json=request, headers={**headers, "Host": "attacker.example"}, timeout=10)
    assert foreign.status_code in (400, 403, 421)
    # a GET would open the SDK's server-to-client stream, which a stateless server never writes to:
    # refused at once in the service's error shape instead of held open
    for accept in ("*/*", "text/event-stream"):
        get = httpx.get(f"{served}/mcp", headers={"Accept": accept}, timeout=10)
        assert (get.status_code, get.headers["allow"]) == (405, "POST")
        assert get.json() == {"error": "method GET not allowed on /mcp (allowed: POST)"}
    assert "/mcp" not in httpx.get(f"{served}/openapi.json").json()["paths"]
    assert httpx.get(f"{served}/health").json() == {"status": "ok"}


def test_elquery_mcp_over_http_answers_as_the_service(cache: str, service: TestClient) -> None:
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "ELQUERY_CACHE": cache}
    process = subprocess.Popen([sys.executable, "-m", "elquery", "mcp", "--transport", "http", "--port", str(port)],
                               env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        assert process.stderr.readline().strip() == f"elquery mcp: http://127.0.0.1:{port}/mcp"

        async def run() -> list[Any]:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as client:
                linked = await client.call_tool("link", {"q": QUERIES["a"], "method": "mlmcg"})
                ranked = await client.call_tool("rank", {"q": QUERIES["d"], "k": 4})
                return [linked.structured_content, ranked.structured_content]
        deadline = time.monotonic() + 60
        while True:
            try:
                linked, ranked = asyncio.run(run())
                break
            except Exception:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.5)
        assert linked == service.post("/link", json={"q": QUERIES["a"], "method": "mlmcg"}).json()
        assert httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=10).status_code == 405
        assert ranked == service.post("/rank", json={"q": QUERIES["d"], "k": 4}).json()
    finally:
        process.terminate()
        process.wait(30)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--index", "x"], "give --index and --surface-forms together (or neither, for the demo knowledge base)"),
    (["--transport", "http", "--port", "0"], "--port must be between 1 and 65535, got 0"),
    (["--index", "nowhere", "--surface-forms", "nothing.db"], "nowhere: no such entity index"),
    (["--params", "missing.json"], "missing.json"),
])
def test_a_mistake_in_the_command_is_one_line(arguments: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "elquery", "mcp", *arguments], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("elquery: error: ") and message in lines[0]


def test_stdio_writes_nothing_but_the_protocol_and_ends_with_its_input(cache: str) -> None:
    """The raw exchange: every line `elquery mcp` writes on standard output is a JSON-RPC message
    (the artefacts' opening, Java's start and the SDK's logging write elsewhere), and it ends,
    status 0, when the client closes its standard input."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "link", "arguments": {"q": " "}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "surface_form", "arguments": {"text": "the music man"}}}]
    process = subprocess.Popen([sys.executable, "-m", "elquery", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "ELQUERY_CACHE": cache}, text=True)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(3)]  # a line that is no JSON fails here
        process.stdin.close()  # the client leaves: the server ends
        assert process.wait(60) == 0
        assert process.stdout.read() == ""
    finally:
        process.kill()
        process.wait()
    assert sorted(a["id"] for a in answers) == [1, 2, 3] and all(a["jsonrpc"] == "2.0" for a in answers)
    by_id = {a["id"]: a["result"] for a in answers}
    assert by_id[1]["serverInfo"]["name"] == "elquery"
    assert by_id[2]["isError"] is True
    assert by_id[2]["content"][0]["text"] == "Error executing tool link: the query is blank (empty or only whitespace)"
    assert by_id[3]["structuredContent"]["candidates"][0]["entity"] == "<dbpedia:The_Music_Man>"


def test_a_call_gets_the_services_limits(app: Any) -> None:
    """The server over a service with small limits (in process): the batch size, k, the number of
    candidates, the query length and the time limit of a call are the service's."""
    from elquery.mcp.server import create_server
    from elquery.serve.service import Service

    artefacts = app.state.service.artefacts
    small = create_server(Service(artefacts, Limits(max_batch=2, max_k=3, max_query_tokens=4)))
    hurried = create_server(Service(artefacts, Limits(seconds=0)))

    async def run() -> list[Any]:
        found = []
        async with Client(small) as client:
            for tool, arguments in (("link", {"queries": ["a", "b", "c"]}), ("rank", {"q": "obama", "k": 4}),
                                    ("rank", {"q": "obama"}), ("surface_form", {"text": "manhattan", "limit": 4}),
                                    ("surface_form", {"text": "a b c d e"}), ("link", {"q": "a b c d e"}),
                                    ("surface_form", {"text": "new york", "limit": "two"})):
                result = await client.call_tool(tool, arguments)
                found.append(result.content[0].text if result.is_error else result.structured_content)
        async with Client(hurried) as client:
            result = await client.call_tool("rank", {"queries": list(QUERIES.values())})
            found.append(result.content[0].text if result.is_error else result.structured_content)
        return found
    answers = asyncio.run(run())
    too_long = "query of 5 tokens is longer than the limit of 4 (raise it with --max-query-tokens / max_query_tokens)"
    assert answers[0] == "Error executing tool link: 3 queries in one request; the limit is 2"
    assert answers[1] == "Error executing tool rank: k must be between 1 and 3, got 4"
    assert [r["rank"] for r in answers[2]["results"][0]["ranking"]] == [1, 2, 3]  # k: at most max_k by default
    assert answers[3] == "Error executing tool surface_form: limit must be between 1 and 3, got 4"
    assert answers[4] == f"Error executing tool surface_form: {too_long}"
    assert answers[5] == f"Error executing tool link: {too_long}"
    assert answers[6] == "Error executing tool surface_form: limit must be a whole number, got 'two'"
    assert answers[7] == "Error executing tool rank: the request took longer than 0 s"
