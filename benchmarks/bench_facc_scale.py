"""FACC1 at real size (issue 30): the surface-form stage over hundreds of millions of (form, entity)
pairs and the raw annotation count, in bounded memory. JSON lines.

``store``: for each ``--pairs N``, real-shape FACC counts of N distinct pairs over ``--entities``
entities (``synthetic_facc.generate_pairs``: Zipfian forms per entity, a long tail linked once,
case and punctuation variants; generated once under ``--work`` and reused) are built into a store
with ``elquery index surface-forms --memory MB``, its process tree sampled every 0.5 s
(``harness.TreeSampler``): wall and CPU seconds, pairs/s, peak RSS of all the processes together
and of each, peak disk under the work folder, the store's size and bytes per pair. Then lookups
on the store (``lookup`` of forms drawn from the count files, warm): p50 / p99, its open time and
the RSS of the looking-up process. After several sizes, ``facc_scale_slope``: the peak RSS's
least-squares slope in MB per million pairs (flat: about 0).

``lookups``: the lookups alone, again, on the stores ``store`` left (without ``--clean``).

``linker``: GIF-MLMcg over the stores ``store`` left and ``--index``: open time, RSS, per-query
wall and CPU p50 / p99 warm. The stores must have been built with ``--entity-names
INDEX/entity_ids.txt`` (the generated entities take the index's ids) and ``--entities`` at most
the index's entities.

``serve``: the service over each store ``store`` left and ``--index`` (as ``linker``): ``elquery
serve`` with ``--serve-workers`` workers under wrk's closed loop (``bench_serve.serve``), measured
from the first request after ready over the same distinct queries for every store (bench_serve's
Y-ERD and KB-title queries, then ``--queries`` of two forms drawn from the smallest store's
counts), ``--rounds`` times with the stores in turn (so that a change of the machine's load falls
on all of them); per store and window the requests/s of each round and their mean, and
``facc_scale_serve_ratio``: each store's mean requests/s over the smallest store's.

``raw``: for each ``--lines N``, raw FACC1 annotation lines (8 columns, gzip) of the same shape
counted by ``elquery index facc-counts --memory MB``: lines/s, peak RSS of all processes, the
slope over sizes, and the time projected for 11 billion lines at the largest size's rate (wall)
and at its rate per CPU second on two busy cores (the machine may be shared: then only the CPU
rate says what the code does).

Usage: ``python benchmarks/bench_facc_scale.py store --pairs 3000000 30000000 [--entities 4600000]
[--memory 512] [--workers 2] [--work /work/bigdata]``; ``... raw --lines 10000000 30000000``.
``... store --pairs 30000000 --entities 969953 --entity-names INDEX/entity_ids.txt`` then ``... linker
--pairs 30000000 --entities 969953 --entity-names INDEX/entity_ids.txt --index INDEX``.
``... serve --pairs 30000000 300000000 --entities 969953 --entity-names INDEX/entity_ids.txt --index INDEX``.
``--clean`` removes each size's generated data and store after it is measured.
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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from harness import TreeSampler, emit, load_avg_1m, percentiles  # noqa: E402
from synthetic_facc import FREEBASE_NS, PairSpec, generate_pairs, generate_raw_annotations, mid  # noqa: E402

FACC1_LINES = 11_000_000_000
SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"


def _generated(folder: Path, make) -> dict:
    """The manifest of data generated in ``folder`` (made by ``make(folder)`` unless present)."""
    manifest = folder / "manifest.json"
    if not manifest.exists():
        started = time.perf_counter()
        written = make(folder)
        written["seconds"] = round(time.perf_counter() - started, 1)
        manifest.write_text(json.dumps(written))
    return json.loads(manifest.read_text())


def _sampled(command: list[str], folder: Path) -> tuple[TreeSampler, float, str]:
    """Run ``command`` with its process tree sampled; (sampler, wall seconds, stderr)."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(process.pid, 0.5, folder).start()
    _, err = process.communicate()
    sampler.stop()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed (exit {process.returncode}):\n{err[-3000:]}")
    return sampler, time.monotonic() - started, err


def _figures(sampler: TreeSampler, wall: float) -> dict:
    peaks = sampler.process_peaks_mb()
    return {"wall_s": round(wall, 1), "cpu_s": round(sampler.cpu_s, 1), "peak_rss_mb": round(sampler.peak_rss_mb),
            "largest_process_mb": round(max(peaks.values(), default=0.0)), "processes": len(peaks),
            "peak_disk_gb": round(max(s.disk_bytes for s in sampler.samples) / 2**30, 2)}


