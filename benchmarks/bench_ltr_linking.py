"""LTR linking benchmark (issue 29.6): per-query latency of LTR (the ranking) and LTR-greedy beside
GIF-MLMcg on the same artefacts and queries in one run, with a 1,000-tree model trained on
features of those artefacts; where LTR's time goes (features, forest); the cold first query; and
``/link?method=ltr`` throughput of ``elquery serve --model`` on loopback.

Artefacts: synthetic DBpedia-shaped dumps of ``--entities`` entities (``synthetic_dbpedia.py``
with its extras: page links, anchor texts; plus long abstracts made from the short ones as
``bench_full_scale.py`` makes them), built by ``elquery build --stages index,surface-forms`` into
``--work`` (reused); or existing ``--index`` and ``--surface-forms`` with ``--model``.

Queries: distinct synthetic queries made of the index's own entity titles (``--titles``: one or
two titles by default, lower-cased, qualifiers dropped, a third with one more word of another
title; as ``bench_linking.kb_queries``), so every query has candidates; more titles a query give
more candidate pairs (the ``ltr_breakdown`` rows), as Y-ERD's about 10. The first ``--train-queries`` train
the model; the next ``--queries`` (other queries) are timed.

Labels (synthetic): the entities whose titles a query was made of are its one ground-truth
interpretation (a ``qrels-elq`` line), so ``elquery ltr features --qrels`` labels a candidate pair
1 when its entity is one of them (an ambiguous base title, ``X`` beside ``X (film)``, is a
candidate of both; only the one drawn is 1); ``--label-noise P`` flips a seeded fraction P of
the training labels (annotation noise, as ``bench_ltr.py`` does: a fully grown forest's size
follows it). The model: ``elquery ltr train --trees 1000`` (``--max-features 3``, seed 1) on
those features.

JSON lines:

* ``ltr_artefacts``, ``ltr_model``: sizes and build/training times;
* ``ltr_latency`` per method: ``gif-mlmcg`` (``Linker.link``, s = ``--gif-threshold``), ``ltr``
  (the LTR ranking: ``Linker.rank`` of a TopRanked linker, no GIF) and ``ltr-greedy``
  (``Linker.link``: GIF on the model's scores, s = 0.3): p50 / p99 / mean / max warm (after
  ``--warm-up-passes`` passes over as many other queries, drawn after the timed ones: no timed
  query is seen before it is timed, so a cache keyed by forms or terms helps the timed queries
  only as much as another query's words would), each call with the garbage collector off (``harness.Timer``), in
  four clocks (``clocks`` in GIF-MLMcg's line says which is which): ``wall_*``, the wall clock
  (on a shared machine it also counts waiting for a core); ``process_cpu_*``, the process's CPU
  over all its threads (``time.process_time``), which counts the compiled forest's kept helper
  thread (it walks part of a query's rows beside the calling thread; ``ELQUERY_LTR_THREADS``) but
  also the JVM's JIT compiler whenever it runs meanwhile (after one warm-up pass of 1,000 1M
  queries its C2 thread still took 2.3 s of the next pass's 4.5 s of features); ``threads_cpu_*``,
  the CPU of the process's Python threads, the calling thread and the forest's helper (per-thread
  clocks): the query's own work; and ``thread_cpu_*``, the calling thread's alone (the Java calls
  run there, the helper's part of the forest does not). Each method runs in a fresh process of its own (this script with
  ``--child``), so that the run's peak memory is one linker's (``peak_rss_mb``: that process's
  peak, the kernel's ``ru_maxrss``, JVM included); LTR and LTR-greedy once per
  ``--forest-threads`` count (``forest_threads``: the ``ELQUERY_LTR_THREADS`` the process had,
  ``default`` for the engine's own: two threads from 10,000 (tree, row) pairs on 2 cores or more);
* ``ltr_ratio``: LTR and LTR-greedy over GIF-MLMcg, p50, p99 and mean, wall, process and threads'
  CPU, per thread count, same run;
* ``ltr_breakdown``: per query, the features (``FeatureExtractor.extract``) and the forest
  (``LtrModel.score`` of those rows) with the ``compiled`` engine (loaded once the extractor is
  closed), and the rows (candidate pairs) per query, in a fresh process per thread count
  (``peak_rss_mb``: its peak when each ended); then with ``onnxruntime`` over the same rows
  (saved beside the texts), in a process of its own (at 1M, the 3.71M-node model took onnxruntime
  1.2 GB more), with whether its scores are the compiled engine's (``same_scores``);
* ``ltr_cold`` per method: in a fresh process, opening the linker (JVM start, artefacts, model)
  and the first and second query;
* ``ltr_serve``: wrk (closed loop, ``--clients`` connections) against ``elquery serve --model
  --workers --workers`` with ``/link?method=ltr`` and, in the same run, ``method=mlmcg``, each
  measured for ``--seconds`` after ``--warmup`` seconds of the same load (a fresh worker's JVM
  compiles LTR's Java path over its first few thousand queries: on one worker of a busy machine,
  sequential requests took 16 ms at first, 7 ms after 1,000 and 4 ms after 2,800, GIF-MLMcg's
  1.4-1.7 ms), with the CPU seconds the server's processes spent meanwhile
  (``requests_per_server_cpu_s``: the rate per busy core, whatever else the machine runs; and
  ``process_cpu_ms_per_request``: each process's share, uvicorn's supervisor and each worker),
  for each of ``--serve-workers`` in turn (a server each).

Usage: ``python benchmarks/bench_ltr_linking.py [--work DIR] [--entities N] [--train-queries N]
[--queries N] [--trees N] [--label-noise P] [--workers N] [--serve-workers N...] [--clients N]
[--seconds S] [--warmup S] [--titles 1,2] [--forest-threads {1,2}...] [--warm-up-passes P] [--parts latency,breakdown,cold,serve]``;
at the end ``ltr_bench_process``: the peak memory of this (the parent) process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from harness import Timer, cpu_seconds, emit, load_avg_1m, machine, max_rss_mb, percentiles  # noqa: E402

FIGURES = ("p50", "p99", "mean", "max")
PARTS = ("latency", "breakdown", "cold", "serve")
LTR_GREEDY_S = 0.3  # the registry's default (methods.md §9)


def build_artefacts(work: Path, entities: int, workers: int) -> tuple[Path, Path]:
    """Synthetic dumps (with page links, anchors and long abstracts), then the index and the
    surface-form store by ``elquery build`` (which reuses a stage built with the same inputs)."""
    import bench_full_scale
    import synthetic_dbpedia

    started = time.perf_counter()
    dumps = work / f"dumps-{entities}"
    synthetic_dbpedia.generate(dumps, entities, extras=True, reuse=True, processes=workers)
    bench_full_scale.long_abstracts(dumps)
    generated = time.perf_counter() - started
    out = work / f"artefacts-{entities}"
    started, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run([sys.executable, "-m", "elquery", "build", "--data", str(dumps), "--out", str(out),
                    "--stages", "index,surface-forms", "--workers", str(workers)], check=True,
                   stdout=subprocess.DEVNULL)
    index, surface_forms = out / "index", out / "surface-forms.db"
    emit({"bench": "ltr_artefacts", "entities": entities, "dumps_s": round(generated, 1),
          "build_s": round(time.perf_counter() - started, 1), "build_cpu_s": round(cpu_seconds() - cpu, 1),
          "index_mb": round(sum(f.stat().st_size for f in index.rglob("*") if f.is_file()) / 1e6, 1),
          "surface_forms_mb": round(surface_forms.stat().st_size / 1e6, 1), "index": str(index),
          "surface_forms": str(surface_forms)})
    return index, surface_forms


def labelled_queries(index: Path, count: int, seed: int,
                     titles: tuple[int, ...] = (1, 2)) -> list[tuple[str, str, list[str]]]:
    """``count`` distinct (qid, query, entities) made of ``titles`` entity titles of the index (a
    count drawn uniformly from them per query), a third with one more word of another title;
    ``entities``: those whose titles made it."""
    ids = (index / "entity_ids.txt").read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)

    def title() -> tuple[str, str]:
        entity = rng.choice(ids)
        return entity, unquote(entity[len("<dbpedia:"):-1]).replace("_", " ").split(" (")[0]

    queries: list[tuple[str, str, list[str]]] = []
    seen: set[str] = set()
    while len(queries) < count:
        drawn = [title() for _ in range(rng.choice(titles))]
        words = [text for _, text in drawn]
        if rng.random() < 1 / 3:
            words.append(rng.choice(title()[1].split()))
        text = " ".join(words).lower()
        if text not in seen:
            seen.add(text)
            queries.append((f"kb-{len(queries)}", text, list(dict.fromkeys(e for e, _ in drawn))))
    return queries


def train_model(index: Path, surface_forms: Path, queries: list[tuple[str, str, list[str]]], out: Path,
                trees: int, workers: int, noise: float) -> None:
    """``elquery ltr features --qrels`` on ``queries`` (labels: their entities; a fraction
    ``noise`` of them flipped), then ``elquery ltr train``; both timed."""
    folder = out.parent
    (folder / "train-queries.json").write_text(json.dumps({qid: text for qid, text, _ in queries}), encoding="utf-8")
    (folder / "train-qrels-elq.txt").write_text(
        "".join(f"{qid}\t1\t" + "\t".join(entities) + "\n" for qid, _, entities in queries), encoding="utf-8")
    features = folder / "train-features.tsv"
    started, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run([sys.executable, "-m", "elquery", "ltr", "features", "--index", str(index), "--surface-forms",
                    str(surface_forms), "--queries", str(folder / "train-queries.json"), "--qrels",
                    str(folder / "train-qrels-elq.txt"), "--out", str(features)], check=True, stdout=subprocess.DEVNULL)
    extracted, extract_cpu = time.perf_counter() - started, cpu_seconds() - cpu
    if noise:
        flip_labels(features, noise)
    started, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run([sys.executable, "-m", "elquery", "ltr", "train", "--features", str(features), "--out", str(out),
                    "--trees", str(trees), "--workers", str(workers)], check=True, stdout=subprocess.DEVNULL)
    trained, train_cpu = time.perf_counter() - started, cpu_seconds() - cpu

    emit({"bench": "ltr_model", "train_queries": len(queries), "features_s": round(extracted, 1),
          "features_cpu_s": round(extract_cpu, 1), "train_s": round(trained, 1), "train_cpu_s": round(train_cpu, 1),
          **model_size(out)})


def flip_labels(features: Path, fraction: float, seed: int = 0) -> None:
    """Flip the label of a seeded ``fraction`` of the rows of a TSV features file, in place."""
    lines = features.read_text(encoding="utf-8").splitlines(keepends=True)
    column = lines[0].rstrip("\n").split("\t").index("label")
    rng = random.Random(seed)
    for number in range(1, len(lines)):
        if rng.random() < fraction:
            cells = lines[number].rstrip("\n").split("\t")
            cells[column] = "0" if cells[column] == "1" else "1"
            lines[number] = "\t".join(cells) + "\n"
    features.write_text("".join(lines), encoding="utf-8")


def model_size(model: Path) -> dict[str, object]:
    """The model's training rows and positives, trees, nodes and file size."""
    from elquery.linking.ltr.model import LtrModel

    info = LtrModel.read_info(model)
    return {"rows": info.training["rows"], "positives": info.training["positives"], "trees": info.forest["trees"],
            "nodes": info.forest["nodes"], "model_mb": round(model.stat().st_size / 1e6, 1),
            "labels": "synthetic: the entities whose titles made the query"}


