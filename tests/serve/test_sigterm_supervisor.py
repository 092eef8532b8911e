"""SIGTERM ends ``elquery serve --workers 2`` within seconds even while a worker does not answer
its supervisor: one whose start holds Python's GIL or starves under a machine's load, made real
here by stopping the worker (SIGSTOP). uvicorn's supervisor asks each worker in turn whether it is
alive and waits up to the health-check time (60 s) for the answer, with the signal queued meanwhile;
then it waits for every worker to end, however long. A real server on a loopback port over the
demo knowledge base; processes read from /proc."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import process_tree  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


def test_sigterm_ends_the_server_within_seconds_while_a_worker_does_not_answer(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "elquery", "serve", "--port", str(port), "--workers", "2"],
                              cwd=tmp_path, env={**os.environ, "ELQUERY_CACHE": str(tmp_path / "cache")},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = sorted(pid for pid in process_tree.descendants(server.pid) if is_worker(pid))
            time.sleep(0.2)
        os.kill(workers[0], signal.SIGSTOP)  # answers no health check from now on
        time.sleep(2.0)  # the supervisor's check of it has begun (one every half second)
        signalled = time.monotonic()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail("the server did not end within 20 s of SIGTERM")
        assert time.monotonic() - signalled < 15
        time.sleep(0.5)
        assert not [pid for pid in workers if process_tree.stat(pid) is not None]  # no worker left behind
    finally:
        for pid in [server.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        server.wait(timeout=30)


def is_worker(pid: int) -> bool:
    """A worker of uvicorn's supervisor: a spawned process, not multiprocessing's resource tracker."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in command and b"resource_tracker" not in command
