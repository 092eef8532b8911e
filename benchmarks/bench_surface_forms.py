"""Benchmark of the surface-form store (methods.md §3) on seeded synthetic FACC data.

Generates (or reuses, in ``--data-dir``) FACC-format count files of ``--rows`` rows (default 20M;
Zipf over 2M forms and 3M entities, case variants, a Freebase mapping; see ``synthetic_facc``),
builds the store from them, and measures lookups. Prints JSON lines:

- ``build``: rows, seconds, rows/s (whole build, mapping included) and of the FACC step alone,
  seconds per step, CPU seconds (all processes), peak RSS of the building process and of the
  largest worker (MB), store size (MB), forms, pairs, entities, and the 1-minute load average
  (the machine may be shared);
- ``lookup`` for ``hit`` / ``miss`` (``lookup(text)``, normalization included) and ``spans``
  (``lookup_spans`` of a 4-token query): p50 / p99 / mean in microseconds.

Usage: ``python benchmarks/bench_surface_forms.py [--rows N] [--data-dir DIR] [--workers N]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from elquery.indexing.surface_forms import BuildOptions, build_store  # noqa: E402
from elquery.kb.normalize import query_tokens  # noqa: E402
from elquery.kb.surface_forms.store import SurfaceFormStore  # noqa: E402
from harness import call_times, emit, load_avg_1m, max_rss_mb, percentiles  # noqa: E402


def _data(data_dir: Path, rows: int, seed: int) -> Path:
    """Generate the synthetic data in a child process (so its memory is not counted) unless the
    directory already holds data of the same size and seed."""
    forms, entities = (2_000_000, 3_000_000) if rows >= 2_000_000 else (max(rows // 10, 10), max(rows * 3 // 20, 15))
    files = 20 if rows >= 200_000 else 4
    manifest = data_dir / "manifest.json"
    spec = {"rows": rows, "forms": forms, "entities": entities, "files": files, "seed": seed}
    if manifest.exists() and json.loads(manifest.read_text())["spec"] == spec:
        return data_dir
    command = [sys.executable, str(REPO / "benchmarks" / "synthetic_facc.py"), str(data_dir)]
    command += [f"--{k}={v}" for k, v in spec.items()]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    manifest.write_text(output)
    return data_dir


def _sample_forms(facc_dir: Path, count: int, rng: random.Random) -> list[str]:
    """Raw surface forms drawn from the count files (so hits follow the Zipf distribution)."""
    forms: list[str] = []
    for path in sorted(facc_dir.glob("*.tsv")):
        with open(path, encoding="utf-8") as handle:
            forms += [line.split("\t", 1)[0] for _, line in zip(range(count), handle)]
    return rng.sample(forms, min(count, len(forms)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data-dir", type=Path, help="keep (and reuse) the synthetic data here")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--lookups", type=int, default=100_000)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="bench-sf-"))
    try:
        data = _data(args.data_dir or scratch / "data", args.rows, args.seed)
        data.mkdir(parents=True, exist_ok=True)
        facc = tuple(sorted((data / "facc").glob("*.tsv")))
        out = scratch / "sf.db"
        start = time.perf_counter()
        report = build_store(out, BuildOptions(dumps=(data / "dumps",), facc=facc, workers=args.workers, progress=False))
        seconds = time.perf_counter() - start
        emit({
            "bench": "surface_forms_build",
            "rows": report.facc.rows,
            "workers": args.workers,
            "seconds": round(seconds, 2),
            "rows_per_s": round(report.facc.rows / seconds),
            "facc_step_rows_per_s": round(report.facc.rows / report.seconds["facc"]),
            "step_seconds": {step: round(value, 2) for step, value in report.seconds.items()},
            "cpu_seconds": round(sum(resource.getrusage(who).ru_utime for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)), 1),
            "peak_rss_mb_main": round(max_rss_mb()),
            "peak_rss_mb_largest_worker": round(max_rss_mb(resource.RUSAGE_CHILDREN)),
            "store_mb": round(out.stat().st_size / 2**20, 1),
            "forms": report.forms,
            "pairs": report.pairs,
            "entities": report.entities,
            "load_avg_1m": load_avg_1m(),
        })
        rng = random.Random(args.seed)
        hits = _sample_forms(data / "facc", args.lookups, rng)
        misses = [f"zz{rng.randrange(10**9)} qx{i}" for i in range(len(hits))]
        queries = [query_tokens(f"{a} {b}") for a, b in zip(hits, reversed(hits))]
        with SurfaceFormStore(out) as store:
            for warm in hits[:1000]:
                store.lookup(warm)
            found = sum(1 for text in hits[:1000] if store.lookup(text))
            for kind, function, arguments in (
                ("hit", store.lookup, hits),
                ("miss", store.lookup, misses),
                ("spans", store.lookup_spans, queries[: len(queries) // 10]),
            ):
                times = call_times(function, arguments)
                record = {"bench": "surface_forms_lookup", "kind": kind, "n": len(times),
                          **percentiles(times, ("p50", "p99", "mean"), unit="us", digits=2, nearest_rank=True)}
                if kind == "hit":
                    record["hit_rate"] = found / 1000
                emit(record)
    finally:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
