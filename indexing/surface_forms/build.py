"""Build the surface-form store (methods.md §3) from DBpedia dumps, FACC count files and anchors.

Pipeline, with memory bounded by ``memory_mb`` per process whatever the number of rows and pairs
(:mod:`elquery.indexing.surface_forms.memory`; plus the Freebase mapping and the entity ids,
which grow with the knowledge base only):

One pool of ``workers`` processes (spawned, :func:`elquery.workers.worker_pool`; none for one
worker: the work runs here) serves steps 2 and 3; it starts with step 1, so the workers' start
(imports, the compiled loops of :mod:`~elquery.indexing.surface_forms.kernels`) overlaps it.

1. The dumps are read in this process: redirects first, then KB aliases, anchor texts and the
   Freebase mapping (``sources``). Aliases and anchors are summed in chunks and spilled.
2. The Freebase mapping (a hash table in numpy arrays, :mod:`~elquery.indexing.surface_forms.mid_numbers`)
   and the entity ids go to files, and the dump sources are dropped. FACC files are read by the
   workers, a group of consecutive files a task (they map the mapping's files, so the page cache
   holds one copy), each task spilling its rows (normalized, unsummed) a chunk at a time,
   partitioned by a hash of the normalized form; the partitions are as many as the input needs
   for one to be merged within ``memory_mb``.
3. Partitions are merged by the workers (:func:`elquery.workers.ordered_map`; they map the entity ids
   from that file) into shards (each partition's rows of ``forms``, sent here, and its pairs in a
   file), whose forms are inserted here into the store, a temporary file next to
   the output that is renamed into place when the store is complete; SQLite indexes it with a page
   cache of ``memory_mb`` (its sorts spill to temporary files beyond), while the workers
   gather each entity's forms from the shards' pairs, a run of entities at a time within
   ``memory_mb`` (``entity_forms``, copied in once the store is indexed).
"""

from __future__ import annotations

import ctypes
import gc
import math
import multiprocessing
import platform
import resource
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from elquery.base import ElqueryError, check_workers, default_workers
from elquery.indexing.build_outputs import check_output, replace, work_folder
from elquery.workers import WorkerPool, ordered_map, worker_pool
from elquery.indexing.ntriples import dump_files
from elquery.indexing.provenance import BuildPlan, fingerprints, write_provenance
from elquery.indexing.surface_forms.aggregate import SOURCE_ANCHORS, SOURCE_FACC, SOURCE_KB, PairChunk, SpillWriter, merge_partition
from elquery.indexing.surface_forms.facc import ArrowRows, FaccReport, facc_files, read_facc
from elquery.indexing.surface_forms.entity_names import MappedEntityNames, write_entity_names
from elquery.indexing.surface_forms.mid_numbers import MidNumbers
from elquery.indexing.surface_forms.memory import (
    DEFAULT_MEMORY_MB,
    check_memory,
    chunk_rows,
    entity_form_pairs,
    partition_input_bytes,
    sqlite_cache_kib,
    sqlite_index_cache_kib,
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
from elquery.indexing.surface_forms.store_writer import (
    Shard,
    append_shard,
    create,
    entity_ranges,
    finish,
    write_entity_forms,
    write_shard,
)
from elquery.indexing.surface_forms.kernels import warm_kernels
from elquery.kb.surface_forms.layout import ANCHORS, FACC, FORMAT, KB

COMPRESSION_RATIO = 6
SPARE_FILES = 64
"""Open files a spilling process keeps for other uses than its partitions' spill files."""
TASK_INPUT_BYTES = 64 << 20
"""Input (uncompressed) a FACC task reads at least, in consecutive files, unless the files end."""
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


def _input_bytes(path: Path) -> int:
    """The size of a file's input, uncompressed (estimated for a ``.gz`` or ``.bz2``)."""
    return path.stat().st_size * (COMPRESSION_RATIO if path.name.endswith((".gz", ".bz2")) else 1)


def _partitions(paths: Iterable[Path], memory_mb: int) -> int:
    """Enough partitions that one holds about ``partition_input_bytes(memory_mb)`` of
    (uncompressed) input (the FACC files and the dump files that are read), and at most as many
    as a process may keep open files (each spilling process keeps one per partition)."""
    size = sum(map(_input_bytes, paths))
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


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def _reuse_freed_memory() -> None:
    """Have glibc's malloc serve blocks up to 32 MiB (its most) from the heap and keep what is
    freed there for the next blocks, instead of mapping each large block afresh and unmapping it
    when freed: a worker allocates arrays of the same sizes partition after partition, and each
    fresh mapping costs the kernel a page fault and a zeroed page per 4 KiB (about half the
    system CPU of a merge). The heap stays at the worker's peak (bounded by ``--memory``)."""
    if platform.libc_ver()[0] == "glibc":
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)


