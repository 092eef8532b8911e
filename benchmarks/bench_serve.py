"""Service benchmark: `elquery serve` on loopback under a bounded closed-loop load, next to
in-process ``Linker.result`` throughput in the same run (the baseline). JSON lines.

Each of ``--clients`` concurrent clients sends GET /link requests one after another for
``--seconds``, then stops; reported: requests/s, p50/p99 latency, error count, and the peak RSS of
the server's processes. Artefacts: ``--index``/``--surface-forms`` (e.g. the 1M-entity synthetic
ones of ``bench_linking.py``), queried with 1,000 queries made of the index's own entity titles
(``bench_linking.kb_queries``, so every query has candidates); or, by default, the demo knowledge
base and its example queries.

Usage: ``python benchmarks/bench_serve.py [--index INDEX --surface-forms SF.db] [--workers 2]
[--clients 16] [--seconds 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

QUERIES = ["new york pizza manhattan", "the music man", "jacksonville fl", "obama's mother", "total recall",
           "statue of liberty", "new jersey devils", "woody allen manhattan", "hoboken", "manhattan cocktail"]


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (MB), from /proc."""
    total, frontier = 0, [pid]
    while frontier:
        current = frontier.pop()
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        frontier += [int(c) for c in children]
    return total / 2**20


async def load(url: str, clients: int, seconds: float, queries: list[str]) -> tuple[list[float], int]:
    import httpx

    latencies: list[float] = []
    errors = 0
    stop = time.monotonic() + seconds

    async def client(number: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(timeout=30) as http:
            i = number
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    response = await http.get(url, params={"q": queries[i % len(queries)]})
                    errors += response.status_code != 200
                except httpx.HTTPError:
                    errors += 1
                latencies.append(time.perf_counter() - started)
                i += clients

    await asyncio.gather(*(client(n) for n in range(clients)))
    return latencies, errors


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path)
    parser.add_argument("--surface-forms", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    from elquery.indexing.demo import demo_artefacts
    from elquery.linking.linker import Linker

    index, surface_forms = (args.index, args.surface_forms) if args.index else demo_artefacts()
    gif = {} if args.index else {"gif_threshold": 0.25}
    queries = QUERIES
    if args.index:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_linking import kb_queries

        queries = [text for _, text in kb_queries(index, 1000, seed=0)]
    with Linker(index, surface_forms, **gif) as linker:  # baseline: in-process, warm
        for query in queries:
            linker.result(query)
        started, done = time.perf_counter(), 0
        while time.perf_counter() - started < min(args.seconds, 5):
            linker.result(queries[done % len(queries)])
            done += 1
        in_process = done / (time.perf_counter() - started)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "elquery", "serve", "--port", str(port), "--workers", str(args.workers)]
    if args.index:
        command += ["--index", str(index), "--surface-forms", str(surface_forms)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import httpx

        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.3)
        time.sleep(2 * args.workers)  # every worker up
        asyncio.run(load(f"http://127.0.0.1:{port}/link", args.clients, 2.0, queries))  # warm-up
        latencies, errors = asyncio.run(load(f"http://127.0.0.1:{port}/link", args.clients, args.seconds, queries))
        peak = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    served = len(latencies) / args.seconds
    print(json.dumps({"bench": "serve", "artefacts": str(index), "workers": args.workers, "clients": args.clients, "seconds": args.seconds,
                      "requests": len(latencies), "requests_per_s": round(served, 1),
                      "p50_ms": percentile(latencies, 0.5), "p99_ms": percentile(latencies, 0.99), "errors": errors,
                      "server_rss_mb": round(peak, 1), "in_process_queries_per_s": round(in_process, 1),
                      "served_vs_in_process": round(served / in_process, 3), "cpus": os.cpu_count(),
                      "load_avg_1m": round(os.getloadavg()[0], 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
