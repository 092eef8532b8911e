"""A worker warms up before it serves (elquery/serve/warm_up.py): ``/ready`` is 503 until its
warm-up has run, a real server answers nothing before its workers have warmed up, and its first
answer after ready is the command line's."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from elquery.cli import main as elquery
from elquery.indexing.demo import demo_artefacts
from elquery.serve.app import Artefacts, create_app
from elquery.serve.warm_up import title_words, warm_up_at_start, warm_up_queries

QUERY = "new york pizza manhattan"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    cache = str(tmp_path_factory.mktemp("elquery-cache-ready"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", cache)
        index, surface_forms = demo_artefacts()
    return index, surface_forms, cache


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    """The warm-up freezes the objects of the process it runs in (gc.freeze): give the test
    session's back to the collector."""
    yield
    gc.unfreeze()


def _entity_lines(index: Path) -> list[str]:
    return (index / "entity_ids.txt").read_text(encoding="utf-8").splitlines()


def test_ready_is_503_until_the_warm_up_has_run(demo: tuple[Path, Path, str]) -> None:
    index, surface_forms, _ = demo
    artefacts = Artefacts(index, surface_forms, demo_thresholds=True)
    app = create_app(artefacts)
    cold = TestClient(app)  # no lifespan: nothing warmed the worker up
    answer = cold.get("/ready")
    assert answer.status_code == 503 and answer.json() == {"ready": False, "worker": os.getpid()}
    warm_up_at_start(app, artefacts, 600.0)
    with TestClient(app) as started:  # the lifespan's start-up: the warm-up
        answer = started.get("/ready")
    assert answer.status_code == 200
    body = answer.json()
    warmed = body["warm_up"]
    # 600 s is more than the demo's queries take: every entity's title was linked, then it stopped
    assert body["ready"] is True and warmed["queries"] == len(_entity_lines(index)) == 54
    assert 0 < warmed["seconds"] < 600 and warmed["first_ms"] > 0 and warmed["last_ms"] > 0 and warmed["prepare_s"] > 0
    # the artefacts' files were read into the page cache: the demo's are far below half the memory
    served = [p for p in [*index.rglob("*"), surface_forms] if p.is_file()]
    assert warmed["paged_in_mb"] == round(sum(p.stat().st_size for p in served) / 1e6, 1) > 0
    # what the warm-up prepared: the entity-id map, the searcher's tie order, the page's example
    assert "_docid_of" in artefacts.entity_index.__dict__ and "_id_rank" in artefacts.searcher.__dict__
    assert artefacts._example is not None
    assert gc.get_freeze_count() > 0  # the objects alive after the warm-up are out of the collector's walks


def test_no_warm_up_is_ready_at_once(demo: tuple[Path, Path, str]) -> None:
    index, surface_forms, _ = demo
    artefacts = Artefacts(index, surface_forms, demo_thresholds=True)
    app = create_app(artefacts)
    warm_up_at_start(app, artefacts, 0.0)
    with TestClient(app) as client:
        assert client.get("/ready").json()["warm_up"] == {"paged_in_mb": 0.0, "page_in_s": 0.0, "prepare_s": 0.0,
                                                        "queries": 0, "seconds": 0.0, "first_ms": 0.0,
                                                        "last_ms": 0.0}


class _Titles:
    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    @property
    def num_entities(self) -> int:
        return len(self.ids)

    def entity(self, docid: int) -> str:
        return self.ids[docid]


def test_warm_up_queries_are_entity_titles_spread_over_the_index_in_the_shapes_of_web_queries() -> None:
    assert title_words("<dbpedia:New_York_(film)>") == "New York"
    assert title_words("<dbpedia:Caf%C3%A9_M%C3%BCller>") == "Café Müller"
    ids = [f"<dbpedia:Title_{chr(97 + n)}_(x)>" for n in range(20)]
    # step 20 // 10 = 2: docids 0, 2, 4, ..., each with the entity step // 2 + 1 = 2 docids on
    # (the last one's wraps round to docid 0); the shapes in turn, from the first again at the ninth
    assert warm_up_queries(_Titles(ids), 10) == [
        "Title a", "title c", "what is the title e", "title g title i", "Title i's title 2015", "title k title",
        "how to get to title m from title o?", "title o of title in qzxv", "Title q", "title s"]
    assert warm_up_queries(_Titles(ids), 3) == ["Title a", "title g", "what is the title m"]  # step 6
    assert warm_up_queries(_Titles([]), 6) == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_server_answers_only_once_warm_and_then_as_the_cli(demo: tuple[Path, Path, str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Each worker warms up before it listens: the first /health that answers comes from a warm
    worker, and so does every answer over 16 connections; the first /link equals `elquery link`."""
    index, _, cache = demo
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "elquery", "serve", "--port", str(port), "--workers", "2",
                               "--warm-up", "600"], cwd=tmp_path, env={**os.environ, "ELQUERY_CACHE": cache},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read() if server.stderr else ""
            try:
                health = httpx.get(f"{base}/health", timeout=30)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert health.status_code == 200
        first = httpx.get(f"{base}/link", params={"q": QUERY}, timeout=30).json()["results"][0]
        clients = [httpx.Client(base_url=base, timeout=30) for _ in range(16)]
        try:
            readiness = [client.get("/ready") for client in clients]
        finally:
            for client in clients:
                client.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    for answer in readiness:
        assert answer.status_code == 200 and answer.json()["warm_up"]["queries"] == len(_entity_lines(index))
    monkeypatch.setenv("ELQUERY_CACHE", cache)
    assert elquery(["link", QUERY, "--format", "jsonl"]) == 0
    assert first == json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_a_bad_warm_up_is_one_line(value: str) -> None:
    completed = subprocess.run([sys.executable, "-m", "elquery", "serve", "--warm-up", value], capture_output=True,
                               text=True, timeout=60)
    assert completed.returncode == 2 and completed.stdout == ""
    [line] = completed.stderr.splitlines()
    assert line.startswith("elquery serve: error: argument --warm-up: expected a number of seconds >= 0, "
                           f"got {value!r}")
