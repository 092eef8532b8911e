"""Raw FACC1 counting benchmark: `elquery index facc-counts` on generated annotation files next to
a baseline measured in the same run, a one-process ``collections.Counter`` over the same lines
(read, split, count; no normalization, no validation, no bounded memory). JSON lines.

Generated input (seeded, cached in ``--work``): ``synthetic_facc.generate_annotations``, ``--files``
gzip files in FACC1's eight-column layout; mentions Zipfian (s = 1) over ``--forms`` distinct
two-word forms in three case variants, each with a dominant mid and a Zipfian tail, posteriors
uniform, one line in a thousand malformed. For each ``--lines`` size: wall time, lines/s of both,
their ratio, the CPU seconds of both (user + system, all processes: lines per CPU second does
not depend on what else the machine runs), the peak RSS of the counting processes (all of them,
sampled from /proc), and the number of (form, mid) pairs. Peak RSS stops growing once every file
has spilled a couple of runs; with the default ``--memory 512`` the 10M-line files (1.25M lines
each) spill once, so ``--memory 128`` shows the bound at both sizes.

With ``--spark``, the same command with ``--engine spark --master local[--workers]`` follows on the
same files (a second line, ``engine: spark``): its figures, whether its counts file is the local
engine's byte for byte, and its speed as a ratio to the local engine's (``ratio_to_local``).

Usage: ``python benchmarks/bench_facc_counts.py [--lines 10000000 50000000] [--workers 2]
[--memory 512] [--spark] [--work /tmp/elquery-facc-bench]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import TreeSampler, cpu_seconds, emit, load_avg_1m  # noqa: E402
from synthetic_facc import SyntheticSpec, generate_annotations  # noqa: E402


def generate(directory: Path, spec: SyntheticSpec) -> list[Path]:
    """The annotation files of ``spec`` in ``directory``, generated unless already there."""
    manifest = directory / "manifest.json"
    if manifest.exists() and json.loads(manifest.read_text()) == asdict(spec):
        return sorted(directory.glob("*.anns.tsv.gz"))
    paths = generate_annotations(directory, spec)
    manifest.write_text(json.dumps(asdict(spec)))
    return paths


def baseline(paths: list[Path]) -> tuple[float, float, int]:
    """One process, a plain Counter of (mention, mid): the simplest count of the same lines
    (wall seconds, CPU seconds, raw pairs)."""
    started, cpu = time.perf_counter(), time.process_time()
    counts: Counter[tuple[str, str]] = Counter()
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 8:
                    counts[(parts[2], parts[7])] += 1
    return time.perf_counter() - started, time.process_time() - cpu, len(counts)


def elquery_counts(paths: list[Path], out: Path, workers: int, memory: int,
                   spark: bool = False) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB, all processes) of `elquery index facc-counts`
    (``spark``: with ``--engine spark --master local[workers]``). CPU is the larger of the reaped
    children's and the sampled tree's (:class:`harness.TreeSampler`, every 0.2 s)."""
    command = [sys.executable, "-m", "elquery", "index", "facc-counts", *map(str, paths), "--out", str(out)]
    if spark:
        command += ["--engine", "spark", "--master", f"local[{workers}]"]
    else:
        command += ["--workers", str(workers), "--memory", str(memory)]
    started, cpu = time.perf_counter(), cpu_seconds([resource.RUSAGE_CHILDREN])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with TreeSampler(process.pid, 0.2) as sampled:
        process.wait()
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"facc-counts failed: {process.stderr.read() if process.stderr else ''}")
    return seconds, max(cpu_seconds([resource.RUSAGE_CHILDREN]) - cpu, sampled.cpu_s), sampled.peak_rss_mb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[10_000_000, 50_000_000])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--forms", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory", type=int, default=512)
    parser.add_argument("--spark", action="store_true", help="also the Spark engine, local[--workers]")
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-facc-bench"))
    args = parser.parse_args()
    for lines in args.lines:
        spec = SyntheticSpec(rows=lines, forms=args.forms, entities=args.forms * 3 // 2 + 16, files=args.files, seed=0)
        paths = generate(args.work / f"lines-{lines}", spec)
        seconds, cpu, peak = elquery_counts(paths, args.work / f"counts-{lines}.tsv", args.workers, args.memory)
        with open(args.work / f"counts-{lines}.tsv", encoding="utf-8") as counts:
            pairs = sum(1 for _ in counts)
        base_seconds, base_cpu, base_pairs = baseline(paths)
        emit({"bench": "facc_counts", "lines": lines, "files": args.files, "workers": args.workers,
              "memory_mb_per_worker": args.memory, "seconds": round(seconds, 2),
              "lines_per_s": round(lines / seconds), "cpu_seconds": round(cpu, 2),
              "lines_per_cpu_s": round(lines / cpu), "peak_rss_mb_all_processes": round(peak, 1),
              "pairs": pairs, "baseline_seconds": round(base_seconds, 2),
              "baseline_lines_per_s": round(lines / base_seconds), "baseline_cpu_seconds": round(base_cpu, 2),
              "baseline_lines_per_cpu_s": round(lines / base_cpu), "baseline_raw_pairs": base_pairs,
              "speedup_vs_baseline": round(base_seconds / seconds, 2),
              "cpu_ratio_vs_baseline": round(cpu / base_cpu, 2), "cpus": os.cpu_count(),
              "load_avg_1m": load_avg_1m()})
        if args.spark:
            out = args.work / f"counts-{lines}-spark.tsv"
            spark_seconds, spark_cpu, spark_peak = elquery_counts(paths, out, args.workers, args.memory, spark=True)
            same = out.read_bytes() == (args.work / f"counts-{lines}.tsv").read_bytes()
            emit({"bench": "facc_counts", "engine": "spark", "master": f"local[{args.workers}]",
                  "lines": lines, "files": args.files, "seconds": round(spark_seconds, 2),
                  "lines_per_s": round(lines / spark_seconds), "cpu_seconds": round(spark_cpu, 2),
                  "lines_per_cpu_s": round(lines / spark_cpu),
                  "peak_rss_mb_all_processes": round(spark_peak, 1), "same_counts_as_local": same,
                  "ratio_to_local": round(seconds / spark_seconds, 2),
                  "load_avg_1m": load_avg_1m()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
