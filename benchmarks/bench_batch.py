"""Batch linking benchmark (scale-out issue): queries/s of GIF-MLMcg over a query file, as
``elquery link --queries FILE`` runs it, on each engine, against in-process linking in the same run.

Artefacts: the synthetic DBpedia of ``benchmarks/bench_linking.py`` (``--entities``, default
1,000,000, built in ``--work`` and reused). Queries: ``--queries`` seeded synthetic queries made of
the KB's entity titles (``bench_linking.kb_queries``: every query has candidates and MLM scoring
runs), each measured batch a prefix of them.

Engines, per batch size (``--sizes``), each producing the elq run text of every query:

* ``in-process``: one warm linker in this process (the baseline of every ratio);
* ``local``: ``Linker.link_many(..., workers=N, encode=RunFormat)`` with ``--workers`` processes
  (start-up included: the pool is part of the job), and ``local-results``: the same returning the
  ``LinkResult`` objects (the Python API), to show what sending results instead of text costs;
* ``cli-1`` and ``cli-N``: the command itself, ``elquery link --queries FILE --out FILE`` with
  ``--workers 1`` and ``--workers N`` in a new process each (JVM start, loading and JIT warm-up
  included, as a user runs it; ``ratio_to_cli_1`` compares the two);
* ``spark``: ``link_spark`` on a ``local[N]`` Spark session (``--spark``; the session is started
  before the clock, each executor's start-up is inside it), with the peak RSS of the Spark driver JVM
  and of its Python workers, and its rate as a ratio to the ``local`` pool's (``ratio_to_local``).

Each line: queries/s, wall and CPU seconds (all processes of the job), the ratio to in-process
queries/s, and the peak RSS in MB of this process and its children.

Usage: ``python benchmarks/bench_batch.py [--work DIR] [--entities N] [--queries N]
[--sizes 10000 100000] [--workers 2] [--spark]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from harness import cpu_seconds, emit, load_avg_1m, max_rss_mb  # noqa: E402
from process_tree import descendants, peak_rss_mb  # noqa: E402


def process_tree_cpu(root: int) -> float:
    """CPU seconds of the live descendants of ``root`` (the Spark JVM and its Python workers are
    not reaped by this process while the session lives, so RUSAGE_CHILDREN misses them)."""
    return sum(figures.own_cpu for figures in descendants(root).values())


def timed(run, count: int) -> dict[str, object]:
    started, cpu, tree = time.perf_counter(), cpu_seconds(), process_tree_cpu(os.getpid())
    produced = sum(1 for _ in run())
    seconds = time.perf_counter() - started
    used = cpu_seconds() - cpu + process_tree_cpu(os.getpid()) - tree
    assert produced == count, (produced, count)
    return {"queries": count, "wall_s": round(seconds, 2), "cpu_s": round(used, 2),
            "queries_per_s": round(count / seconds, 1), "cpu_ms_per_query": round(1000 * used / count, 3)}


def command_run(index: Path, surface_forms: Path, queries: Path, out: Path, workers: int) -> list[str]:
    """``elquery link`` over a query file in a new process; the lines of the ``jsonl`` run it wrote
    (one per query, which the caller counts)."""
    subprocess.run([sys.executable, "-m", "elquery", "link", "--index", str(index), "--surface-forms",
                    str(surface_forms), "--queries", str(queries), "--format", "jsonl", "--out", str(out),
                    "--workers", str(workers)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with out.open(encoding="utf-8") as lines:
        return [line for line in lines]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-bench-linking"))
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100_000, help="synthetic queries made (default 100000)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="batch sizes measured")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spark", action="store_true", help="also Spark local[--workers]")
    parser.add_argument("--engines", nargs="+", default=["in-process", "local", "local-results", "cli-1", "cli-N"],
                        help="engines measured (spark is added by --spark)")
    args = parser.parse_args(argv)

    import bench_linking

    from elquery.linking.linker import Linker
    from elquery.linking.output import RunFormat

    args.work.mkdir(parents=True, exist_ok=True)
    index, surface_forms = bench_linking.build_artefacts(args.work, args.entities)
    queries = bench_linking.kb_queries(index, max(max(args.sizes), args.queries), seed=5)
    run_format = RunFormat("elq", "bench")
    linker = Linker(index, surface_forms)
    for qid, query in queries[:2000]:  # this process's JIT warm-up, before any clock
        linker.result(query, qid)
    master = f"local[{args.workers}]"
    if args.spark:
        from elquery.linking.spark import link_spark
        from elquery.spark import session

        spark_session = session(master)
    for size in args.sizes:
        batch = queries[:size]
        runs = {
            "in-process": lambda: (run_format(linker.result(q, i)) for i, q in batch),
            "local": lambda: linker.link_many(batch, args.workers, run_format),
            "local-results": lambda: linker.link_many(batch, args.workers),
        }
        if args.spark:
            runs["spark"] = lambda: link_spark(linker.factory(), batch, run_format, master)
        query_file = args.work / f"queries-{size}.tsv"
        query_file.write_text("".join(f"{qid}\t{query}\n" for qid, query in batch), encoding="utf-8")
        for workers, engine in ((1, "cli-1"), (args.workers, "cli-N")):
            runs[engine] = partial(command_run, index, surface_forms, query_file, args.work / "run.jsonl", workers)
        baseline = cli_one = local_rate = None
        for engine in [e for e in args.engines if e in runs] + (["spark"] if args.spark else []):
            record = timed(runs[engine], size)
            baseline = baseline or (record["queries_per_s"] if engine == "in-process" else None)
            extra = {"workers": args.workers} if engine != "in-process" else {}
            if engine.startswith("cli"):
                extra = {"workers": 1 if engine == "cli-1" else args.workers}
                cli_one = record["queries_per_s"] if engine == "cli-1" else cli_one
                if engine == "cli-N" and cli_one:
                    extra["ratio_to_cli_1"] = round(record["queries_per_s"] / cli_one, 2)
            local_rate = record["queries_per_s"] if engine == "local" else local_rate
            if engine == "spark":
                extra = {"master": master, "peak_rss_mb": peak_rss_mb(list(descendants(os.getpid())))}
                if local_rate:
                    extra["ratio_to_local"] = round(record["queries_per_s"] / local_rate, 2)
            emit({"bench": "batch_linking", "engine": engine, "entities": args.entities, **record, **extra,
                  "ratio_to_in_process": round(record["queries_per_s"] / baseline, 2) if baseline else None,
                  "self_peak_rss_mb": int(max_rss_mb()), "load_avg_1m": load_avg_1m()})
    if args.spark:
        spark_session.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
