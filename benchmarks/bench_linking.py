"""Linking benchmark (linking issue): GIF-MLMcg per-query latency, warm, and batch throughput.

Knowledge base: a synthetic DBpedia of ``--entities`` entities (default 1,000,000) from
``benchmarks/synthetic_dbpedia.py`` with its extras (anchor texts, Freebase links), indexed with
``build_dbpedia_index`` and turned into a surface-form store of KB aliases and anchor counts
(``build_store(..., anchors=True)``), all kept in ``--work`` and reused; or existing artefacts
(``--index`` and ``--surface-forms``).

Queries:

* ``y-erd``: the 2,398 Y-ERD queries (``$ELQUERY_DATA/elq/y-erd/queries.json``), real query text;
  against a synthetic KB few of their spans are surface forms, so they mostly measure mention
  detection;
* ``kb``: seeded synthetic queries built from the KB's own entity titles (one or two titles,
  sometimes with an extra word), so every query has candidates and MLM scoring runs.

Per query set, one JSON line per measurement, each next to its baselines from the same run:
``lookup`` (the surface-form span lookup alone), ``gif-cmns`` (no MLM scoring) and
``gif-mlmcg`` (the full pipeline): p50 / p99 / mean latency in ms after a warm-up pass, and the
mean number of candidates per query. Then the batch throughput of ``Linker.link_many`` with 1
(in-process, warm) and ``--workers`` processes (queries/s, with and without the workers' start-up,
and CPU ms per query over all processes: each worker starts a cold JVM whose JIT warm-up costs
CPU over the first thousands of queries; ``ELQUERY_JVM_OPTIONS=-XX:TieredStopAtLevel=1`` trades
peak speed for a cheaper warm-up in short batches).

Then ``linking_threads``: queries/s of 1, 2, 4 and 8 threads in one process (``--threads``), all on
one shared Linker and each on its own, with the speed-up over 1 thread of the same run.

First of all, ``linking_cold``: the cold start, in fresh processes (the artefacts' files in the OS
page cache, as on a machine that has read them before): the wall time of ``elquery link "QUERY"``
end to end (``--cold-runs`` runs, each query a different one of the KB queries), and a breakdown:
imports, opening the linker, the first query, the second, and the median of the next 100.

Usage: ``python benchmarks/bench_linking.py [--work DIR] [--entities N] [--index INDEX
--surface-forms SF.db] [--kb-queries N] [--workers N] [--batch-repeat N] [--gif-threshold S]
[--threads 1 2 4 8] [--cold-runs N] [--cold-only]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from harness import call_times, cpu_seconds, emit, load_avg_1m, percentiles, yerd_queries  # noqa: E402


def build_artefacts(work: Path, entities: int) -> tuple[Path, Path]:
    """Synthetic dumps, index and surface forms for ``entities`` entities under ``work`` (reused)."""
    import synthetic_dbpedia

    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.surface_forms import BuildOptions, build_store

    started = time.perf_counter()
    dumps = synthetic_dbpedia.generate(work / f"dumps-{entities}", entities, extras=True, reuse=True)
    index, surface_forms = work / f"index-{entities}", work / f"surface-forms-{entities}.db"
    steps = {"dumps_s": round(time.perf_counter() - started, 1)}
    if not index.exists():
        started = time.perf_counter()
        build_dbpedia_index(dumps.core_dumps, index)
        steps["index_s"] = round(time.perf_counter() - started, 1)
    if not surface_forms.exists():
        started = time.perf_counter()
        build_store(surface_forms, BuildOptions(tuple(dumps.dumps), anchors=True, progress=False))
        steps["surface_forms_s"] = round(time.perf_counter() - started, 1)
    emit({"bench": "linking_artefacts", "entities": entities, "index": str(index),
          "surface_forms": str(surface_forms), **steps})
    return index, surface_forms


def kb_queries(index: Path, count: int, seed: int) -> list[tuple[str, str]]:
    """Queries made of one or two entity titles of the index (underscores to spaces, qualifiers
    in parentheses dropped), a third of them with one more word from another title."""
    ids = (index / "entity_ids.txt").read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)

    def title() -> str:
        text = unquote(rng.choice(ids)[len("<dbpedia:"):-1]).replace("_", " ")
        return text.split(" (")[0]

    queries = []
    for number in range(count):
        parts = [title() for _ in range(rng.choice((1, 2)))]
        if rng.random() < 1 / 3:
            parts.append(rng.choice(title().split()))
        queries.append((f"kb-{number}", " ".join(parts).lower()))
    return queries


COLD = """
import json, statistics, sys, time
started = time.perf_counter()
from elquery.linking.linker import Linker
imported = time.perf_counter()
index, surface_forms, threshold, *queries = sys.argv[1:]
linker = Linker(index, surface_forms, method="mlmcg", gif_threshold=float(threshold))
opened = time.perf_counter()
times = []
for query in queries:
    begun = time.perf_counter()
    linker.link(query)
    times.append(time.perf_counter() - begun)
