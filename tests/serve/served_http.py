"""A raw HTTP/1.1 connection to a real ``elquery serve`` (the ``served`` fixture of conftest.py)
that shows what a client sees: the status, the headers and the body of each answer, and whether
the server kept the connection open for the next request."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
