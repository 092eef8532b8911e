"""LTR benchmark (issue 29.6, the forest's part): training time on a Y-ERD-sized features file,
and forest inference of the compiled engine and of onnxruntime against scikit-learn's own
``predict`` on the same 1,000-tree model and the same rows, measured in one run.

Prints JSON lines: ``machine``; ``train`` (what ``elquery ltr train`` does: read the file, fit the
forest with ``--workers`` threads, write the ONNX model; wall and CPU seconds, the forest's size,
the model file's size); ``load`` per engine; ``inference`` per batch size and engine: per-batch
wall, calling-thread CPU and process CPU (every thread) p50/p99 in ms, the ratios to
scikit-learn's calling-thread CPU p50: ``speedup_p50`` (over the engine's calling-thread CPU p50:
on two free cores a two-thread call's wall time is about that, its other thread working as long
beside it), ``speedup_process_cpu_p50`` (over the CPU of all its threads: what it costs the
machine) and ``speedup_wall_p50`` (wall over wall: on a busy machine a second thread may wait for
a core), and ``max_abs_diff`` from scikit-learn's predictions (0: the same
numbers). Engines: scikit-learn's ``predict`` (one thread, ``n_jobs=None``), the compiled engine
on one thread and on two (it walks a batch on two threads from
``elquery.linking.ltr.forest.PARALLEL_PAIRS`` (tree, row) pairs), onnxruntime (one thread). Each
timed call runs with the garbage collector off; every repetition scores other rows, so a batch
finds no tree path warm in the caches from the previous call.

Batches (``--sizes``, default 1, 10, 30, 100, 300, 1000, 10000 rows): up to 300 rows, one query's
candidate pairs (a query of that many candidates); above, many queries' pairs, as a batch of
queries gives them; all held out from training (with ``--features``, consecutive rows of the file). ``--batches`` calls per size up to 100 rows,
fewer for more rows (``--batches`` * 100 / rows, at least 5).

Data: a real features file (``--features``, as ``elquery ltr features --qrels`` writes), or a
synthetic one shaped like Y-ERD's (``--queries`` queries, default 2,400, log-normal candidates
per query, median 7, about 10 on average: some 24,000 rows): per query a few mentions; per pair
commonness (Beta(5, 2) for the pairs to be labelled 1, Beta(1, 4) otherwise, at least 0.1), the
title tests more often true for them, log-normal counts and language-model scores shifted up for
them, a short-abstract position or 1000; 55% of the queries have one entity labelled 1, and 5% of
all labels are flipped (annotation noise). A fully grown forest's size follows that noise, so the
figures are for this data; ``--features`` measures a real file.

Usage:
    python benchmarks/bench_ltr.py [--features FILE] [--queries N] [--trees N] [--workers N]
        [--sizes 1,10,...] [--batches N] [--seed N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from harness import cpu_seconds, emit, machine, percentiles  # noqa: E402

from elquery.linking.ltr.feature_file import KEY_COLUMNS, number_text, read_features  # noqa: E402
from elquery.linking.ltr.features import FEATURES  # noqa: E402
from elquery.linking.ltr.forest import CompiledEngine, from_sklearn
from elquery.linking.ltr.model import LtrModel, model_bytes, new_info, train_forest, write_model  # noqa: E402

BATCH_SIZES = (1, 10, 30, 100, 300, 1000, 10000)
QUERY_ROWS = 300
"""Batches of up to this many rows are one query's candidates; larger ones many queries'."""


def synthetic_query(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The feature rows and labels of one synthetic query with ``size`` candidate pairs."""
    index = {name: n for n, name in enumerate(FEATURES)}
    rows = np.zeros((size, len(FEATURES)))
    query_tokens = int(rng.integers(1, 7))
    relevant = np.zeros(size, dtype=bool)
    if rng.random() < 0.55:
        relevant[rng.integers(size)] = True
    r = relevant.astype(float)

    def column(name: str, values: np.ndarray) -> None:
        rows[:, index[name]] = values

    length = rng.integers(1, query_tokens + 1, size)
    column("len", length)
    ntem = rng.poisson(0.3 + 0.7 * r)
    column("ntem", ntem)
    column("smil", ntem + rng.poisson(0.5, size))
    column("matches", np.floor(rng.lognormal(2.0, 1.2, size)) + 1)
    column("len_ratio", length / query_tokens)
    column("redirects", np.floor(rng.lognormal(1.0 + r, 1.5, size)))
    column("links", np.floor(rng.lognormal(4.0 + 0.5 * r, 1.0, size)))
    column("commonness", np.maximum(0.1, np.where(relevant, rng.beta(5, 2, size), rng.beta(1, 4, size))))
    for name in ("mct", "tcm", "tem", "qct", "tcq", "teq"):
        column(name, rng.random(size) < 0.15 + 0.5 * r)
    column("pos1", np.where(rng.random(size) < 0.6 - 0.3 * r, 1000, rng.integers(0, 300, size)))
    for name in ("mtitle", "msAbs", "mlAbs", "mlinks", "mcats", "mcatchall", "mlm-tc",
                 "qtitle", "qsAbs", "qlAbs", "qlinks", "qcats", "qcatchall"):
        column(name, np.where(rng.random(size) < 0.3, 0.0, rng.lognormal(r, 1.5, size)))
    labels = relevant.astype(int)
    noise = rng.random(size) < 0.05
    labels[noise] = 1 - labels[noise]
    return rows, labels


