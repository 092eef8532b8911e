"""Build the surface-form store (methods.md §3) from DBpedia dumps, FACC count files and anchors.

Pipeline, with memory bounded by ``memory_mb`` per process whatever the number of rows and pairs
(:mod:`elquery.indexing.surface_forms.memory`; plus the Freebase mapping and the entity ids,
which grow with the knowledge base only):

1. The dumps are read in this process: redirects first, then KB aliases, anchor texts and the
   Freebase mapping (``sources``). Aliases and anchors are summed in chunks and spilled.
2. The Freebase mapping (a hash table in numpy arrays, :mod:`~elquery.indexing.surface_forms.mid_numbers`)
   and the entity ids go to files, and the dump sources are dropped. FACC files are read by
   ``workers`` processes (spawned; they map the mapping's files, so the page cache holds one
   copy), each spilling its rows (normalized, unsummed) a chunk at a time, partitioned by a hash of the
   normalized form; the partitions are as many as the input needs for one to be merged within
   ``memory_mb``.
3. Partitions are merged by ``workers`` processes (spawned, :func:`elquery.workers.ordered_map`; they map the entity ids
   from that file) into shards, which are appended here to the store, a temporary file next to
   the output that is renamed into place when the store is complete; SQLite indexes it with a page
   cache of a quarter of ``memory_mb`` (its sorts spill to temporary files).
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import queue
import resource
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from elquery.base import ElqueryError, check_workers, default_workers
from elquery.indexing.build_outputs import check_output, replace, work_folder
from elquery.workers import die_with_parent, ordered_map, worker_pool
from elquery.indexing.ntriples import dump_files
from elquery.indexing.provenance import BuildPlan, write_provenance
from elquery.indexing.surface_forms.aggregate import SOURCE_ANCHORS, SOURCE_FACC, SOURCE_KB, PairChunk, SpillWriter, merge_partition
from elquery.indexing.surface_forms.facc import ArrowRows, FaccReport, facc_files, read_facc
from elquery.indexing.surface_forms.entity_names import MappedEntityNames, write_entity_names
from elquery.indexing.surface_forms.mid_numbers import MidNumbers
from elquery.indexing.surface_forms.memory import (
    DEFAULT_MEMORY_MB,
    check_memory,
    chunk_rows,
    partition_input_bytes,
    sqlite_cache_kib,
)
from elquery.indexing.surface_forms.facc_annotations import CountReport, annotation_files, count_annotations
from elquery.indexing.surface_forms.sources import (
    ANCHOR_TEXT,
    FOAF_NAME,
    RDFS_LABEL,
    REDIRECT,
    SAME_AS,
    DumpReport,
    DumpSources,
    Entities,
    predicates_of,
    read_redirects,
)
from elquery.indexing.surface_forms.store_writer import Shard, append_shard, create, finish, write_shard
from elquery.kb.surface_forms.layout import ANCHORS, FACC, FORMAT, KB

COMPRESSION_RATIO = 6
SPARE_FILES = 64
"""Open files a spilling process keeps for other uses than its partitions' spill files."""
_BATCH = 100_000


@dataclass(frozen=True)
class BuildOptions:
    """Sources and resources of a build. ``min_count`` applies per counted source (FACC, anchors)."""

    dumps: tuple[Path, ...]
    facc: tuple[Path, ...] = ()
    facc_annotations: tuple[Path, ...] = ()
    min_posterior: float = 0.0
    anchors: bool = False
    kb_aliases: bool = True
    min_count: int = 1
    workers: int = field(default_factory=default_workers)
    memory_mb: int = DEFAULT_MEMORY_MB
    progress: bool | None = None  # None: progress bars only on a terminal

    @property
    def chunk_rows(self) -> int:
        """Rows a summing process holds before it spills (``memory_mb``)."""
        return chunk_rows(self.memory_mb)

    @property
    def sources(self) -> list[str]:
        return [name for name, on in ((KB, self.kb_aliases), (FACC, bool(self.facc or self.facc_annotations)), (ANCHORS, self.anchors)) if on]


