"""Service benchmark: `elquery serve` on loopback under a closed-loop load of distinct queries,
measured from the first request after every worker is ready, next to in-process
``Linker.result`` throughput in the same run (the baseline). JSON lines.

Per ``--workers`` count (default 1 and 2), a fresh server is started (``--warm-up`` seconds of
warm-up per worker, elquery/serve/warm_up.py); ``serve_ready`` records the seconds from the start
to every worker listening (N sockets on the port) and ``/ready``. Then, with no load sent before,
wrk's ``--clients`` connections send GET /link requests one after another (closed loop), first for
``--first`` seconds (``window: first``), then for ``--seconds`` more (``window: next``; new
connections). Each record: requests/s, p50/p90/p99/max latency, errors, and the peak RSS of the
server's processes (all of them, and the largest); ``serve_ready`` also gives the requests each
worker answered in all (``requests_per_worker``, from its ``/stats``: how the kernel spread the
connections).

Queries: the requests walk a list of distinct queries once before any repeats (the counter is
shared by the connections): with ``--index``/``--surface-forms`` (e.g. the 1M-entity synthetic ones
of ``bench_linking.py``), the 2,398 Y-ERD queries (``$ELQUERY_DATA/elq/y-erd/queries.json``) and
``--kb-queries`` queries made of the index's own entity titles (``bench_linking.kb_queries``, so
that every one has candidates), shuffled together (seed 0); on the demo knowledge base (the
default) the demo's queries.

Usage: ``python benchmarks/bench_serve.py [--index INDEX --surface-forms SF.db] [--workers 1 2]
[--clients 16] [--first 10] [--seconds 30] [--kb-queries 4000] [--warm-up 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import emit, load_avg_1m, yerd_queries  # noqa: E402
from process_tree import descendants, peak_rss_mb  # noqa: E402

QUERIES = ["new york pizza manhattan", "the music man", "jacksonville fl", "obama's mother", "total recall",
           "statue of liberty", "new jersey devils", "woody allen manhattan", "hoboken", "manhattan cocktail"]


WRK_SCRIPT = """
paths = {%s}
i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[((i - 1) %% #paths) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests": %%d, "seconds": %%.6f, "p50_us": %%d, "p90_us": %%d, "p99_us": %%d, ' ..
    '"max_us": %%d, "errors": %%d}\\n', summary.requests, summary.duration / 1e6, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency.max, e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def load(url: str, clients: int, seconds: float, queries: list[str]) -> dict[str, Any]:
    """A closed loop from wrk (a C load generator, so the load costs the server's cores little):
    ``clients`` connections, each sending GET /link?q=... one after another for ``seconds``, the
    requests walking ``queries`` in order."""
    if shutil.which("wrk") is None:
        raise SystemExit("bench_serve needs wrk (apt-get install wrk)")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", encoding="utf-8") as script:
        script.write(WRK_SCRIPT % ", ".join(f'"/link?q={quote(query)}"' for query in queries))
        script.flush()
        out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{seconds:g}s", "--timeout", "10s", "-s", script.name, url],
                             capture_output=True, text=True, check=True).stdout
    measured = json.loads(out.strip().splitlines()[-1])
    return {"requests": measured["requests"], "requests_per_s": round(measured["requests"] / measured["seconds"], 1),
            **{f"{name}_ms": measured[f"{name}_us"] / 1000 for name in ("p50", "p90", "p99", "max")},
            "errors": measured["errors"]}


def listening(port: int) -> int:
    """The TCP sockets listening on ``port`` (IPv4), from /proc/net/tcp (state 0A)."""
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for line in lines if line.split()[1].endswith(f":{port:04X}") and line.split()[3] == "0A")


def wait_ready(server: subprocess.Popen[bytes], port: int, workers: int) -> list[dict[str, Any]]:
    """Wait until ``workers`` sockets listen on ``port`` and ``/ready`` answers 200; the answers of
    ``/ready`` over a few connections (each worker's warm-up)."""
    import httpx

    deadline = time.monotonic() + 600
    while listening(port) < workers:
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("the server did not start")
        time.sleep(0.05)
    answers: dict[int, dict[str, Any]] = {}
    clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) for _ in range(4 * workers)]
    try:
        for client in clients:
            answer = client.get("/ready")
            if answer.status_code != 200:
                raise SystemExit(f"a listening worker is not ready: {answer.text}")
            answers[answer.json()["worker"]] = answer.json()["warm_up"]
    finally:
        for client in clients:
            client.close()
    return [{"worker": pid, **warmed} for pid, warmed in sorted(answers.items())]