def candidates(rng: np.random.Generator) -> int:
    return int(min(150, max(1, round(rng.lognormal(np.log(7), 0.8)))))


def write_synthetic(path: Path, queries: int, rng: np.random.Generator) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write("\t".join((*KEY_COLUMNS, *FEATURES)) + "\n")
        for q in range(queries):
            rows, labels = synthetic_query(rng, candidates(rng))
            for n, (row, label) in enumerate(zip(rows, labels)):
                keys = (f"q{q}", f"mention {n}", "0", "1", f"<dbpedia:Entity_{q}_{n}>", str(label))
                out.write("\t".join((*keys, *map(number_text, row))) + "\n")


def held_out_batch(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` feature rows: one query's candidates up to :data:`QUERY_ROWS` rows, else the rows of
    as many synthetic queries (Y-ERD's candidate counts) as it takes."""
    if size <= QUERY_ROWS:
        return synthetic_query(rng, size)[0]
    parts, rows = [], 0
    while rows < size:
        parts.append(synthetic_query(rng, candidates(rng))[0])
        rows += len(parts[-1])
    return np.vstack(parts)[:size]


def time_calls(predict: Callable[[np.ndarray], np.ndarray], batches: list[np.ndarray],
               expected: list[np.ndarray]) -> tuple[dict[str, list[float]], float]:
    """Wall, calling-thread CPU and process CPU seconds of ``predict`` on each batch (the garbage
    collector off during each call), and the largest absolute difference from ``expected``."""
    times: dict[str, list[float]] = {"wall": [], "cpu": [], "process_cpu": []}
    worst = 0.0
    for batch, wanted in zip(batches, expected):
        gc.disable()
        try:
            wall, cpu, process = time.perf_counter(), time.thread_time(), time.process_time()
            scores = predict(batch)
            times["process_cpu"].append(time.process_time() - process)
            times["cpu"].append(time.thread_time() - cpu)
            times["wall"].append(time.perf_counter() - wall)
        finally:
            gc.enable()
        worst = max(worst, float(np.abs(scores - wanted).max()))
    return times, worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=Path, help="a labelled TSV features file (default: synthetic)")
    parser.add_argument("--queries", type=int, default=2400, help="synthetic queries (default 2400)")
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="training threads (default 2)")
    parser.add_argument("--sizes", default=",".join(map(str, BATCH_SIZES)),
                        help="rows per batch, comma-separated (default %(default)s)")
    parser.add_argument("--batches", type=int, default=100, help="calls per size up to 100 rows (default 100)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="write the features file and model here (default: a temporary folder)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    emit({"bench": "machine", **machine()})
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        features = args.features or folder / "features.tsv"
        if args.features is None:
            write_synthetic(features, args.queries, rng)
        model_path = folder / "model.onnx"

        wall, cpu = time.perf_counter(), cpu_seconds()
        table = read_features(features)
        forest = train_forest(table.matrix, table.labels, args.trees, 3, args.seed, args.workers)
        fitted_wall, fitted_cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        info = new_info(forest, {"file": features.name, "sha256": table.sha256, "rows": len(table.labels),
                                 "queries": table.queries, "positives": int(table.labels.sum())},
                        {"index": None, "surface_forms": None}, None)
        write_model(model_path, model_bytes(forest, info))
        emit({"bench": "train", "rows": len(table.labels), "queries": table.queries,
              "positives": int(table.labels.sum()), "trees": args.trees, "workers": args.workers,
              "fit_s": round(fitted_wall, 2), "fit_cpu_s": round(fitted_cpu, 2),
              "total_s": round(time.perf_counter() - wall, 2), "total_cpu_s": round(cpu_seconds() - cpu, 2),
              "nodes": int(sum(e.tree_.node_count for e in forest.estimators_)),
              "max_depth": int(max(e.get_depth() for e in forest.estimators_)),
              "model_mb": round(model_path.stat().st_size / 2**20, 1)})

        engines = {}
        for engine in ("compiled", "onnxruntime"):
            wall, cpu = time.perf_counter(), cpu_seconds()
            engines[engine] = LtrModel.load(model_path, engine=engine)
            emit({"bench": "load", "engine": engine, "s": round(time.perf_counter() - wall, 2),
                  "cpu_s": round(cpu_seconds() - cpu, 2)})
        arrays = from_sklearn(forest)
        predictors = {"sklearn": lambda rows: forest.predict(rows.astype(np.float32)),
                      "compiled 1 thread": CompiledEngine(arrays, threads=1).predict,
                      "compiled 2 threads": CompiledEngine(arrays, threads=2).predict,
                      "onnxruntime": engines["onnxruntime"].score}
        for size in (int(text) for text in args.sizes.split(",")):
            calls = max(5, min(args.batches, args.batches * 100 // size))
            if args.features is None:
                batches = [held_out_batch(rng, size).astype(np.float32) for _ in range(calls + 1)]
            else:  # consecutive rows of the file (not held out), from random starts
                starts = rng.integers(0, max(1, len(table.matrix) - size), calls + 1)
                batches = [table.matrix[start:start + size].astype(np.float32) for start in starts]
            expected = [forest.predict(b) for b in batches]
            results = {}
            for name, predict in predictors.items():
                predict(batches[0])  # warm-up (the numba kernel's first call, onnxruntime's arenas)
                results[name] = time_calls(predict, batches[1:], expected[1:])
            base_cpu = np.percentile(results["sklearn"][0]["cpu"], 50)
            base_wall = np.percentile(results["sklearn"][0]["wall"], 50)
            for name, (times, worst) in results.items():
                emit({"bench": "inference", "rows": size, "engine": name, "calls": calls,
                      **percentiles(times["wall"], ("p50", "p99")), **percentiles(times["cpu"], ("p50", "p99"), prefix="cpu_"),
                      **percentiles(times["process_cpu"], ("p50",), prefix="process_cpu_"),
                      "speedup_p50": round(float(base_cpu / np.percentile(times["cpu"], 50)), 1),
                      "speedup_process_cpu_p50": round(float(base_cpu / np.percentile(times["process_cpu"], 50)), 1),
                      "speedup_wall_p50": round(float(base_wall / np.percentile(times["wall"], 50)), 1),
                      "max_abs_diff": worst, "loadavg_1m": round(os.getloadavg()[0], 2)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
