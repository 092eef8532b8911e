"""`elquery serve`: the JSON API, the TAGME-compatible endpoint and the page, through the ASGI
test client, and one real server process over HTTP on a loopback port. Answers equal the CLI's
and the Python API's on the same artefacts."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from elquery.cli import main as elquery
from elquery.indexing.demo import demo_artefacts
from elquery.serve.app import Artefacts, Limits, create_app
from conftest import elquery_serve  # tests/conftest.py, on the path as pytest loads it


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    cache = str(tmp_path_factory.mktemp("elquery-cache-serve"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", cache)
        index, surface_forms = demo_artefacts()
    return index, surface_forms, cache


@pytest.fixture(scope="module")
def client(demo: tuple[Path, Path, str]) -> TestClient:
    index, surface_forms, _ = demo
    return TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True), Limits(max_batch=5)))


def test_link_answers_what_the_cli_writes(client: TestClient, demo: tuple[Path, Path, str],
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ELQUERY_CACHE", demo[2])
    queries = {"a": "new york pizza manhattan", "b": "the music man", "c": "Ｍａｎｈａｔｔａｎ, NYC!"}
    for method in ("mlmcg", "cmns"):
        served = client.post("/link", json={"queries": queries, "method": method}).json()["results"]
        cli = []
        for qid, text in queries.items():
            assert elquery(["link", text, "--method", method, "--format", "jsonl"]) == 0
            record = json.loads(capsys.readouterr().out)
            cli.append({**record, "qid": qid})
        assert served == cli
    one = client.get("/link", params={"q": "new york pizza manhattan"}).json()["results"][0]
    entities = [a["entity"] for a in one["interpretations"][0]["annotations"]]
    assert entities == ["<dbpedia:New_York-style_pizza>", "<dbpedia:Manhattan>"]
    for annotation in one["mentions"]:  # character offsets into the query
        mention = annotation["mention"]
        assert one["query"][mention["char_start"]:mention["char_end"]].lower() == mention["text"]


def test_rank_answers_what_the_searcher_ranks(client: TestClient, demo: tuple[Path, Path, str]) -> None:
    from elquery.retrieval import Searcher, mlm

    served = client.get("/rank", params={"q": "obama mother", "k": 5}).json()["results"][0]["ranking"]
    with Searcher(demo[0]) as searcher:
        direct = searcher.rank("obama mother", mlm(), k=5)
    assert served == [{"rank": r.rank, "entity": r.entity, "score": r.score} for r in direct]


def test_entity_health_stats_and_page(client: TestClient) -> None:
    entity = client.get("/entity/Manhattan").json()
    assert entity["entity"] == "<dbpedia:Manhattan>" and "manhattan" in [a["form"] for a in entity["aliases"]]
    assert client.get("/entity/No_such_thing").status_code == 404
    assert client.get("/health").json() == {"status": "ok"}
    stats = client.get("/stats").json()
    assert stats["index"]["entities"] == 54 and stats["requests"]["/health"] >= 1
    page = client.get("/")
    assert page.status_code == 200 and '<input type="text" id="q"' in page.text
    assert "/docs" in [route.path for route in client.app.routes]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("request_args", "status", "words"), [
    ({"method": "GET", "url": "/link", "params": {"q": "  "}}, 422, "the query is blank (empty or only whitespace)"),
    ({"method": "GET", "url": "/link"}, 422, "give a query"),
    ({"method": "GET", "url": "/link", "params": {"q": "pizza", "method": "nope"}}, 422, "unknown method"),
    ({"method": "GET", "url": "/link", "params": {"q": "pizza", "gif_threshold": "x"}}, 422,
     "gif_threshold must be a number, got 'x'"),
    ({"method": "GET", "url": "/link", "params": {"q": "pizza " * 1001}}, 422, "longer than the limit of 1000"),
    ({"method": "POST", "url": "/link", "json": {"queries": ["pizza"] * 6}}, 413, "the limit is 5"),
    ({"method": "POST", "url": "/link", "content": b"q=\xff\xfe", "headers": {"content-type": "application/x-www-form-urlencoded"}},
     400, "not valid UTF-8"),
    ({"method": "POST", "url": "/link", "content": b"{not json", "headers": {"content-type": "application/json"}},
     400, "invalid JSON"),
    ({"method": "GET", "url": "/rank", "params": {"q": "pizza", "k": "0"}}, 422, "k must be between"),
    ({"method": "GET", "url": "/rank", "params": {"q": "pizza", "model": "magic"}}, 422, "unknown model"),
    ({"method": "GET", "url": "/tag", "params": {"text": "pizza"}}, 422, "without --tagme"),
])
def test_bad_requests_get_a_json_error(client: TestClient, request_args: dict, status: int, words: str) -> None:
    response = client.request(**request_args)
    assert response.status_code == status
    assert words in response.json()["error"]


def test_tag_is_tagme_shaped(dbpedia_sample: Path, tmp_path: Path, demo: tuple[Path, Path, str]) -> None:
    from elquery.indexing.tagme.build import build_tagme

    build_tagme([dbpedia_sample], tmp_path / "tagme")
    client = TestClient(create_app(Artefacts(demo[0], demo[1], tmp_path / "tagme")))
    text = "British Airways flights to Rome"
    answer = client.post("/tag", data={"text": text, "lang": "en"}).json()
    assert {"annotations", "lang", "time", "timestamp"} <= set(answer)
    spots = {(a["spot"], a["title"]) for a in answer["annotations"]}
    assert {("British Airways", "British Airways"), ("Rome", "Rome")} <= spots
    for annotation in answer["annotations"]:
        assert text[annotation["start"]:annotation["end"]] == annotation["spot"]
    # TAGME's id is the Wikipedia page id, read from the page_ids dataset (dbo:wikiPageID)
    ids = {a["title"]: a["id"] for a in answer["annotations"]}
    assert ids["British Airways"] == _page_id(dbpedia_sample, "British_Airways") == 3970
    assert ids["Rome"] == _page_id(dbpedia_sample, "Rome")


def _page_id(dumps: Path, title: str) -> int:
    """The dbo:wikiPageID of a page, read straight from the sample's page_ids dump."""
    import bz2

    subject = f"<http://dbpedia.org/resource/{title}> <http://dbpedia.org/ontology/wikiPageID> "
    with bz2.open(dumps / "page_ids_en.ttl.bz2", "rt", encoding="utf-8") as lines:
        return next(int(line[len(subject):].split('"')[1]) for line in lines if line.startswith(subject))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_real_server_answers_over_http(demo: tuple[Path, Path, str], tmp_path: Path, workers: str) -> None:
    with elquery_serve(["--workers", workers], tmp_path, demo[2], 90) as (port, _):
        answer = httpx.get(f"http://127.0.0.1:{port}/link", params={"q": "new york pizza manhattan"}, timeout=30).json()
        assert [a["entity"] for a in answer["results"][0]["interpretations"][0]["annotations"]] == [
            "<dbpedia:New_York-style_pizza>", "<dbpedia:Manhattan>"]