def warm_times(function: object, texts: list[str], warm_up: list[str], passes: int = 1) -> Timer:
    """Wall and CPU seconds of each call over ``texts`` after ``passes`` warm-up passes over the
    other queries ``warm_up``, garbage collector off per call."""
    for text in warm_up * passes:
        function(text)  # type: ignore[operator]
    timer = Timer(threads=True)
    for text in texts:
        timer(lambda: function(text))  # type: ignore[operator]  # noqa: B023
    return timer


def figures_of(timer: Timer) -> dict[str, float]:
    """Percentiles (nearest rank) of a :class:`Timer(threads=True)`'s calls in ms, in the clocks of
    :data:`CLOCKS`."""
    return {**percentiles(timer.wall, FIGURES, nearest_rank=True, prefix="wall_"),
            **percentiles(timer.process_cpu, FIGURES, nearest_rank=True, prefix="process_cpu_"),
            **percentiles(timer.threads_cpu, FIGURES, nearest_rank=True, prefix="threads_cpu_"),
            **percentiles(timer.cpu, FIGURES, nearest_rank=True, prefix="thread_cpu_")}


CLOCKS = {"wall_*": "wall clock (on a shared machine it also counts waiting for a core)",
          "process_cpu_*": "the process's CPU, all threads (time.process_time deltas): the forest's helper thread, "
                           "and also the JVM's JIT compiler and collector threads when they run meanwhile",
          "threads_cpu_*": "the CPU of the process's Python threads (the calling thread and the forest's helper "
                           "thread; not the JVM's own threads): the query's own work",
          "thread_cpu_*": "the calling thread's CPU alone (time.thread_time; leaves out the forest's helper thread)"}


