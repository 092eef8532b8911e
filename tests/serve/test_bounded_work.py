"""A served request's work is bounded and stops with it: a 1 MiB text at /spot is refused at once
and leaves the server idle; a batch that outlasts the time limit gets its 503 and its work stops
with the answer (the server's CPU time stays flat after it); SIGTERM ends ``elquery serve`` (one
worker and two) within seconds while such a batch runs. A real server on a loopback port over
the demo knowledge base (with its TAGME artefact); CPU time is read from /proc."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import process_tree  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU times from /proc")

SECONDS = 2.0
"""The served time limit for a request (``elquery serve --time-limit``), well under the batch's work
on any machine."""
QUERY = " ".join(["new york pizza manhattan"] * 250)
"""1,000 tokens (the limit), every one a TAGME spot: linking it takes a sizeable fraction of a second."""
BATCH = {"method": "tagme", "queries": [QUERY] * 100}
"""About 630 kB: several seconds of work even on a fast idle machine."""


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server and its worker processes so far."""
        return sum(figures.own_cpu for figures in self.processes().values())

    def processes(self) -> dict[int, process_tree.ProcessStat]:
        """The server process and its live descendants, with their figures."""
        root = process_tree.stat(self.process.pid)
        return {**({self.process.pid: root} if root is not None else {}),
                **process_tree.descendants(self.process.pid)}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("elquery-cache-bounded"))


def start(cache: str, folder: Path, workers: int, *options: str) -> Server:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "elquery", "serve", "--port", str(port),
                                "--workers", str(workers), *options],
                               cwd=folder, env={**os.environ, "ELQUERY_CACHE": cache},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return Server(process, url)
        except httpx.TransportError:
            time.sleep(0.3)


@pytest.fixture(scope="module")
def server(cache: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    served = start(cache, tmp_path_factory.mktemp("served"), 1, "--time-limit", f"{SECONDS:g}")
    yield served
    stop(served)


def stop(server: Server) -> None:
    for pid in reversed(list(server.processes())):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    server.process.wait(timeout=30)


def idle_after(server: Server, settle: float = 1.0, window: float = 3.0) -> float:
    """CPU seconds the server spends over ``window`` seconds, ``settle`` seconds from now: an idle
    server spends about none, one still working a tenth or more even on a loaded machine."""
    time.sleep(settle)
    before = server.cpu_seconds()
    time.sleep(window)
    return server.cpu_seconds() - before


def test_a_huge_text_at_spot_is_refused_at_once_and_leaves_the_server_idle(server: Server) -> None:
    text = "klm " * 250_000  # 1 MiB less 2 bytes, 250,000 tokens
    for words in (text, "new york pizza manhattan " * 41_000):
        started = time.monotonic()
        answer = httpx.post(server.url + "/spot", data={"text": words[:(1 << 20) - 10]}, timeout=30)
        assert time.monotonic() - started < 5
        assert answer.status_code == 422 and "is longer than the limit of 1000" in answer.json()["error"]
        assert idle_after(server, settle=0.5) < 0.2


def test_a_request_over_the_time_limit_stops_its_work_with_its_answer(server: Server) -> None:
    started = time.monotonic()
    answer = httpx.post(server.url + "/link", json=BATCH, timeout=SECONDS + 20)
    assert (answer.status_code, answer.json()) == (503, {"error": f"the request took longer than {SECONDS:g} s"})
    assert time.monotonic() - started < SECONDS + 5
    assert idle_after(server) < 0.2  # a worker thread left running would use up to a whole core
    assert httpx.get(server.url + "/tag", params={"text": "new york pizza"}, timeout=10).status_code == 200


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_ends_the_server_within_seconds_while_a_long_request_runs(cache: str, tmp_path: Path,
                                                                         workers: int) -> None:
    server = start(cache, tmp_path, workers)
    answers: list[object] = []

    def ask() -> None:
        try:
            answers.append(httpx.post(server.url + "/link", json=BATCH, timeout=120).status_code)
        except httpx.TransportError as exc:
            answers.append(exc)
    client = threading.Thread(target=ask, daemon=True)
    try:
        client.start()
        time.sleep(2.0)
        assert not answers  # the batch is being worked on
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("the server did not end within 15 s of SIGTERM")
        assert time.monotonic() - signalled < 5
        client.join(timeout=10)
        assert answers and answers[0] != 200  # 503 "the server is stopping", or the connection closed
    finally:
        if server.process.poll() is None:
            stop(server)