@dataclass
class BuildReport:
    """What a build read, dropped and wrote."""

    sources: list[str]
    min_count: int
    dumps: DumpReport = field(default_factory=DumpReport)
    facc: FaccReport = field(default_factory=FaccReport)
    facc_annotations: CountReport | None = None
    forms: int = 0
    pairs: int = 0
    entities: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # per step; not stored (not deterministic)

    def to_json(self) -> dict:
        data = asdict(self)
        del data["seconds"]
        data["dumps"]["parse"] = {
            "triples": self.dumps.parse.triples,
            "malformed": self.dumps.parse.malformed,
            "errors": [e for f in self.dumps.parse.files.values() for e in f.errors],
        }
        return data

    def summary_lines(self) -> list[str]:
        d, f = self.dumps, self.facc
        lines = [f"sources: {', '.join(self.sources)}; min count {self.min_count}"]
        lines.append(
            f"dumps: {d.parse.triples} triples read, {d.parse.malformed} malformed lines; {d.redirects} redirects, "
            f"{d.kb_aliases} KB aliases (+{d.redirect_title_aliases} redirect titles), {d.anchor_links} anchor links, "
            f"{d.freebase_links} Freebase links ({d.freebase_conflicts} ids linked to several entities), "
            f"{d.skipped_disambiguation} disambiguation entries skipped, {d.empty_forms} texts that normalize to nothing"
        )
        lines += [e for file in d.parse.files.values() for e in file.errors]
        if self.facc_annotations is not None:
            lines += self.facc_annotations.summary_lines()
        if FACC in self.sources:
            lines.append(
                f"facc: {f.files} files, {f.rows} rows, {f.mapped_rows} mapped, {f.malformed_rows} malformed (skipped), "
                f"{f.unmapped_rows} with unmapped Freebase ids (count {f.unmapped_count}, dropped), "
                f"{f.empty_form_rows} with a form that normalizes to nothing (dropped)"
            )
            lines += f.errors
            if f.unmapped_examples:
                lines.append(f"facc: unmapped ids, e.g. {', '.join(f.unmapped_examples)}")
        lines.append(f"store: {self.forms} forms, {self.pairs} (form, entity) pairs, {self.entities} entities")
        return lines


def _partitions(paths: Iterable[Path], memory_mb: int) -> int:
    """Enough partitions that one holds about ``partition_input_bytes(memory_mb)`` of
    (uncompressed) input (the FACC files and the dump files that are read), and at most as many
    as a process may keep open files (each spilling process keeps one per partition)."""
    size = sum(p.stat().st_size * (COMPRESSION_RATIO if p.name.endswith((".gz", ".bz2")) else 1) for p in paths)
    open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    most = max(1, (open_files if open_files != resource.RLIM_INFINITY else 1 << 16) - SPARE_FILES)
    return max(1, min(most, math.ceil(size / partition_input_bytes(memory_mb))))


def _bar(options: BuildOptions, **kwargs) -> tqdm:
    return tqdm(disable=None if options.progress is None else not options.progress, file=sys.stderr, **kwargs)


class _Batcher:
    """Collects (text, entity id) records for a chunk, adding them in batches."""

    def __init__(self, chunk: PairChunk) -> None:
        self.chunk = chunk
        self.texts: list[str] = []
        self.entities: list[int] = []

    def __call__(self, text: str, entity: int) -> None:
        self.texts.append(text)
        self.entities.append(entity)
        if len(self.texts) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if self.texts:
            self.chunk.add(self.texts, np.array(self.entities, np.int64), np.ones(len(self.texts), np.int64))
            self.texts, self.entities = [], []


def _predicates(options: BuildOptions) -> frozenset[str]:
    """The predicates read from the dumps besides the redirects."""
    predicates = {RDFS_LABEL, FOAF_NAME} if options.kb_aliases else set()
    predicates |= {ANCHOR_TEXT} if options.anchors else set()
    predicates |= {SAME_AS} if FACC in options.sources else set()
    return frozenset(predicates)


def _read_dumps(files: list[Path], options: BuildOptions, spill: SpillWriter, report: DumpReport) -> DumpSources:
    """Step 1: redirects, then KB aliases and anchors (spilled) and the Freebase mapping."""
    redirects = read_redirects(files, report)
    sources = DumpSources(redirects, Entities(), report)
    predicates = _predicates(options)
    aliases = _Batcher(PairChunk(SOURCE_KB, spill, options.chunk_rows))
    anchors = _Batcher(PairChunk(SOURCE_ANCHORS, spill, options.chunk_rows))
    with _bar(options, total=len(files), unit="file", desc="dumps") as bar:
        for path in files:
            sources.read(path, predicates, aliases, anchors)
            bar.update()
    if options.kb_aliases:
        sources.finish(aliases)
    for batcher in (aliases, anchors):
        batcher.flush()
        batcher.chunk.flush()
        report.empty_forms += batcher.chunk.empty_form_rows
    return sources