def latency_child(method: str, index: Path, surface_forms: Path, model: Path, texts: list[str], warm_up: list[str],
                  gif_threshold: float, passes: int) -> list[dict[str, object]]:
    """One method's warm latency after ``passes`` warm-up passes over ``warm_up``, in this process (a fresh one: its
    peak is this linker's)."""
    from elquery.linking.linker import Linker

    if method == "gif-mlmcg":
        linker = Linker(index, surface_forms, method="mlmcg", gif_threshold=gif_threshold)
    else:
        linker = Linker(index, surface_forms, method="ltr", model=model, top_ranked=method == "ltr")
    timer = warm_times(linker.rank if method == "ltr" else linker.link, texts, warm_up, passes)
    linked = sum(1 for text in texts[:500] if linker.result(text).interpretations) / min(len(texts), 500)
    linker.close()
    return [{"bench": "ltr_latency", "method": method, "queries": len(texts), "warm_up_passes": passes, **figures_of(timer),
             "with_interpretation": round(linked, 3)}]


def breakdown_child(index: Path, surface_forms: Path, model: Path, texts: list[str], warm_up: list[str],
                    store: Path, passes: int = 1) -> list[dict[str, object]]:
    """Per query, after ``passes`` warm-up passes of the features over ``warm_up``: the features, then the compiled
    forest over its rows (the extractor closed first), in this process; the rows and their scores
    saved to ``store`` for :func:`onnxruntime_child`."""
    from elquery.linking.ltr import FeatureExtractor, LtrModel

    with FeatureExtractor(index, surface_forms, 0.1) as extractor:
        for text in warm_up * passes:
            extractor.extract(text)
        features = Timer(threads=True)
        matrices = []
        for text in texts:
            matrices.append(features(lambda: extractor.extract(text))[1])  # noqa: B023
    rows = np.array([len(m) for m in matrices])
    records: list[dict[str, object]] = [
        {"bench": "ltr_breakdown", "part": "features", "queries": len(texts), **figures_of(features),
         "rows_p50": float(np.percentile(rows, 50)), "rows_p99": float(np.percentile(rows, 99)),
         "rows_mean": round(float(rows.mean()), 1), "rows_max": int(rows.max()),
         "peak_rss_mb": round(max_rss_mb(), 1)}]
    matrices = [m for m in matrices if len(m)]
    loaded = LtrModel.load(model, artefacts={"index": index, "surface_forms": surface_forms}, engine="compiled")
    scores = [loaded.score(m) for m in matrices]  # warm-up pass
    records.append({"bench": "ltr_breakdown", "part": "forest", "engine": "compiled", **forest_figures(loaded.score, matrices)})
    np.savez(store, rows=np.concatenate(matrices), counts=[len(m) for m in matrices], scores=np.concatenate(scores))
    return records