def _lookups(store: Path, facc: Path, count: int) -> dict:
    """Open time, p50 / p99 warm (after one pass over the same calls) of ``lookup`` (forms drawn
    from the count files) and of ``lookup_spans`` (mention detection's one query per query:
    queries of two drawn forms and a word), and the RSS of this process."""
    from elquery.kb.normalize import query_tokens
    from elquery.kb.surface_forms.store import SurfaceFormStore
    from harness import call_times

    rng = random.Random(0)
    texts = []
    for path in sorted(facc.glob("*.tsv")):
        with open(path, encoding="utf-8") as handle:
            texts += [line.split("\t", 1)[0] for _, line in zip(range(count // 8 + 1), handle)]
    texts = rng.sample(texts, min(count, len(texts)))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    with SurfaceFormStore(store) as forms:
        opened = time.perf_counter() - started
        queries = [query_tokens(f"{a} {b} news") for a, b in zip(texts, reversed(texts))][: count // 4]
        for text in texts:  # warm: every page the timed calls read is in the page cache
            forms.lookup(text)
        for query in queries:
            forms.lookup_spans(query)
        times = call_times(forms.lookup, texts)
        spans = call_times(forms.lookup_spans, queries)
        rss = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
    lookup = percentiles(times, ("p50", "p99"), unit="us", digits=1, nearest_rank=True)
    spanned = percentiles(spans, ("p50", "p99"), unit="us", digits=1, nearest_rank=True)
    return {"open_s": round(opened, 3), "lookups": len(times), "rss_mb": round(rss), "rss_before_mb": round(rss_before),
            **{f"lookup_{k}": v for k, v in lookup.items()}, "span_queries": len(spans),
            **{f"spans_{k}": v for k, v in spanned.items()}}


def _slope(kind: str, points: list[tuple[int, float]], unit: str) -> None:
    if len(points) < 2:
        return
    xs, ys = [x / 1e6 for x, _ in points], [y for _, y in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)
    emit({"bench": "facc_scale_slope", "kind": kind, f"mb_per_million_{unit}": round(slope, 3),
          "points": {str(x): y for x, y in points}})


def _folder(args: argparse.Namespace, pairs: int) -> Path:
    return args.work / f"pairs-{pairs}-{args.entities}{'-named' if args.entity_names else ''}"


def _name_entities(folder: Path, names_file: Path, entities: int) -> None:
    """Map entity i of the generated data to the i-th id of ``names_file`` (an index's
    ``entity_ids.txt``) in the Freebase mapping, so the store's entities are the index's."""
    names = names_file.read_text(encoding="utf-8").splitlines()
    if len(names) < entities:
        raise SystemExit(f"{names_file}: {len(names)} ids, fewer than --entities {entities}")
    with open(folder / "dumps" / "freebase_links_en.ttl", "w", encoding="utf-8") as handle:
        for i, name in enumerate(names[:entities]):
            handle.write(f"<http://dbpedia.org/resource/{name[len('<dbpedia:'):-1]}> {SAME_AS} <{FREEBASE_NS}{mid(i)}> .\n")


def store(args: argparse.Namespace) -> None:
    points = []
    for pairs in args.pairs:
        folder = _folder(args, pairs)
        spec = PairSpec(pairs, args.entities, args.files, args.seed)
        data = _generated(folder, lambda f: generate_pairs(f, spec))
        if args.entity_names:
            _name_entities(folder, args.entity_names, args.entities)
        emit({"bench": "facc_scale_data", **data})
        out = folder / "sf.db"
        out.unlink(missing_ok=True)
        command = [sys.executable, "-m", "elquery", "index", "surface-forms", "--dumps", str(folder / "dumps"),
                   "--facc", str(folder / "facc"), "--out", str(out), "--workers", str(args.workers),
                   "--memory", str(args.memory)]
        sampler, wall, err = _sampled(command, folder)
        stored = [line for line in err.splitlines() if line.startswith("store:")]
        figures = _figures(sampler, wall)
        points.append((pairs, figures["peak_rss_mb"]))
        emit({"bench": "facc_scale_store", "pairs": pairs, "rows": data["rows"], "entities": args.entities,
              "memory_mb": args.memory, "workers": args.workers, **figures,
              "pairs_per_s": round(pairs / wall), "pairs_per_cpu_s": round(pairs / max(figures["cpu_s"], 0.1)),
              "store_gb": round(out.stat().st_size / 2**30, 2),
              "store_bytes_per_pair": round(out.stat().st_size / pairs, 1), "report": stored[-1] if stored else None,
              "process_peaks_mb": sampler.process_peaks_mb(), "load_avg_1m": load_avg_1m()})
        emit({"bench": "facc_scale_lookup", "pairs": pairs, **_lookups(out, folder / "facc", args.lookups)})
        if args.clean:
            shutil.rmtree(folder)
    _slope("store", points, "pairs")


def lookups(args: argparse.Namespace) -> None:
    for pairs in args.pairs:
        folder = _folder(args, pairs)
        emit({"bench": "facc_scale_lookup", "pairs": pairs, **_lookups(folder / "sf.db", folder / "facc", args.lookups)})


def _drawn_texts(facc: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` raw forms drawn from the first lines of each count file."""
    texts = []
    for path in sorted(facc.glob("*.tsv")):
        with open(path, encoding="utf-8") as handle:
            texts += [line.split("\t", 1)[0] for _, line in zip(range(count // 8 + 1), handle)]
    return random.Random(seed).sample(texts, min(count, len(texts)))


def linker(args: argparse.Namespace) -> None:
    """GIF-MLMcg over each store ``store`` left and ``--index`` (built with ``--entity-names`` from
    its ids): open time and RSS, then per query (two drawn forms, as a user might type them) wall
    and CPU seconds of ``Linker.link`` warm (after one pass over the same queries), p50 / p99."""
    from elquery.linking.linker import Linker

    for pairs in args.pairs:
        folder = _folder(args, pairs)
        texts = _drawn_texts(folder / "facc", 2 * args.queries)
        queries = [f"{a} {b}".lower() for a, b in zip(texts[::2], texts[1::2])]
        started, cpu = time.perf_counter(), time.process_time()
        linked = Linker(args.index, folder / "sf.db", method="mlmcg")
        opened, opened_cpu = time.perf_counter() - started, time.process_time() - cpu
        rss_open = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
        first = time.perf_counter()
        linked.link(queries[0])
        first = time.perf_counter() - first
        candidates = [len(linked.result(q).scored) for q in queries]  # and the warm pass
        wall, cpu_times = [], []
        for query in queries:
            began, began_cpu = time.perf_counter(), time.thread_time()
            linked.link(query)
            cpu_times.append(time.thread_time() - began_cpu)
            wall.append(time.perf_counter() - began)
        rss = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
        store_bytes = (folder / "sf.db").stat().st_size
        emit({"bench": "facc_scale_linker", "pairs": pairs, "method": "gif-mlmcg", "queries": len(queries),
              "open_s": round(opened, 2), "open_cpu_s": round(opened_cpu, 2), "first_query_ms": round(1000 * first, 1),
              "rss_open_mb": round(rss_open), "rss_mb": round(rss),
              **percentiles(wall, ("p50", "p99"), unit="ms", digits=3, nearest_rank=True),
              **percentiles(cpu_times, ("p50", "p99"), unit="ms", digits=3, nearest_rank=True, prefix="cpu_"),
              "mean_candidates": round(sum(candidates) / len(candidates), 1),
              "store_gb": round(store_bytes / 2**30, 2), "store_bytes_per_pair": round(store_bytes / pairs, 1),
              "load_avg_1m": load_avg_1m()})


def serve(args: argparse.Namespace) -> None:
    from bench_serve import serve as served, served_queries

    folders = {pairs: _folder(args, pairs) for pairs in sorted(args.pairs)}
    smallest = min(folders)
    texts = _drawn_texts(folders[smallest] / "facc", 2 * args.queries)
    queries = list(dict.fromkeys([*served_queries(args.index, args.kb_queries),
                                  *(f"{a} {b}".lower() for a, b in zip(texts[::2], texts[1::2]))]))
    windows = [("first", args.first), ("next", args.seconds)]
    rates: dict[tuple[int, str], list[float]] = {}
    for round_number in range(args.rounds):
        for pairs, folder in folders.items():
            command = [sys.executable, "-m", "elquery", "serve", "--index", str(args.index),
                       "--surface-forms", str(folder / "sf.db")]
            ready, measured, peaks = served(command, args.serve_workers, windows, args.clients, queries)
            for figures in measured:
                rates.setdefault((pairs, figures["window"]), []).append(figures["requests_per_s"])
                emit({"bench": "facc_scale_serve", "pairs": pairs, "round": round_number, "workers": args.serve_workers,
                      "clients": args.clients, "distinct_queries": len(queries), "ready_s": ready["ready_s"], **figures,
                      "server_peak_rss_mb": round(sum(peaks), 1), "load_avg_1m": load_avg_1m()})
    for (pairs, window), values in rates.items():
        mean = sum(values) / len(values)
        base = rates[(smallest, window)]
        emit({"bench": "facc_scale_serve_ratio", "pairs": pairs, "over_pairs": smallest, "window": window,
              "requests_per_s": [round(v, 1) for v in values], "mean_requests_per_s": round(mean, 1),
              "ratio": round(mean / (sum(base) / len(base)), 3)})


def raw(args: argparse.Namespace) -> None:
    points, rate = [], 0.0
    for lines in args.lines:
        folder = args.work / f"raw-{lines}"
        spec = PairSpec(args.raw_pairs, args.entities, args.files, args.seed)
        data = _generated(folder, lambda f: generate_raw_annotations(f, spec, lines))
        emit({"bench": "facc_scale_raw_data", **data})
        out = args.work / f"raw-{lines}.counts.tsv"  # beside the input folder: not read as an input the next time
        command = [sys.executable, "-m", "elquery", "index", "facc-counts", str(folder), "--out", str(out),
                   "--workers", str(args.workers), "--memory", str(args.memory)]
        sampler, wall, err = _sampled(command, folder)
        figures = _figures(sampler, wall)
        rate = lines / wall
        points.append((lines, figures["peak_rss_mb"]))
        summary = [line for line in err.splitlines() if line.startswith("facc annotations:")]
        per_cpu_s = lines / max(figures["cpu_s"], 0.1)
        emit({"bench": "facc_scale_raw", "lines": lines, "gz_gb": round(data["bytes"] / 2**30, 2),
              "memory_mb": args.memory, "workers": args.workers, **figures, "lines_per_s": round(rate),
              "lines_per_cpu_s": round(per_cpu_s), "projected_hours_11b_lines": round(FACC1_LINES / rate / 3600, 1),
              "projected_hours_11b_lines_2_busy_cores": round(FACC1_LINES / (2 * per_cpu_s) / 3600, 1),
              "report": summary[-1] if summary else None, "load_avg_1m": load_avg_1m()})
        out.unlink()
        if args.clean:
            shutil.rmtree(folder)
    _slope("raw", points, "lines")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("store", "lookups", "linker", "serve", "raw"),
                        help="lookups, linker, serve: on the stores `store` built")
    parser.add_argument("--pairs", type=int, nargs="+", default=[3_000_000])
    parser.add_argument("--lines", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--raw-pairs", type=int, default=30_000_000, help="distinct pairs the raw lines are drawn from")
    parser.add_argument("--entities", type=int, default=4_600_000)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--memory", type=int, default=512, help="--memory of the commands (MB per process)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--work", type=Path, default=Path("/work/bigdata"))
    parser.add_argument("--entity-names", type=Path, help="an index's entity_ids.txt: the generated entities "
                        "take its ids (their first --entities), so the linker can run over the store and the index")
    parser.add_argument("--index", type=Path, help="linker: the entity index")
    parser.add_argument("--queries", type=int, default=2000, help="linker: queries of two drawn forms")
    parser.add_argument("--serve-workers", type=int, default=2, help="serve: elquery serve --workers")
    parser.add_argument("--clients", type=int, default=16, help="serve: wrk's connections")
    parser.add_argument("--first", type=float, default=10.0, help="serve: seconds of the first window after ready")
    parser.add_argument("--seconds", type=float, default=30.0, help="serve: seconds of the next window")
    parser.add_argument("--rounds", type=int, default=2, help="serve: rounds over the stores")
    parser.add_argument("--kb-queries", type=int, default=4000, help="serve: KB-title queries (bench_serve)")
    parser.add_argument("--clean", action="store_true", help="remove each size's data and store once measured")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.kind in ("linker", "serve") and args.index is None:
        parser.error(f"{args.kind} needs --index (the index whose entity_ids.txt --entity-names gave)")
    {"store": store, "lookups": lookups, "linker": linker, "serve": serve, "raw": raw}[args.kind](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
