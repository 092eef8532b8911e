"""Request counts and latencies of one worker process, counted by an ASGI middleware."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Statistics:
    """Request counts and latencies of this worker (the last 10,000 requests)."""

    started: float = field(default_factory=time.time)
    requests: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=10_000))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, path: str, seconds: float, error: bool) -> None:
        with self.lock:
            self.requests[path] = self.requests.get(path, 0) + 1
            self.errors += error
            self.latencies.append(seconds)

    def as_dict(self) -> dict[str, Any]:
        with self.lock:
            ordered = sorted(self.latencies)
        def percentile(p: float) -> float | None:
            return round(1000 * ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3) if ordered else None
        return {"uptime_s": round(time.time() - self.started, 1), "requests": dict(self.requests),
                "errors": self.errors, "latency_ms": {"p50": percentile(0.5), "p99": percentile(0.99)}}


NO_DOOR = "(no such path)"


class Counting:
    """Pure ASGI middleware counting requests and latencies (no body buffering or streaming in
    pieces, which would cost a TCP round trip per response)."""

    def __init__(self, app: Any, statistics: Statistics) -> None:
        self.app, self.statistics = app, statistics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.statistics.record(door(scope), time.perf_counter() - started, status >= 400)


def door(scope: Any) -> str:
    """What a request is counted under: its route's path (``/entity/{entity:path}``, one key
    however many entities are asked for), or one key for every path that is no door, so that
    clients asking for endless different paths cannot grow the counts."""
    route = scope.get("route")
    return getattr(route, "path", None) or NO_DOOR