def forest_figures(score: Callable[[np.ndarray], np.ndarray], matrices: list[np.ndarray]) -> dict[str, object]:
    """A forest's ``score`` per query over each query's rows (after a warm-up pass), and the peak."""
    forest = Timer(threads=True)
    for matrix in matrices:
        forest(lambda: score(matrix))  # noqa: B023
    return {"queries": len(forest.wall), **figures_of(forest), "peak_rss_mb": round(max_rss_mb(), 1)}


def onnxruntime_child(index: Path, surface_forms: Path, model: Path, store: Path) -> list[dict[str, object]]:
    """The forest with onnxruntime over the rows :func:`breakdown_child` saved, in a process of its
    own (onnxruntime holds a large model in much more memory than the compiled engine); whether its
    scores are the compiled engine's."""
    from elquery.linking.ltr import LtrModel

    saved = np.load(store)
    matrices = np.split(saved["rows"], np.cumsum(saved["counts"])[:-1])
    loaded = LtrModel.load(model, artefacts={"index": index, "surface_forms": surface_forms}, engine="onnxruntime")
    scores = [loaded.score(m) for m in matrices]  # warm-up pass
    same = bool(np.array_equal(np.concatenate(scores), saved["scores"]))
    return [{"bench": "ltr_breakdown", "part": "forest", "engine": "onnxruntime", **forest_figures(loaded.score, matrices),
             "same_scores": same}]


