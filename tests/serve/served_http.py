"""A real ``elquery serve`` on a loopback port (the demo knowledge base, one worker: the
``served`` fixture, which a test module imports), and a raw HTTP/1.1 connection to it that shows
what a client sees: the status, the headers and the body of each answer, and whether the server
kept the connection open for the next request."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class Served:
    """A running server: its port, process id and the file its stderr goes to."""

    port: int
    pid: int
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")

    def rss_kib(self) -> int:
        """The server process's resident memory (VmRSS, KiB)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One kept-alive HTTP/1.1 connection; a request on it after the server closed it fails
    (``ConnectionError``) rather than silently opening another."""

    def __init__(self, port: int, timeout: float = 30) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def close(self) -> None:
        self.sock.close()

    def request(self, method: str, target: str, body: bytes | None = None,
                content_type: str = "application/json") -> Answer:
        head = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if body is not None:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        self.sock.sendall(head.encode("latin-1") + b"\r\n" + (body or b""))
        while b"\r\n\r\n" not in self.buffer:
            self._more()
        raw, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = raw.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
        length = int(headers.get("content-length", "0"))
        while len(self.buffer) < length:
            self._more()
        content, self.buffer = self.buffer[:length], self.buffer[length:]
        return Answer(int(status_line.split()[1]), headers, content)

    def _more(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data


JVM = {"ELQUERY_JVM_HEAP": "256m", "ELQUERY_JVM_OPTIONS": "-Xms256m -XX:+AlwaysPreTouch"}
"""Java's heap whole from the start (enough for the demo knowledge base), so the worker's resident
memory does not grow as the heap does over the first thousands of requests, and stays flat unless
something leaks."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``elquery serve --workers 1`` over the demo knowledge base, for the tests of one module
    (a module imports this fixture; a conftest.py here would shadow tests/conftest.py, whose
    helpers other tests import as ``conftest``)."""
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