def _warm() -> None:
    """A worker's start (while this process reads the dumps): the compiled loops loaded and, in
    a spawned worker (not this process, for one worker), freed memory kept for reuse."""
    if multiprocessing.parent_process() is not None:
        _reuse_freed_memory()
    warm_kernels()


def _forget_mapped() -> None:
    _mapped.clear()


_mapped: dict[tuple[str, Path], object] = {}
"""In a worker (or in this process, for one worker): the files of the build's work folder it has
mapped, by kind and folder: the Freebase mapping and the ranks of the entity ids."""


def _mids(spill_dir: Path) -> MidNumbers:
    """The Freebase mapping :meth:`MidNumbers.save` wrote in ``spill_dir``, mapped once per process."""
    mids = _mapped.get(("mids", spill_dir))
    if not isinstance(mids, MidNumbers):
        mids = _mapped["mids", spill_dir] = MidNumbers.load(spill_dir)
    return mids


def _name_ranks(spill_dir: Path) -> np.ndarray:
    """The rank of each entity's id in sorted order (:attr:`MappedEntityNames.ranks`), mapped once per process."""
    ranks = _mapped.get(("ranks", spill_dir))
    if not isinstance(ranks, np.ndarray):
        ranks = _mapped["ranks", spill_dir] = MappedEntityNames(spill_dir).ranks
    return ranks


def _facc_task(paths: list[Path], tag: str, spill_dir: Path, partitions: int,
               chunk_rows: int) -> tuple[list[FaccReport], int]:
    """Read a group of FACC files, spilling their rows (unsummed: count rows are nearly all
    distinct pairs) a chunk at a time as ``<tag>-<partition>.spill``: each file's report and the
    rows dropped because their form normalizes to nothing."""
    spill = SpillWriter(spill_dir, tag, partitions)
    reports = []
    try:
        chunk = PairChunk(SOURCE_FACC, spill, chunk_rows, summed=False)
        for path in paths:
            reports.append(FaccReport())
            for rows in read_facc(path, _mids(spill_dir), reports[-1]):
                if isinstance(rows, ArrowRows):
                    chunk.add_array(rows.texts, rows.entities, rows.counts)
                else:
                    chunk.add(rows.forms, rows.entities, rows.counts)
        chunk.flush()
    finally:
        spill.close()
    return reports, chunk.empty_form_rows


def _file_groups(files: list[Path]) -> list[list[Path]]:
    """Consecutive files in groups of at least :data:`TASK_INPUT_BYTES` of (uncompressed) input
    (the last one excepted): a task's spill pieces are not many tiny ones when the files are small."""
    groups: list[list[Path]] = [[]]
    size = 0
    for path in files:
        if size >= TASK_INPUT_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(path)
        size += _input_bytes(path)
    return groups if files else []


def _read_facc(files: list[Path], options: BuildOptions, spill_dir: Path, partitions: int, pool: WorkerPool) -> FaccReport:
    """Step 2: FACC files read by the ``pool``'s processes (in this process for one worker), the
    mapping read from the files :meth:`MidNumbers.save` wrote in ``spill_dir``. The per-file
    reports are combined in file order."""
    report = FaccReport()
    groups = _file_groups(files)
    tasks = ((group, f"facc-{n:05d}", spill_dir, partitions, options.chunk_rows) for n, group in enumerate(groups))
    with _bar(options, total=len(files), unit="file", desc="facc") as bar:
        for reports, empty_form_rows in ordered_map(_facc_task, tasks, pool):
            for file_report in reports:
                report.add(file_report)
            report.empty_form_rows += empty_form_rows
            bar.set_postfix(rows=report.rows, refresh=False)
            bar.update(len(reports))
    return report


def _shard_task(spills: list[Path], min_count: int, pairs_path: Path) -> tuple[Path, int, Shard]:
    """Merge one partition into a shard, its pairs written to ``pairs_path``: (that file, pairs, shard); its
    spill files are removed once merged (temporary disk: the spills not yet merged and the store)."""
    part = merge_partition(spills, min_count)
    for spill in spills:
        spill.unlink()
    return pairs_path, len(part.pair_forms), write_shard(pairs_path, part, _name_ranks(pairs_path.parent))


def _entity_forms_task(path: Path, shards: list[tuple[Path, int]], first: int, end: int) -> Path:
    """:func:`write_entity_forms` in a worker, which first gives back to the system the memory it
    kept for reuse (:func:`_reuse_freed_memory`): the merges are over, and the store is being indexed."""
    if multiprocessing.parent_process() is not None and platform.libc_ver()[0] == "glibc":
        ctypes.CDLL(None).malloc_trim(0)
    return write_entity_forms(path, shards, first, end)