def run_child(args: argparse.Namespace) -> int:
    """``--child PART``: one part in this process, its records printed as JSON lines, each with the
    process's peak resident memory (``ru_maxrss``, JVM included) when it ended (a latency's at the
    end; the breakdown's features, then the compiled engine's, so far)."""
    store = args.child_texts.with_name("breakdown-rows.npz")
    if args.child == "breakdown-onnxruntime":
        records = onnxruntime_child(args.index, args.surface_forms, args.model, store)
    else:
        texts = json.loads(args.child_texts.read_text(encoding="utf-8"))
        if args.child == "breakdown":
            records = breakdown_child(args.index, args.surface_forms, args.model, texts["timed"], texts["warm_up"], store,
                                      args.warm_up_passes)
        else:
            records = latency_child(args.child, args.index, args.surface_forms, args.model, texts["timed"],
                                    texts["warm_up"], args.gif_threshold, args.warm_up_passes)
    for record in records:
        emit({"peak_rss_mb": round(max_rss_mb(), 1), **record})
    return 0


def in_fresh_process(part: str, index: Path, surface_forms: Path, model: Path, texts_file: Path,
                     gif_threshold: float, threads: int | None, passes: int = 1) -> list[dict[str, object]]:
    """``part`` (a method's latency or ``breakdown``) run by this script in a process of its own,
    ``ELQUERY_LTR_THREADS`` set to ``threads`` (inherited when None); its records, each with the
    forest's threads and the load average at its end."""
    from elquery.linking.ltr.threads import THREADS_VARIABLE

    env = dict(os.environ)
    if threads is not None:
        env[THREADS_VARIABLE] = str(threads)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", part, "--index", str(index),
                          "--surface-forms", str(surface_forms), "--model", str(model), "--child-texts",
                          str(texts_file), "--gif-threshold", str(gif_threshold), "--warm-up-passes", str(passes)],
                         env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    forest_threads = env.get(THREADS_VARIABLE) or "default"
    return [{**json.loads(line), "forest_threads": forest_threads if part in ("ltr", "ltr-greedy", "breakdown") else None,
             "load_avg_1m": load_avg_1m()} for line in out.splitlines() if line.startswith("{")]


def latency(index: Path, surface_forms: Path, model: Path, texts_file: Path, gif_threshold: float,
            threads: list[int | None], passes: int) -> None:
    """GIF-MLMcg once, then LTR and LTR-greedy with each forest thread count (interleaved: method
    by method, the counts in turn), each in a fresh process; then the ratios per thread count."""
    common = (index, surface_forms, model, texts_file, gif_threshold)
    gif = in_fresh_process("gif-mlmcg", *common, None, passes)[0]
    emit({**gif, "clocks": CLOCKS})
    figures: dict[tuple[str, int | None], dict[str, object]] = {}
    for name in ("ltr", "ltr-greedy"):
        for count in threads:
            figures[name, count] = in_fresh_process(name, *common, count, passes)[0]
            emit(figures[name, count])
    for (name, count), record in figures.items():
        emit({"bench": "ltr_ratio", "method": name, "over": "gif-mlmcg", "forest_threads": record["forest_threads"],
              **{f"{f}_ratio": round(float(record[f"{f}_ms"]) / float(gif[f"{f}_ms"]), 2)  # type: ignore[arg-type]
                 for f in ("wall_p50", "wall_p99", "wall_mean", "process_cpu_p50", "process_cpu_p99",
                           "process_cpu_mean", "threads_cpu_p50", "threads_cpu_p99", "threads_cpu_mean")}})