def test_each_worker_listens_on_its_own_socket(demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    """--workers 2: two listening sockets on the port (SO_REUSEPORT), so the kernel spreads new
    connections over the workers; with one shared socket, an idle worker accepted every pending
    connection and a client keeping 8 connections open loaded one worker only."""
    with elquery_serve(["--workers", "2"], tmp_path, demo[2], 90, ready=lambda port: _listening(port) >= 2) as (
            port, server):
        clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) for _ in range(16)]
        try:
            workers = {client.get("/stats").json()["worker"] for client in clients}
            workers |= {client.get("/stats").json()["worker"] for client in clients}  # the same kept-alive connections
        finally:
            for client in clients:
                client.close()
        assert _listening(port) == 2
        assert len(workers) == 2 and server.pid not in workers


def test_a_port_in_use_stops_serve_in_one_line(demo: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Even one another service's workers listen on with SO_REUSEPORT, as elquery serve's do."""
    import uvicorn.supervisors.multiprocess

    from elquery.base import run
    from elquery.serve.cli import register as register_serve

    monkeypatch.setenv("ELQUERY_CACHE", demo[2])
    monkeypatch.setattr(uvicorn.supervisors.multiprocess.Multiprocess, "run", lambda self: pytest.fail("served"))
    with socket.socket() as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        assert run([register_serve], "elquery", ["serve", "--port", str(port), "--workers", "2"]) == 2
    assert capsys.readouterr().err.endswith(f"elquery: error: 127.0.0.1:{port}: Address already in use\n")


def _listening(port: int) -> int:
    """The TCP sockets listening on ``port`` (IPv4), from /proc/net/tcp (state 0A)."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for line in lines if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A")