def worker_requests(port: int, workers: int) -> dict[int, int]:
    """The requests each worker has answered (its ``/stats``), asked over new connections until
    every worker has answered (at most 20 tries per worker)."""
    import httpx

    counts: dict[int, int] = {}
    for _ in range(20 * workers):
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            stats = client.get("/stats").json()
        counts[stats["worker"]] = sum(stats["requests"].values())
        if len(counts) == workers:
            break
    return dict(sorted(counts.items()))


def served_queries(index: Path | None, kb_count: int) -> list[str]:
    """The distinct queries the load walks (see the module's docstring)."""
    if index is None:
        return QUERIES
    from bench_linking import kb_queries

    texts = list(dict.fromkeys([*yerd_queries().values(), *(text for _, text in kb_queries(index, kb_count, seed=0))]))
    random.Random(0).shuffle(texts)
    return texts


def in_process(index: Path, surface_forms: Path, gif: dict[str, float], queries: list[str], seconds: float) -> float:
    """Queries/s of ``Linker.result`` in this process, warm, one query after another."""
    from elquery.linking.linker import Linker

    with Linker(index, surface_forms, **gif) as linker:
        for query in queries:
            linker.result(query)
        started, done = time.perf_counter(), 0
        while time.perf_counter() - started < seconds:
            linker.result(queries[done % len(queries)])
            done += 1
        return done / (time.perf_counter() - started)


def serve(command: list[str], workers: int, windows: list[tuple[str, float]], clients: int,
          queries: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]], list[float]]:
    """Start the server with ``workers``, wait for it to be ready, run the load ``windows`` one
    after another; the readiness record, the windows' figures and the peak RSS of its processes."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    server = subprocess.Popen([*command, "--port", str(port), "--workers", str(workers)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        warm_ups = wait_ready(server, port, workers)
        ready = {"ready_s": round(time.monotonic() - started, 2), "warm_ups": warm_ups}
        measured, offset = [], 0
        for name, seconds in windows:
            figures = load(f"http://127.0.0.1:{port}", clients, seconds, queries[offset:] + queries[:offset])
            offset = (offset + figures["requests"]) % len(queries)
            measured.append({"window": name, "seconds": seconds, **figures})
        peaks = list(peak_rss_mb([server.pid, *descendants(server.pid)]).values())
        ready["requests_per_worker"] = list(worker_requests(port, workers).values())
    finally:
        server.terminate()
        server.wait(timeout=30)
    return ready, measured, peaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path)
    parser.add_argument("--surface-forms", type=Path)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--first", type=float, default=10.0, help="seconds of the first window after ready")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds of the next window")
    parser.add_argument("--kb-queries", type=int, default=4000)
    parser.add_argument("--warm-up", type=float, default=None, help="elquery serve --warm-up (default: its own)")
    parser.add_argument("--in-process-seconds", type=float, default=5.0, help="the baseline's seconds (0: none)")
    args = parser.parse_args()
    from elquery.indexing.demo import demo_artefacts

    index, surface_forms = (args.index, args.surface_forms) if args.index else demo_artefacts()
    gif = {} if args.index else {"gif_threshold": 0.25}
    queries = served_queries(args.index, args.kb_queries)
    baseline = in_process(index, surface_forms, gif, queries, args.in_process_seconds) if args.in_process_seconds else None
    command = [sys.executable, "-m", "elquery", "serve"]
    if args.index:
        command += ["--index", str(index), "--surface-forms", str(surface_forms)]
    if args.warm_up is not None:
        command += ["--warm-up", f"{args.warm_up:g}"]
    windows = [("first", args.first), ("next", args.seconds)]
    for workers in args.workers:
        ready, measured, peaks = serve(command, workers, windows, args.clients, queries)
        emit({"bench": "serve_ready", "workers": workers, **ready})  # after the windows: requests_per_worker
        for figures in measured:
            emit({"bench": "serve", "artefacts": str(index), "workers": workers, "clients": args.clients,
                  "distinct_queries": len(queries), "load_generator": "wrk", **figures,
                  "server_peak_rss_mb": round(sum(peaks), 1), "largest_process_peak_rss_mb": round(max(peaks), 1),
                  "in_process_queries_per_s": None if baseline is None else round(baseline, 1),
                  "served_vs_in_process": None if baseline is None else round(figures["requests_per_s"] / baseline, 3),
                  "cpus": os.cpu_count(), "load_avg_1m": load_avg_1m()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
