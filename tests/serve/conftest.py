"""A real ``elquery serve`` on a loopback port (the demo knowledge base, one worker) for the whole
session; the raw HTTP/1.1 connection the tests talk to it over is :mod:`served_http`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from served_http import Connection, Served  # tests/serve, on the path as pytest loads it


JVM = {"ELQUERY_JVM_HEAP": "256m", "ELQUERY_JVM_OPTIONS": "-Xms256m -XX:+AlwaysPreTouch"}
"""Java's heap whole from the start (enough for the demo knowledge base), so the worker's resident
memory does not grow as the heap does over the first thousands of requests, and stays flat unless
something leaks."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``elquery serve --workers 1`` over the demo knowledge base, for the whole session."""
    folder = tmp_path_factory.mktemp("served")
    port, stderr = _free_port(), folder / "stderr.txt"
    with stderr.open("w") as err:
        server = subprocess.Popen([sys.executable, "-m", "elquery", "serve", "--port", str(port), "--workers", "1"],
                                  cwd=folder, env={**os.environ, "ELQUERY_CACHE": str(folder / "cache"), **JVM},
                                  stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None and time.monotonic() < deadline, stderr.read_text()
            try:
                connection = Connection(port, timeout=5)
                try:
                    if connection.request("GET", "/health").status == 200:
                        break
                finally:
                    connection.close()
            except OSError:
                time.sleep(0.3)
        yield Served(port, server.pid, stderr)
    finally:
        server.terminate()
        server.wait(timeout=60)