def _entity_forms(spill_dir: Path, shards: list[tuple[Path, int]], bucket_pairs: np.ndarray, options: BuildOptions,
                  pool: WorkerPool) -> Iterator[Path]:
    """The files of the store's ``entity_forms`` rows, a run of entities each
    (:func:`entity_ranges`, at most :func:`entity_form_pairs` pairs a run), in entity order. With
    worker processes every run is handed to them at once, so they are written while this process
    indexes the store; with one worker each is written here when it is asked for."""
    tasks = [(spill_dir / f"entity-forms-{n:05d}.sqlite", shards, first, end)
             for n, (first, end) in enumerate(entity_ranges(bucket_pairs, entity_form_pairs(options.memory_mb)))]
    if pool.executor is None:
        return (_entity_forms_task(*task) for task in tasks)
    futures = [pool.executor.submit(_entity_forms_task, *task) for task in tasks]
    return (future.result() for future in futures)


def _assemble(db_path: Path, spill_dir: Path, partitions: int, options: BuildOptions, report: BuildReport,
              pool: WorkerPool) -> None:
    """Step 3: merge the partitions into shards (the ``pool``'s processes) and insert their forms,
    in partition order, into the store; form ids are consecutive across partitions. The entity ids
    are read from the files :func:`write_entity_names` wrote in ``spill_dir``; the entities used
    are kept as one flag per entity (memory that does not grow with the pairs). Then the
    ``pool``'s processes gather the forms of each entity from the shards' pair files while this
    process indexes the store."""
    tasks = (
        (sorted(spill_dir.glob(f"*-{p:05d}.spill")), options.min_count, spill_dir / f"shard-{p:05d}.pairs")
        for p in range(partitions)
    )
    names = MappedEntityNames(spill_dir)
    db = create(db_path, sqlite_cache_kib(options.memory_mb))
    try:
        used = np.zeros(len(names), bool)
        bucket_pairs = np.zeros(0, np.int64)
        shards: list[tuple[Path, int]] = []
        longest = 0
        with _bar(options, total=partitions, unit="part", desc="merge") as bar:
            for pairs_path, pairs, shard in ordered_map(_shard_task, tasks, pool):
                append_shard(db, shard, report.forms)
                shards.append((pairs_path, report.forms))
                report.forms += shard.forms
                report.pairs += pairs
                used[shard.entities] = True
                if len(shard.bucket_pairs) > len(bucket_pairs):
                    bucket_pairs = np.r_[bucket_pairs, np.zeros(len(shard.bucket_pairs) - len(bucket_pairs), np.int64)]
                bucket_pairs[:len(shard.bucket_pairs)] += shard.bucket_pairs
                longest = max(longest, shard.longest_form_tokens)
                bar.update()
        if report.forms == 0:
            raise ElqueryError(f"no surface forms found in the sources given ({', '.join(options.sources) or 'none'})")
        report.entities = int(np.count_nonzero(used))
        finish(db, np.flatnonzero(used), names, longest,
               {"sources": options.sources, "min_count": options.min_count, "report": report.to_json()},
               _entity_forms(spill_dir, shards, bucket_pairs, options, pool), sqlite_index_cache_kib(options.memory_mb))
        for pairs_path, _ in shards:
            pairs_path.unlink()
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


def _checksums_ahead(plan: BuildPlan) -> threading.Thread:
    """A thread taking the checksums of the plan's inputs for its provenance record now, while
    the dumps are read (hashing and reading files leave the interpreter free, and the second core
    would wait), instead of after the store is written; the record reuses them. A file it cannot
    read is left for the record to report."""

    def take() -> None:
        try:
            fingerprints(plan.inputs)
        except OSError:
            pass

    thread = threading.Thread(target=take, name="checksums", daemon=True)
    thread.start()
    return thread


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
    checksums = _checksums_ahead(plan)
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
        # the workers start (importing, loading the compiled loops) while this process reads the dumps
        with worker_pool(options.workers, _warm, (), _forget_mapped) as pool:
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
                report.facc = _read_facc(facc, options, spill_dir, partitions, pool)
                report.seconds["facc"], step = time.perf_counter() - step, time.perf_counter()
            db_path = spill_dir / "store.sqlite"
            _assemble(db_path, spill_dir, partitions, options, report, pool)
            report.seconds["merge_and_write"] = time.perf_counter() - step
        checksums.join()
        write_provenance(db_path, plan.record(report.to_json()))
        replace(db_path, out)
    return report