def breakdown(index: Path, surface_forms: Path, model: Path, texts_file: Path, threads: list[int | None],
              passes: int = 1) -> None:
    """The features (after ``passes`` warm-up passes) and the compiled forest per query, in a fresh
    process per forest thread count; then onnxruntime over the same rows, in a process of its own."""
    for count in threads:
        for record in in_fresh_process("breakdown", index, surface_forms, model, texts_file, 0.0, count, passes):
            emit(record)
    for record in in_fresh_process("breakdown-onnxruntime", index, surface_forms, model, texts_file, 0.0, None):
        emit(record)


COLD = """
import json, sys, time
started = time.perf_counter()
from elquery.linking.linker import Linker
imported = time.perf_counter()
index, surface_forms, model, method, query = sys.argv[1:6]
linker = Linker(index, surface_forms, method=method, **({"model": model} if method == "ltr" else {}))
opened = time.perf_counter()
linker.link(query)
first = time.perf_counter()
linker.link(query + " x")
second = time.perf_counter()
print(json.dumps({"import_s": round(imported - started, 3), "open_s": round(opened - imported, 3),
                  "first_query_ms": round(1000 * (first - opened), 2), "second_query_ms": round(1000 * (second - first), 2)}))
"""


def cold(index: Path, surface_forms: Path, model: Path, query: str) -> None:
    """In a fresh process per method: import, open the linker, the first and the second query."""
    for method in ("mlmcg", "ltr"):
        out = subprocess.run([sys.executable, "-c", COLD, str(index), str(surface_forms), str(model), method, query],
                             capture_output=True, text=True, check=True).stdout
        emit({"bench": "ltr_cold", "method": method, "query": query, **json.loads(out.strip().splitlines()[-1])})