def _ingest(paths: Iterable[Path], mids: MidNumbers, spill: SpillWriter, chunk_rows: int,
            done: Callable[[Path, FaccReport], None]) -> int:
    """Sum the rows of FACC files in chunks and spill them; ``done(path, report)`` after each file.
    Returns the number of rows dropped because their form normalizes to nothing."""
    chunk = PairChunk(SOURCE_FACC, spill, chunk_rows, summed=False)  # count rows: nearly all distinct pairs
    for path in paths:
        report = FaccReport()
        for rows in read_facc(path, mids, report):
            if isinstance(rows, ArrowRows):
                chunk.add_array(rows.texts, rows.entities, rows.counts)
            else:
                chunk.add(rows.forms, rows.entities, rows.counts)
        done(path, report)
    chunk.flush()
    return chunk.empty_form_rows


def _facc_worker(tasks, results, spill_dir: Path, spill: SpillWriter, chunk_rows: int, parent: int) -> None:
    """A FACC reader process: takes paths from ``tasks`` until None, reports to ``results``."""
    die_with_parent(parent)
    try:
        mids = MidNumbers.load(spill_dir)
        empty = _ingest(iter(tasks.get, None), mids, spill, chunk_rows, lambda *file: results.put(("file", file)))
        spill.close()
        results.put(("done", empty))
    except ElqueryError as exc:
        results.put(("error", str(exc)))
    except BaseException:  # noqa: BLE001 - reported to the parent, which raises
        results.put(("crash", traceback.format_exc()))


def _read_facc(files: list[Path], options: BuildOptions, spill_dir: Path, partitions: int) -> FaccReport:
    """Step 2: FACC files read by ``workers`` processes (in this process if one suffices), the
    mapping read from the files :meth:`MidNumbers.save` wrote in ``spill_dir``. The per-file
    reports are combined in file order, so the report does not depend on scheduling."""
    workers = min(options.workers, len(files))
    by_file: dict[Path, FaccReport] = {}
    empty_form_rows = 0
    with _bar(options, total=len(files), unit="file", desc="facc") as bar:

        def done(path: Path, report: FaccReport) -> None:
            by_file[path] = report
            bar.set_postfix(rows=sum(r.rows for r in by_file.values()), refresh=False)
            bar.update()

        if workers <= 1:
            spill = SpillWriter(spill_dir, "facc-0", partitions)
            try:
                empty_form_rows = _ingest(files, MidNumbers.load(spill_dir), spill, options.chunk_rows, done)
            finally:
                spill.close()
        else:
            empty_form_rows = _run_workers(files, workers, options, spill_dir, partitions, done)
    report = FaccReport()
    for path in files:
        report.add(by_file[path])
    report.empty_form_rows = empty_form_rows
    return report


def _run_workers(files: list[Path], workers: int, options: BuildOptions, spill_dir: Path, partitions: int,
                 done: Callable[[Path, FaccReport], None]) -> int:
    """Start ``workers`` FACC readers sharing a queue of files; returns their empty-form rows."""
    context = multiprocessing.get_context("spawn")
    tasks, results = context.Queue(), context.Queue()
    for path in [*files, *[None] * workers]:
        tasks.put(path)
    processes = [
        context.Process(
            target=_facc_worker,
            args=(tasks, results, spill_dir, SpillWriter(spill_dir, f"facc-{n}", partitions), options.chunk_rows, os.getpid()),
            daemon=True,
        )
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    finished = empty_form_rows = 0
    try:
        while finished < workers:
            try:
                kind, value = results.get(timeout=1.0)
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in processes):
                    raise RuntimeError("a FACC worker died (out of memory?)") from None
                continue
            if kind == "file":
                done(*value)
            elif kind == "done":
                empty_form_rows += value
                finished += 1
            elif kind == "error":
                raise ElqueryError(value)
            else:
                raise RuntimeError(f"FACC worker failed:\n{value}")
    finally:
        for process in processes:
            if finished < workers:
                process.terminate()
            process.join()
    return empty_form_rows


_name_ranks: np.ndarray = np.zeros(0, np.int64)
"""In a merge worker (or in this process, for one worker): the rank of each entity's id in sorted
order, mapped (:attr:`MappedEntityNames.ranks`)."""


def _map_names(directory: Path) -> None:
    global _name_ranks
    _name_ranks = MappedEntityNames(directory).ranks


def _unmap_names() -> None:
    global _name_ranks
    _name_ranks = np.zeros(0, np.int64)


def _shard_task(task: tuple[list[Path], int, Path]) -> tuple[Path, int, int, Shard]:
    """Merge one partition and write it as a shard: (shard file, forms, pairs, shard); its
    spill files are removed once merged (temporary disk: the spills not yet merged and the store)."""
    spills, min_count, path = task
    part = merge_partition(spills, min_count)
    for spill in spills:
        spill.unlink()
    return path, len(part.forms), len(part.pair_forms), write_shard(path, part, _name_ranks)