NIF_DOCUMENT = """@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://example.org/doc1#char=0,24> a nif:Context, nif:String, nif:RFC5147String ;
    nif:isString "new york pizza manhattan" ;
    nif:beginIndex "0"^^xsd:nonNegativeInteger ; nif:endIndex "24"^^xsd:nonNegativeInteger .
"""


def test_nif_documents_come_back_annotated(client: TestClient) -> None:
    import pyoxigraph

    response = client.post("/nif", content=NIF_DOCUMENT.encode(), headers={"content-type": "application/x-turtle"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/turtle")
    triples = list(pyoxigraph.parse(response.content, format=pyoxigraph.RdfFormat.TURTLE))
    nif = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#"
    phrases = {}
    for t in triples:
        if t.predicate.value.startswith(nif) or t.predicate.value.endswith("taIdentRef"):
            phrases.setdefault(t.subject.value, {})[t.predicate.value.rsplit("#", 1)[1]] = t.object.value
    annotated = {p["anchorOf"]: (int(p["beginIndex"]), int(p["endIndex"]), p["taIdentRef"])
                 for p in phrases.values() if "taIdentRef" in p}
    assert annotated == {
        "new york pizza": (0, 14, "http://dbpedia.org/resource/New_York-style_pizza"),
        "manhattan": (15, 24, "http://dbpedia.org/resource/Manhattan"),
    }
    bad = client.post("/nif", content=b"this is not turtle", headers={"content-type": "text/turtle"})
    assert bad.status_code == 400 and "not a Turtle document" in bad.json()["error"]


def test_spot_gives_tagme_spots(dbpedia_sample: Path, tmp_path: Path, demo: tuple[Path, Path, str]) -> None:
    from elquery.indexing.tagme.build import build_tagme

    build_tagme([dbpedia_sample], tmp_path / "tagme")
    client = TestClient(create_app(Artefacts(demo[0], demo[1], tmp_path / "tagme")))
    text = "British Airways to ROME!"
    spots = client.get("/spot", params={"text": text}).json()["spots"]
    assert {s["spot"] for s in spots} >= {"British Airways", "ROME"}
    for spot in spots:
        assert text[spot["start"]:spot["end"]] == spot["spot"] and spot["lp"] > 0


def test_the_service_equals_the_linker_on_the_real_sample(dbpedia_sample: Path, elq_data: Path,
                                                           tmp_path: Path) -> None:
    """Y-ERD queries against the real DBpedia sample: every /link answer is the Linker's."""
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.surface_forms.build import BuildOptions, build_store
    from elquery.linking.linker import Linker
    from elquery.linking.output import jsonl_record

    build_dbpedia_index([dbpedia_sample], tmp_path / "index", workers=1)
    build_store(tmp_path / "sf.db", BuildOptions((dbpedia_sample,), anchors=True, workers=1, progress=False))
    queries = dict(sorted(json.loads((elq_data / "y-erd" / "queries.json").read_text()).items())[:300])
    client = TestClient(create_app(Artefacts(tmp_path / "index", tmp_path / "sf.db")))
    served = client.post("/link", json={"queries": queries, "gif_threshold": 0.25}).json()["results"]
    with Linker(tmp_path / "index", tmp_path / "sf.db", gif_threshold=0.25) as linker:
        assert served == [jsonl_record(linker.result(text, qid)) for qid, text in queries.items()]
    assert any(record["interpretations"] for record in served)


def test_the_shared_listening_socket_gets_tcp_nodelay_connections() -> None:
    """asyncio sets TCP_NODELAY only on connections of a socket whose protocol is TCP; the socket
    the workers share is made so (uvicorn's own has protocol 0: ~40 ms per response)."""
    import asyncio

    from elquery.serve.cli import _listening_socket

    listening = _listening_socket("127.0.0.1", 0)
    assert listening.proto == socket.IPPROTO_TCP
    listening.listen()
    port = listening.getsockname()[1]
    delays: list[int] = []

    async def main() -> None:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            delays.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=listening)
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(100):
            if delays:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()

    asyncio.run(main())
    assert delays == [1]