print(json.dumps({"import_s": round(imported - started, 3), "open_s": round(opened - imported, 3),
                  "first_query_ms": round(1000 * times[0], 2), "second_query_ms": round(1000 * times[1], 2),
                  "next_100_median_ms": round(1000 * statistics.median(times[2:]), 3)}))
"""


def cold_start(index: Path, surface_forms: Path, queries: Sequence[tuple[str, str]], runs: int,
               gif_threshold: float) -> None:
    """``linking_cold``: ``elquery link "QUERY"`` end to end in fresh processes, then the breakdown
    of one fresh process (imports, open, first, second and the next 100 queries)."""
    import subprocess

    walls = []
    for number in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "elquery", "link", queries[number][1], "--index", str(index),
                        "--surface-forms", str(surface_forms), "--gif-threshold", f"{gif_threshold:g}"],
                       check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
    texts = [text for _, text in queries[runs:runs + 102]]
    out = subprocess.run([sys.executable, "-c", COLD, str(index), str(surface_forms), f"{gif_threshold:g}", *texts],
                         check=True, capture_output=True, text=True).stdout
    emit({"bench": "linking_cold", "cli_wall_s": [round(w, 3) for w in walls],
          "cli_wall_median_s": round(statistics.median(walls), 3), **json.loads(out.strip().splitlines()[-1]),
          "load_avg_1m": load_avg_1m()})


def latencies(function: Callable[[str], object], queries: Sequence[tuple[str, str]]) -> list[float]:
    """Seconds of each query's call, after a warm-up pass over all of them."""
    texts = [query for _, query in queries]
    for query in texts:
        function(query)
    return call_times(function, texts)


def summary(times: list[float]) -> dict[str, float]:
    """The linking latency figures: p50 and p99 by nearest rank, mean and max, in ms."""
    return {"queries": len(times), **percentiles(times, ("p50", "p99", "mean", "max"), nearest_rank=True)}


def throughput(linker: object, queries: Sequence[tuple[str, str]], workers: int) -> dict[str, float]:
    """Queries/s of ``link_many``; the start-up (a pool linking two queries) is timed apart. CPU
    time per query (this process and its finished children, the pool's workers) shows the cost
    apart from how many cores were free."""
    started = time.perf_counter()
    list(linker.link_many(queries[:2], workers=workers))
    startup = time.perf_counter() - started
    started, cpu = time.perf_counter(), cpu_seconds()
    results = list(linker.link_many(queries, workers=workers))
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    assert len(results) == len(queries)
    return {
        "cpu_ms_per_query": round(1000 * cpu / len(queries), 3),
        "workers": workers,
        "queries": len(queries),
        "seconds": round(seconds, 2),
        "queries_per_s": round(len(queries) / seconds, 1),
        "startup_s": round(startup, 2),
        "queries_per_s_after_startup": round(len(queries) / max(seconds - startup, 1e-9), 1),
    }