def _assemble(db_path: Path, spill_dir: Path, partitions: int, options: BuildOptions, report: BuildReport) -> None:
    """Step 3: merge the partitions into shards (``workers`` processes) and copy them, in
    partition order, into the store; form ids are consecutive across partitions. The entity ids
    are read from the files :func:`write_entity_names` wrote in ``spill_dir``; the entities used
    are kept as one flag per entity (memory that does not grow with the pairs)."""
    tasks = (
        (sorted(spill_dir.glob(f"*-{p:05d}.spill")), options.min_count, spill_dir / f"shard-{p:05d}.sqlite")
        for p in range(partitions)
    )
    names = MappedEntityNames(spill_dir)
    with worker_pool(min(options.workers, partitions), _map_names, (spill_dir,), _unmap_names) as pool:
        db = create(db_path, sqlite_cache_kib(options.memory_mb))
        try:
            used = np.zeros(len(names), bool)
            longest = 0
            with _bar(options, total=partitions, unit="part", desc="merge") as bar:
                for path, forms, pairs, shard in ordered_map(_shard_task, ((task,) for task in tasks), pool):
                    append_shard(db, path, report.forms)
                    path.unlink()
                    report.forms += forms
                    report.pairs += pairs
                    used[shard.entities] = True
                    longest = max(longest, shard.longest_form_tokens)
                    bar.update()
            if report.forms == 0:
                raise ElqueryError(f"no surface forms found in the sources given ({', '.join(options.sources) or 'none'})")
            report.entities = int(np.count_nonzero(used))
            finish(db, np.flatnonzero(used), names, longest,
                   {"sources": options.sources, "min_count": options.min_count, "report": report.to_json()})
        finally:
            db.close()


def store_plan(options: BuildOptions) -> BuildPlan:
    """The files a store build reads and the options that shape the store (its provenance)."""
    wanted = _predicates(options) | {REDIRECT}
    dumps = [p for p in dump_files(options.dumps) if predicates_of(p, wanted)]
    facc = facc_files(list(options.facc)) if options.facc else []
    annotations = annotation_files(options.facc_annotations) if options.facc_annotations else []
    return BuildPlan("surface-form store", tuple(dumps + facc + annotations),
                     {"sources": options.sources, "min_count": options.min_count, "min_posterior": options.min_posterior,
                      "format": FORMAT})


def build_store(out: Path | str, options: BuildOptions, overwrite: bool = False) -> BuildReport:
    """Build the store at ``out`` from the sources in ``options`` (methods.md §3)."""
    out = Path(out)
    check_output(out, "surface-form store", overwrite)
    if options.min_count < 1:
        raise ElqueryError(f"--min-count must be at least 1, not {options.min_count}")
    check_workers(options.workers)
    check_memory(options.memory_mb)
    plan = store_plan(options)
    dumps = dump_files(options.dumps)
    facc = facc_files(list(options.facc)) if options.facc else []
    annotations = annotation_files(options.facc_annotations) if options.facc_annotations else []
    report = BuildReport(options.sources, options.min_count)
    with work_folder(out) as spill_dir:
        if annotations:
            step = time.perf_counter()
            counts = spill_dir / "facc-annotation-counts.tsv"
            report.facc_annotations = count_annotations(annotations, counts, min_posterior=options.min_posterior,
                                                        memory_mb=options.memory_mb, workers=options.workers,
                                                        work=spill_dir, progress=options.progress)
            facc.append(counts)
            report.seconds["facc_annotations"] = time.perf_counter() - step
        partitions = _partitions(facc + [p for p in dumps if predicates_of(p, _predicates(options))], options.memory_mb)
        step = time.perf_counter()
        spill = SpillWriter(spill_dir, "dumps", partitions)
        try:
            sources = _read_dumps(dumps, options, spill, report.dumps)
        finally:
            spill.close()
        report.seconds["dumps"], step = time.perf_counter() - step, time.perf_counter()
        if facc:
            if not len(sources.mids):
                raise ElqueryError(
                    f"{', '.join(map(str, options.dumps))}: no owl:sameAs links to Freebase, so FACC ids cannot be mapped"
                )
            sources.mid_numbers().save(spill_dir)
        write_entity_names(spill_dir, sources.entities.names)
        del sources  # the redirects, the mapping and the entity ids: read from their files from here on
        gc.collect()
        if facc:
            report.facc = _read_facc(facc, options, spill_dir, partitions)
            report.seconds["facc"], step = time.perf_counter() - step, time.perf_counter()
        db_path = spill_dir / "store.sqlite"
        _assemble(db_path, spill_dir, partitions, options, report)
        report.seconds["merge_and_write"] = time.perf_counter() - step
        write_provenance(db_path, plan.record(report.to_json()))
        replace(db_path, out)
    return report
