"""``elquery index dbpedia``: DBpedia dumps -> fielded Lucene entity index (methods.md §2).

Phases (see :mod:`elquery.indexing.entity_documents`): spill the dumps into subject partitions (a
task per file, over worker processes), count predicates per partition, write one Lucene sub-index per
partition (worker processes, one JVM each), then append the sub-indexes in partition order into
one single-segment index with the exact-length caches (and, with the LTR fields, the per-entity
counts) beside it. Everything is built in a
temporary directory next to ``--out`` and renamed into place only on success.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
import uuid
from collections import Counter
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

from elquery.indexing.entity_documents import (
    SKIPPED_DATASETS,
    count_predicates,
    is_link_dataset,
    is_skipped_dataset,
    load_labels,
    partition_documents,
    spill,
    top_predicates,
)
from elquery.base import ElqueryError, check_workers, default_workers, sigterm_interrupts
from elquery.indexing.index_files import index_statistics, record_statistics, write_index_files
from elquery.indexing.lucene_writer import EntityIndexWriter, WrittenDocuments
from elquery.indexing.build_outputs import check_output, created_folder, replace, work_folder
from elquery.indexing.ntriples import ParseReport, dump_files
from elquery.indexing.provenance import BuildPlan, write_provenance
from elquery.workers import WorkerPool, ordered_map, worker_pool

PARTITION_BYTES = 256 * 2**20  # uncompressed dump bytes per partition (memory per worker ~5x)
MIN_PARTITIONS = 4
COMPRESSION_RATIO = {".bz2": 10, ".gz": 8}

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class BuildSummary:
    entities: int
    files: int
    triples: int
    malformed: int
    seconds: float
    report: ParseReport

    def line(self) -> str:
        return (
            f"indexed {self.entities} entities from {self.triples} triples in {self.files} files "
            f"({self.malformed} malformed lines skipped) in {self.seconds:.1f} s"
        )


def partitions_for(files: Sequence[Path]) -> int:
    """Enough partitions that each holds about PARTITION_BYTES of uncompressed statements, and at
    least MIN_PARTITIONS so that small collections are written in parallel too. The count depends
    on the input only (never on --workers), so the docid order does not either."""
    estimate = sum(f.stat().st_size * COMPRESSION_RATIO.get(f.suffix, 1) for f in files)
    return max(MIN_PARTITIONS, min(1024, math.ceil(estimate / PARTITION_BYTES)))


def balanced_groups(files: Sequence[Path], workers: int) -> list[list[Path]]:
    """Files spread over workers, largest first onto the least loaded (deterministic)."""
    buckets: list[list[Path]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for path in sorted(files, key=lambda p: (-p.stat().st_size, str(p))):
        k = loads.index(min(loads))
        buckets[k].append(path)
        loads[k] += path.stat().st_size
    return [sorted(bucket) for bucket in buckets if bucket]


def _spill_task(files: list[Path], out_dir: Path, partitions: int, links_only: bool) -> tuple[Path, ParseReport]:
    result = spill(files, out_dir, partitions, links_only=files if links_only else ())
    return result.labels_file, result.report


def _count_task(partition_files: list[Path]) -> Counter[str]:
    return count_predicates(partition_files)


_labels: tuple[tuple[str, tuple[Path, ...]], Any] | None = None
"""The labels this process loaded last, by build and files: loaded once per worker and build."""


def _write_task(
    partition_files: list[Path], build: str, labels_files: tuple[Path, ...], predicates: list[str], out: Path,
    relations: bool, ltr: bool
) -> WrittenDocuments:
    global _labels
    if _labels is None or _labels[0] != (build, labels_files):
        _labels = None  # the old ones may go before the new ones load
        _labels = ((build, labels_files), load_labels(labels_files))
    writer = EntityIndexWriter(out, relations=relations, ltr=ltr)
    writer.add_partition(partition_documents(partition_files, _labels[1], predicates, relations=relations, ltr=ltr))
    writer.close(merge=False)
    return writer.written


def _map_with_progress(
    pool: WorkerPool, fn: Callable[..., R], argument_lists: Iterable[tuple[Any, ...]], description: str,
    sizes: Sequence[int] | None = None,
) -> list[R]:
    """``fn`` over the argument lists by the pool (:func:`elquery.workers.ordered_map`), results
    in order, with a progress bar on stderr (on a terminal) that advances by each task's size in
    bytes when ``sizes`` are given. Every task may be taken at once (their results are all kept):
    a worker never waits for a slower task before it."""
    arguments = list(argument_lists)
    weights = list(sizes) if sizes is not None else [1] * len(arguments)
    results = []
    with tqdm(total=sum(weights), desc=description, unit="B" if sizes is not None else " parts",
              unit_scale=sizes is not None, disable=None) as bar:
        for result, weight in zip(ordered_map(fn, arguments, pool, window=max(1, len(arguments))), weights):
            results.append(result)
            bar.update(weight)
    return results


def index_plan(dumps: Sequence[Path | str], top_predicates_n: int = 1000,
               skipped_datasets: Sequence[str] = SKIPPED_DATASETS, relations: bool = False,
               ltr_fields: bool = True) -> BuildPlan:
    """The dump files an index build reads and the options that shape it (its provenance;
    ``relations`` and ``ltr_fields`` are recorded only when on, so an index without them keeps the
    record it had before they existed). With ``ltr_fields``, the page links datasets are read
    (for their links only) even when skipped."""
    files = [f for f in dump_files(dumps)
             if not is_skipped_dataset(f, skipped_datasets) or (ltr_fields and is_link_dataset(f))]
    options: dict[str, Any] = {"top_predicates": top_predicates_n, "skip_datasets": list(skipped_datasets)}
    if relations:
        options["relations"] = True
    if ltr_fields:
        options["ltr_fields"] = True
    return BuildPlan("entity index", tuple(files), options)


def build_dbpedia_index(
    dumps: Sequence[Path | str],
    out: Path | str,
    *,
    top_predicates_n: int = 1000,
    workers: int | None = None,
    overwrite: bool = False,
    skipped_datasets: Sequence[str] = SKIPPED_DATASETS,
    relations: bool = False,
    ltr_fields: bool = True,
    threads: int | None = None,
) -> BuildSummary:
    """Build the entity index at ``out`` from DBpedia dump files or directories, in ``workers``
    processes (default: one per core); with ``relations``, also the keyword field of related
    entity ids (ELR); with ``ltr_fields`` (the default), also the LTR fields and counts
    (methods.md §9). ``threads`` is the former name of ``workers``, deprecated."""
    started = time.monotonic()
    if threads is not None:
        warnings.warn("build_dbpedia_index(threads=...) is deprecated; use workers=...", DeprecationWarning,
                      stacklevel=2)
        workers = threads if workers is None else workers
    workers = default_workers() if workers is None else check_workers(workers)
    out = Path(out)
    if out.parent.is_dir():  # else it is created for the build, below
        check_output(out, "entity index", overwrite)
    plan = index_plan(dumps, top_predicates_n, skipped_datasets, relations, ltr_fields)
    files = list(plan.inputs)
    links_only = {f for f in files if is_skipped_dataset(f, skipped_datasets)}
    if not files:
        raise ElqueryError("no dump files left to index after skipping link datasets")
    if top_predicates_n < 1:
        raise ElqueryError("--top-predicates must be at least 1")
    partitions = partitions_for(files)
    workers = min(workers, max(len(files), partitions))
    # The output's folder is created for the build (removed again if the build fails); SIGTERM
    # interrupts like Ctrl-C, so the cleanup below runs.
    with created_folder(out.parent), sigterm_interrupts(), work_folder(out) as work:
        with worker_pool(workers) as pool:
            summary = _build(files, links_only, work, pool, workers, partitions, top_predicates_n,
                             relations, ltr_fields)
        write_provenance(work / "index", plan.record({"entities": summary[0], "files": len(files),
                                                      "triples": summary[1].triples,
                                                      "malformed": summary[1].malformed}))
        replace(work / "index", out)
    return BuildSummary(
        entities=summary[0],
        files=len(files),
        triples=summary[1].triples,
        malformed=summary[1].malformed,
        seconds=time.monotonic() - started,
        report=summary[1],
    )


def _build(
    files: list[Path], links_only: set[Path], work: Path, pool: WorkerPool, workers: int, partitions: int,
    top_n: int, relations: bool, ltr: bool,
) -> tuple[int, ParseReport]:
    # One spill task per file, largest first, each worker taking the next file when it is done
    # (files differ in cost per byte: spreading them over the workers up front left one idle).
    spill_dirs = {f: work / "spill" / f"f{k}" for k, f in enumerate(files)}
    largest_first = sorted(files, key=lambda f: (-f.stat().st_size, str(f)))
    spilled = dict(zip(largest_first, _map_with_progress(
        pool, _spill_task, [([f], spill_dirs[f], partitions, f in links_only) for f in largest_first], "reading dumps",
        sizes=[f.stat().st_size for f in largest_first],
    )))
    labels_files: list[Path] = []
    report = ParseReport()
    # The report lists the files (and of a subject's labels in two files, the later is taken) in
    # the order of the workers' shares of the files, as before spilling went file by file.
    for path in (f for group in balanced_groups(files, workers) for f in group):
        labels_file, file_report = spilled[path]
        labels_files.append(labels_file)
        report.files.update(file_report.files)
    partition_files = [[d / f"part-{p:04d}.tsv" for d in spill_dirs.values()] for p in range(partitions)]
    counts: Counter[str] = Counter()
    for partial in _map_with_progress(pool, _count_task, [(p,) for p in partition_files], "counting predicates"):
        counts.update(partial)
    predicates = top_predicates(counts, top_n)
    sub_indexes = [work / "sub" / f"p{p:04d}" for p in range(partitions)]
    build = uuid.uuid4().hex
    written = _map_with_progress(
        pool,
        _write_task,
        [(partition_files[p], build, tuple(labels_files), predicates, sub_indexes[p], relations, ltr)
         for p in range(partitions)],
        "indexing entities",
    )
    shutil.rmtree(work / "spill")
    everything = WrittenDocuments()
    for part in written:
        everything.extend(part)
    if not everything.entities:
        raise ElqueryError("no entity in the dumps has both rdfs:label and rdfs:comment: nothing to index")
    if sys.stderr.isatty():
        print(f"merging {len(sub_indexes)} partitions into one segment ({len(everything.entities)} entities)",
              file=sys.stderr)
    _merge(pool, sub_indexes, everything, work / "index", sorted(predicates, key=lambda p: (-counts[p], p)))
    return len(everything.entities), report


def _merge(
    pool: WorkerPool, sub_indexes: list[Path], written: WrittenDocuments, index: Path, predicates: list[str],
) -> None:
    """The single-segment index and the files beside it (:mod:`elquery.indexing.index_files`). The
    Lucene work runs as a task of the pool (a worker's JVM is running already; this process
    starts none)."""
    index.mkdir(parents=True)
    metadata = write_index_files(index, written, predicates)
    record_statistics(index, metadata, pool.call(_merge_task, sub_indexes, index))


def _merge_task(sub_indexes: list[Path], index: Path) -> dict[str, Any]:
    """Merge the sub-indexes, in order, into ``index`` (one segment; Lucene leaves the files
    beside it alone); returns the statistics ``elquery.json`` records of it."""
    writer = EntityIndexWriter(index)
    writer.add_indexes(sub_indexes)
    writer.close(merge=True)
    return index_statistics(index)