def serve(index: Path, surface_forms: Path, model: Path, texts: list[str], workers: int, clients: int,
          seconds: float, warmup: float) -> None:
    """``elquery serve --model`` under wrk: /link?method=ltr, then method=mlmcg, same server."""
    import httpx
    from bench_serve import WRK_SCRIPT
    from process_tree import descendants, peak_rss_mb, stat

    def server_cpu() -> dict[int, float]:
        """CPU seconds of the server and of each of its workers so far, by process id."""
        tree = {server.pid: stat(server.pid), **descendants(server.pid)}
        return {pid: figures.own_cpu for pid, figures in tree.items() if figures is not None}

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "elquery", "serve", "--index", str(index), "--surface-forms",
                               str(surface_forms), "--model", str(model), "--port", str(port), "--workers", str(workers)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.5)
        time.sleep(3 * workers)  # every worker up
        for method in ("ltr", "mlmcg"):
            paths = [f"/link?q={quote(text)}&method={method}" for text in texts]
            with tempfile.NamedTemporaryFile("w", suffix=".lua", encoding="utf-8") as script:
                script.write(WRK_SCRIPT % ", ".join(f'"{path}"' for path in paths))
                script.flush()

                def run(duration: float) -> dict[str, float]:
                    out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{duration:g}s", "--timeout", "10s", "-s",
                                          script.name, base], capture_output=True, text=True, check=True).stdout
                    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]

                run(warmup)  # a fresh worker's JVM compiles LTR's Java path over its first thousands of queries
                before = server_cpu()
                measured = run(seconds)
                spent = {pid: used - before.get(pid, 0.0) for pid, used in server_cpu().items()}
            cpu, requests = sum(spent.values()), measured["requests"]
            emit({"bench": "ltr_serve", "method": method, "workers": workers, "clients": clients,
                  "seconds": seconds, "requests": requests,
                  "requests_per_s": round(requests / measured["seconds"], 1),
                  "p50_ms": measured["p50_us"] / 1000, "p99_ms": measured["p99_us"] / 1000,
                  "errors": measured["errors"], "server_cpu_s": round(cpu, 1),
                  "requests_per_server_cpu_s": round(requests / cpu, 1),
                  "cpu_ms_per_request": round(1000 * cpu / requests, 3),
                  "process_cpu_ms_per_request": sorted((round(1000 * used / requests, 3) for used in spent.values()),
                                                       reverse=True),
                  "load_avg_1m": load_avg_1m()})
        peaks = list(peak_rss_mb([server.pid, *descendants(server.pid)]).values())
        emit({"bench": "ltr_serve_memory", "server_peak_rss_mb": round(sum(peaks), 1)})
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-bench-ltr-linking"))
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--index", type=Path, help="an existing entity index (with --surface-forms)")
    parser.add_argument("--surface-forms", type=Path)
    parser.add_argument("--model", type=Path, help="an existing model of those artefacts (else one is trained)")
    parser.add_argument("--train-queries", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=3000, help="timed queries, distinct from the training ones")
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--label-noise", type=float, default=0.0, help="fraction of training labels flipped")
    parser.add_argument("--gif-threshold", type=float, default=20.0, help="GIF-MLMcg's s")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--serve-workers", type=int, nargs="+",
                        help="the served part's worker processes, one server per count in turn (default: --workers)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds of load before each served measure")
    parser.add_argument("--serve-queries", type=int, default=1000)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"what to measure, of {','.join(PARTS)}")
    parser.add_argument("--titles", default="1,2",
                        help="entity titles a query is made of, a count drawn per query from this list (more "
                             "titles, more candidate pairs: Y-ERD has about 10 a query)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warm-up-passes", type=int, default=1,
                        help="warm-up passes over as many other queries (not the timed ones) before the latency or the breakdown is timed (default 1; over "
                             "1,000 queries at 1M the JVM's JIT compiler still works through the second)")
    parser.add_argument("--forest-threads", type=int, nargs="+", choices=(1, 2),
                        help="the compiled forest's threads (ELQUERY_LTR_THREADS) in the latency and breakdown "
                             "processes, each count in turn (default: the engine's own default)")
    parser.add_argument("--child", choices=("gif-mlmcg", "ltr", "ltr-greedy", "breakdown", "breakdown-onnxruntime"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--child-texts", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child(args)
    titles = tuple(int(n) for n in args.titles.split(","))
    parts = set(args.parts.split(","))
    if not parts <= set(PARTS):
        parser.error(f"--parts: unknown {', '.join(sorted(parts - set(PARTS)))}")
    emit({"bench": "machine", **machine()})
    if args.index is None:
        args.work.mkdir(parents=True, exist_ok=True)
        index, surface_forms = build_artefacts(args.work, args.entities, args.workers)
    else:
        index, surface_forms = args.index, args.surface_forms
    # training queries, timed queries, then as many warm-up queries (drawn last: the first ones do not change)
    queries = labelled_queries(index, args.train_queries + 2 * args.queries, args.seed, titles)
    model = args.model
    if model is None:
        noisy = f"-noise{args.label_noise:g}" if args.label_noise else ""
        shape = "" if titles == (1, 2) else "-titles" + "_".join(map(str, titles))
        model = args.work / f"model-{args.entities}-{args.train_queries}-{args.trees}{noisy}{shape}.onnx"
        if not model.exists():
            train_model(index, surface_forms, queries[:args.train_queries], model, args.trees, args.workers,
                        args.label_noise)
        else:
            emit({"bench": "ltr_model", "reused": str(model), **model_size(model)})
    texts = [text for _, text, _ in queries[args.train_queries:args.train_queries + args.queries]]
    warm_up = [text for _, text, _ in queries[args.train_queries + args.queries:]]
    del queries
    threads: list[int | None] = list(args.forest_threads or [None])
    with tempfile.TemporaryDirectory(prefix="bench-ltr-linking-") as folder:
        texts_file = Path(folder) / "texts.json"
        texts_file.write_text(json.dumps({"timed": texts, "warm_up": warm_up}), encoding="utf-8")
        if "latency" in parts:
            latency(index, surface_forms, model, texts_file, args.gif_threshold, threads, args.warm_up_passes)
        if "breakdown" in parts:
            breakdown(index, surface_forms, model, texts_file, threads, args.warm_up_passes)
    if "cold" in parts:
        cold(index, surface_forms, model, texts[0])
    if "serve" in parts:
        for workers in args.serve_workers or [args.workers]:
            serve(index, surface_forms, model, texts[:args.serve_queries], workers, args.clients, args.seconds,
                  args.warmup)
    emit({"bench": "ltr_bench_process", "peak_rss_mb": round(max_rss_mb(), 1), "load_avg_1m": load_avg_1m()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
