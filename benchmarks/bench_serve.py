"""Service benchmark: `elquery serve` on loopback under a bounded closed-loop load, next to
in-process ``Linker.result`` throughput in the same run (the baseline). JSON lines.

The load comes from wrk: each of ``--clients`` connections sends GET /link requests one after
another for ``--seconds``, then stops (closed loop). Reported: requests/s, p50/p99 latency, error
count, and the peak RSS of the server's processes (all of them, and the largest). Artefacts: ``--index``/``--surface-forms`` (e.g. the 1M-entity synthetic
ones of ``bench_linking.py``), queried with 1,000 queries made of the index's own entity titles
(``bench_linking.kb_queries``, so every query has candidates); or, by default, the demo knowledge
base and its example queries.

Usage: ``python benchmarks/bench_serve.py [--index INDEX --surface-forms SF.db] [--workers 2]
[--clients 16] [--seconds 20]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import emit, load_avg_1m  # noqa: E402
from process_tree import descendants, peak_rss_mb  # noqa: E402

QUERIES = ["new york pizza manhattan", "the music man", "jacksonville fl", "obama's mother", "total recall",
           "statue of liberty", "new jersey devils", "woody allen manhattan", "hoboken", "manhattan cocktail"]


WRK_SCRIPT = """
paths = {%s}
i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests": %%d, "seconds": %%.6f, "p50_us": %%d, "p99_us": %%d, "errors": %%d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def load(url: str, clients: int, seconds: float, queries: list[str]) -> dict[str, float]:
    """A closed loop from wrk (a C load generator, so the load costs the server's cores little):
    ``clients`` connections, each sending GET /link?q=... one after another for ``seconds``."""
    from urllib.parse import quote

    if shutil.which("wrk") is None:
        raise SystemExit("bench_serve needs wrk (apt-get install wrk)")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", encoding="utf-8") as script:
        script.write(WRK_SCRIPT % ", ".join(f'"/link?q={quote(query)}"' for query in queries))
        script.flush()
        out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{seconds:g}s", "--timeout", "10s", "-s", script.name, url],
                             capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


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
        base = f"http://127.0.0.1:{port}"
        load(base, args.clients, 2.0, queries)  # warm-up
        measured = load(base, args.clients, args.seconds, queries)
        peaks = list(peak_rss_mb([server.pid, *descendants(server.pid)]).values())
    finally:
        server.terminate()
        server.wait(timeout=30)
    served = measured["requests"] / measured["seconds"]
    emit({"bench": "serve", "artefacts": str(index), "workers": args.workers, "clients": args.clients,
          "seconds": args.seconds, "load_generator": "wrk", "requests": measured["requests"],
          "requests_per_s": round(served, 1), "p50_ms": measured["p50_us"] / 1000,
          "p99_ms": measured["p99_us"] / 1000, "errors": measured["errors"],
          "server_peak_rss_mb": round(sum(peaks), 1),
          "largest_process_peak_rss_mb": round(max(peaks), 1),
          "in_process_queries_per_s": round(in_process, 1),
          "served_vs_in_process": round(served / in_process, 3), "cpus": os.cpu_count(),
          "load_avg_1m": load_avg_1m()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