def thread_throughput(make: Callable[[], object], queries: Sequence[tuple[str, str]], threads: int,
                      shared: object | None) -> dict[str, float]:
    """Queries/s of ``threads`` threads splitting ``queries``, all on the ``shared`` linker or each on
    its own (made by ``make`` before the clock starts)."""
    from concurrent.futures import ThreadPoolExecutor

    linkers = [shared or make() for _ in range(threads)]
    chunks = [queries[i::threads] for i in range(threads)]
    for linker, chunk in zip(linkers, chunks):
        linker.link(chunk[0][1])  # each thread's first call outside the clock

    def work(number: int) -> int:
        for _, query in chunks[number]:
            linkers[number].result(query)
        return len(chunks[number])

    started, cpu = time.perf_counter(), cpu_seconds()
    with ThreadPoolExecutor(threads) as pool:
        done = sum(pool.map(work, range(threads)))
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    return {"threads": threads, "queries": done, "seconds": round(seconds, 2),
            "queries_per_s": round(done / seconds, 1), "cpu_ms_per_query": round(1000 * cpu / done, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-bench-linking"),
                        help="where the synthetic artefacts are built and reused")
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--index", type=Path, help="an existing entity index (with --surface-forms)")
    parser.add_argument("--surface-forms", type=Path, help="an existing surface-form store (with --index)")
    parser.add_argument("--kb-queries", type=int, default=2000, help="synthetic queries from the KB's titles")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-repeat", type=int, default=4, help="the throughput batch: all queries, this many times")
    parser.add_argument("--gif-threshold", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8],
                        help="thread counts of the in-process thread throughput (first one is the baseline)")
    parser.add_argument("--cold-runs", type=int, default=3, help="cold `elquery link` runs (0: no cold start)")
    parser.add_argument("--cold-only", action="store_true", help="measure the cold start only")
    args = parser.parse_args(argv)
    if (args.index is None) != (args.surface_forms is None):
        parser.error("give --index and --surface-forms together")

    from elquery.kb.surface_forms.store import SurfaceFormStore
    from elquery.linking.linker import Linker
    from elquery.kb.normalize import query_tokens

    if args.index is None:
        args.work.mkdir(parents=True, exist_ok=True)
        index, surface_forms = build_artefacts(args.work, args.entities)
    else:
        index, surface_forms = args.index, args.surface_forms
    if args.cold_runs:
        cold_start(index, surface_forms, kb_queries(index, args.cold_runs + 102, args.seed + 1), args.cold_runs,
                   args.gif_threshold)
    if args.cold_only:
        return 0
    started = time.perf_counter()
    mlmcg = Linker(index, surface_forms, method="mlmcg", gif_threshold=args.gif_threshold)
    cmns = Linker(None, surface_forms, method="cmns")
    store = SurfaceFormStore(surface_forms)
    emit({"bench": "linking_open", "seconds": round(time.perf_counter() - started, 2), "index": str(index),
          "surface_forms": str(surface_forms), "cpus": os.cpu_count(), "load_avg_1m": load_avg_1m()})

    query_sets = {"y-erd": list(yerd_queries().items()), "kb": kb_queries(index, args.kb_queries, args.seed)}
    for name, queries in query_sets.items():
        if not queries:
            emit({"bench": "linking_latency", "query_set": name, "skipped": "no queries (ELQUERY_DATA?)"})
            continue
        candidates = [len(mlmcg.result(q).scored) for _, q in queries]
        stages = {
            "lookup": lambda q: store.lookup_spans(query_tokens(q)),
            "gif-cmns": cmns.link,
            "gif-mlmcg": mlmcg.link,
        }
        for stage, function in stages.items():
            emit({"bench": "linking_latency", "query_set": name, "stage": stage, **summary(latencies(function, queries)),
                  "mean_candidates": round(statistics.fmean(candidates), 2),
                  "with_candidates": round(sum(1 for c in candidates if c) / len(candidates), 3),
                  "load_avg_1m": load_avg_1m()})

    batch = [q for queries in query_sets.values() for q in queries] * args.batch_repeat
    for workers in sorted({1, args.workers}):
        emit({"bench": "linking_throughput", "method": "gif-mlmcg", **throughput(mlmcg, batch, workers),
              "load_avg_1m": load_avg_1m()})

    # Threads in one process: one shared Linker vs one per thread, against 1 thread of the same run.
    def make() -> Linker:
        return Linker(index, surface_forms, method="mlmcg", gif_threshold=args.gif_threshold)

    for sharing in ("shared", "per-thread"):
        baseline = None
        for threads in args.threads:
            figures = thread_throughput(make, batch, threads, mlmcg if sharing == "shared" else None)
            baseline = baseline or figures["queries_per_s"]
            emit({"bench": "linking_threads", "method": "gif-mlmcg", "linker": sharing, **figures,
                  "speedup_vs_1_thread": round(figures["queries_per_s"] / baseline, 2),
                  "load_avg_1m": load_avg_1m()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
