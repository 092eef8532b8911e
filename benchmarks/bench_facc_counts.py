"""Raw FACC1 counting benchmark: `elquery index facc-counts` on generated annotation files next to
a baseline measured in the same run, a one-process ``collections.Counter`` over the same lines
(read, split, count; no normalization, no validation, no bounded memory). JSON lines.

Generated input (seeded, cached in ``--work``): ``--files`` gzip files in FACC1's eight-column
layout; mentions Zipfian (s = 1) over ``--forms`` distinct two- or three-word forms in three case
variants, each with a dominant mid and a Zipfian tail, posteriors uniform, one line in a thousand
malformed. For each ``--lines`` size: wall time, lines/s of both, their ratio, the peak RSS of
the counting processes (all of them, sampled from /proc), and the number of (form, mid) pairs.

Usage: ``python benchmarks/bench_facc_counts.py [--lines 10000000 50000000] [--workers 2]
[--memory 512] [--work /tmp/elquery-facc-bench]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

WORDS = 5_000
CHUNK = 1_000_000


def generate(directory: Path, lines: int, files: int, forms: int, seed: int = 0) -> list[Path]:
    """``files`` gzip files holding ``lines`` annotation lines in all (reused when present)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{number:03d}.anns.tsv.gz" for number in range(files)]
    manifest = directory / "manifest.json"
    spec = {"lines": lines, "files": files, "forms": forms, "seed": seed}
    if manifest.exists() and json.loads(manifest.read_text()) == spec:
        return paths
    rng = np.random.default_rng(seed)
    vocabulary = ["".join(chr(97 + c) for c in rng.integers(0, 26, rng.integers(3, 9))) for _ in range(WORDS)]
    base = [" ".join(vocabulary[w] for w in rng.integers(0, WORDS, rng.integers(2, 4))) for _ in range(forms)]
    variants = [[b, b.title(), b.upper()] for b in base]
    ranks = np.arange(1, forms + 1, dtype=np.float64)
    form_cdf = np.cumsum(1 / ranks)
    form_cdf /= form_cdf[-1]
    tail_cdf = np.cumsum(1 / np.arange(1, 17, dtype=np.float64) ** 2)
    tail_cdf /= tail_cdf[-1]
    per_file = -(-lines // files)
    for number, path in enumerate(paths):
        count = min(per_file, lines - number * per_file)
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
            for start in range(0, count, CHUNK):
                size = min(CHUNK, count - start)
                chosen = np.searchsorted(form_cdf, rng.random(size))
                case = rng.choice(3, size, p=[0.6, 0.3, 0.1])
                mids = chosen * 3 // 2 + np.searchsorted(tail_cdf, rng.random(size))
                posteriors = rng.random(size)
                offsets = rng.integers(0, 100_000, size)
                out.write("".join(
                    f"clueweb09-en{number:04d}-00-{start + i:05d}\tUTF-8\t{variants[f][c]}\t{o}\t{o + 12}\t{p:.6f}\t0.0001\t/m/0{m:x}\n"
                    if (start + i) % 1000 else f"clueweb09-en{number:04d}\tUTF-8\tbroken line\n"
                    for i, (f, c, m, p, o) in enumerate(zip(chosen.tolist(), case.tolist(), mids.tolist(),
                                                             posteriors.tolist(), offsets.tolist()))))
    manifest.write_text(json.dumps(spec))
    return paths


def baseline(paths: list[Path]) -> tuple[float, int]:
    """One process, a plain Counter of (mention, mid): the simplest count of the same lines."""
    started = time.perf_counter()
    counts: Counter[tuple[str, str]] = Counter()
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 8:
                    counts[(parts[2], parts[7])] += 1
    return time.perf_counter() - started, len(counts)


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants (MB), from /proc."""
    total, frontier = 0, [pid]
    while frontier:
        current = frontier.pop()
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            frontier += [int(c) for c in Path(f"/proc/{current}/task/{current}/children").read_text().split()]
        except OSError:
            continue
    return total / 2**20


def elquery_counts(paths: list[Path], out: Path, workers: int, memory: int) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB, all processes) of `elquery index facc-counts`."""
    command = [sys.executable, "-m", "elquery", "index", "facc-counts", *map(str, paths), "--out", str(out),
               "--workers", str(workers), "--memory", str(memory)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, tree_rss_mb(process.pid))
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"facc-counts failed: {process.stderr.read() if process.stderr else ''}")
    return seconds, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[10_000_000, 50_000_000])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--forms", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory", type=int, default=512)
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-facc-bench"))
    args = parser.parse_args()
    for lines in args.lines:
        paths = generate(args.work / f"lines-{lines}", lines, args.files, args.forms)
        seconds, peak = elquery_counts(paths, args.work / f"counts-{lines}.tsv", args.workers, args.memory)
        pairs = sum(1 for _ in open(args.work / f"counts-{lines}.tsv", encoding="utf-8"))
        base_seconds, base_pairs = baseline(paths)
        print(json.dumps({"bench": "facc_counts", "lines": lines, "files": args.files, "workers": args.workers,
                          "memory_mb_per_worker": args.memory, "seconds": round(seconds, 2),
                          "lines_per_s": round(lines / seconds), "peak_rss_mb_all_processes": round(peak, 1),
                          "pairs": pairs, "baseline_seconds": round(base_seconds, 2),
                          "baseline_lines_per_s": round(lines / base_seconds), "baseline_raw_pairs": base_pairs,
                          "speedup_vs_baseline": round(base_seconds / seconds, 2), "cpus": os.cpu_count(),
                          "load_avg_1m": round(os.getloadavg()[0], 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
