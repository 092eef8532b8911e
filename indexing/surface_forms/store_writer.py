"""Writing the surface-form store (the format of :mod:`elquery.kb.surface_forms.store`, which
reads it; methods.md §3): one shard per partition of the forms, each a store without indexes,
assembled into the store, then indexed and given its format and metadata.

Every table is filled in the order of its key (forms by form id, partition after partition;
entities and their forms by entity id), so each insert appends to its B-tree and the store is
written at the disk's speed with a bounded page cache, whatever its size; the indexes (forms by
text, entities by name) are made at the end by SQLite's external sort. The forms of each entity
(``entity_forms``) are gathered without holding the pairs: each shard's (entity, form) pairs,
sorted, are appended to files of 65,536 entity numbers each (:data:`ENTITY_BUCKET_BITS`), which
:func:`finish` reads one at a time, in entity order.

Commonness (Eq. 9) is computed here, once, for every pair (:func:`commonness_counts`), and each
form's candidates are encoded in candidate order (:func:`encode_candidates`), so a lookup reads
one row.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from elquery.indexing.surface_forms.aggregate import MergedPartition
from elquery.indexing.surface_forms.entity_names import MappedEntityNames
from elquery.indexing.surface_forms.kernels import candidate_order_of, fill_candidates
from elquery.kb.surface_forms.candidates import SOURCE_BITS, WIDTHS
from elquery.kb.surface_forms.layout import FORMAT
from elquery.kb.surface_forms.store import LONGEST_FORM_KEY

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entities(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE forms(id INTEGER PRIMARY KEY, form TEXT NOT NULL, candidates BLOB NOT NULL);
CREATE TABLE entity_forms(id INTEGER PRIMARY KEY, forms BLOB NOT NULL);
"""
# Created after the bulk load (faster than maintaining them row by row).
INDEXES = """
CREATE UNIQUE INDEX entities_by_name ON entities(name);
CREATE UNIQUE INDEX forms_by_form ON forms(form);
"""
SHARD_PAIRS = "CREATE TABLE entity_pairs(chunk INTEGER PRIMARY KEY, entities BLOB NOT NULL, forms BLOB NOT NULL)"
"""A shard's (entity, form) pairs sorted by entity then form, as uint32 arrays in chunks of
:data:`_PAIR_CHUNK` (not part of the store)."""
_BUILD_PRAGMAS = ("journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE", "threads = 2")
SHARD_CACHE_KIB = 8192
ENTITY_BUCKET_BITS = 16
_PAIR_CHUNK = 1 << 22
ROWS_PER_INSERT = 1000
_PAIR = np.dtype([("entity", "<u4"), ("form", "<u4")])


def commonness_counts(part: MergedPartition) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of a partition: n(m, e) and the form's sum over e' of n(m, e') for commonness
    (methods.md §3, Eq. 9), and the sources bitmask. The counts are the FACC counts when the
    form has any, else the anchor counts."""
    use_facc = (part.facc_totals > 0)[part.pair_forms]
    counts = np.where(use_facc, part.pair_facc, part.pair_anchors)
    totals = np.where(use_facc, part.facc_totals[part.pair_forms], part.anchor_totals[part.pair_forms])
    sources = (part.pair_kb > 0) | (part.pair_facc > 0) << 1 | (part.pair_anchors > 0) << 2
    return counts, totals, sources


def names_of(names: Sequence[str], numbers: np.ndarray) -> list[str]:
    """``names[n]`` for each of ``numbers``, in one pass over mapped names."""
    if isinstance(names, MappedEntityNames):
        return names.take(numbers)
    return [names[n] for n in numbers.tolist()]


def candidate_order(forms: np.ndarray, counts: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The order of a partition's pairs by form, then count descending, then the rank of the
    entity's id (``np.lexsort((ranks, -counts, forms))``; forms ascending, each (form, rank) once):
    each form's pairs sorted in place (:func:`candidate_order_of`)."""
    return candidate_order_of(np.asarray(forms, np.int64), np.asarray(counts, np.int64), np.asarray(ranks, np.int64))


def _width_codes(counts: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per form (pairs ``starts[i]:starts[i + 1]``), the code of the fewest bytes that hold its
    largest count (:data:`elquery.kb.surface_forms.candidates.WIDTHS`)."""
    largest = np.maximum.reduceat(counts, starts) if len(counts) else np.zeros(0, np.int64)
    return np.searchsorted(np.array([1, 1 << 8, 1 << 16, 1 << 32]), largest, side="right")


def encode_candidates(forms: np.ndarray, entities: np.ndarray, kb: np.ndarray, facc: np.ndarray,
                      anchors: np.ndarray) -> tuple[bytes, list[int]]:
    """The candidate blobs of consecutive forms (layout of :mod:`elquery.kb.surface_forms.candidates`)
    from their pairs in candidate order (``forms`` ascending, every form 0..n-1 with a pair), at
    once: (the blobs one after the other, the n + 1 offsets that cut them apart)."""
    pairs = len(forms)
    starts = np.flatnonzero(np.r_[True, forms[1:] != forms[:-1]]) if pairs else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, pairs])
    widths = np.array(WIDTHS)
    facc_code, anchor_code = _width_codes(facc, starts), _width_codes(anchors, starts)
    facc_width, anchor_width = widths[facc_code], widths[anchor_code]
    if pairs and int(entities.max()) >= 1 << (32 - SOURCE_BITS):
        raise ValueError(f"entity numbers must be below 2^{32 - SOURCE_BITS}")
    blob_sizes = 1 + sizes * (4 + facc_width + anchor_width)
    ends = np.cumsum(blob_sizes)
    begins = ends - blob_sizes
    out = np.empty(int(ends[-1]) if pairs else 0, np.uint8)  # every byte written below
    out[begins] = facc_code | anchor_code << 3
    sources = (kb > 0) | (facc > 0) << 1 | (anchors > 0) << 2
    words = entities.astype(np.int64) << SOURCE_BITS | sources.astype(np.int64)
    fill_candidates(out, begins, np.r_[starts, pairs], words, facc.astype(np.int64), anchors.astype(np.int64),
                    facc_width, anchor_width)
    return out.tobytes(), np.r_[0, ends].tolist()


def insert_rows(db: sqlite3.Connection, table: str, columns: Sequence[Sequence[object]]) -> None:
    """Insert the rows ``zip(*columns)`` into ``table`` (a name, or a name and the columns
    given: ``forms(form, candidates)``), up to :data:`ROWS_PER_INSERT` rows a
    statement (a multi-row ``VALUES``): Python binds the values of many rows in one call, about
    half the CPU of one statement a row."""
    width, rows = len(columns), len(columns[0])
    values: list[object] = [None] * (width * rows)
    for at, column in enumerate(columns):
        values[at::width] = column
    per = max(1, min(ROWS_PER_INSERT, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    row = f"({', '.join('?' * width)})"
    full = rows - rows % per
    if full:
        step = per * width
        db.executemany(f"INSERT INTO {table} VALUES {', '.join([row] * per)}",
                       (values[at:at + step] for at in range(0, full * width, step)))
    if full < rows:
        db.execute(f"INSERT INTO {table} VALUES {', '.join([row] * (rows - full))}", values[full * width:])


def create(path: Path, cache_kib: int = SHARD_CACHE_KIB) -> sqlite3.Connection:
    """A new, empty store (or shard) at ``path``, set up for a bulk load (no journal), with a page
    cache (and memory for each sort) of ``cache_kib`` KiB."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in (*_BUILD_PRAGMAS, f"cache_size = -{cache_kib}"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(SCHEMA)
    return db


@dataclass(frozen=True)
class Shard:
    """What :func:`write_shard` tells the assembler: the entity numbers the shard's pairs use
    (ascending) and the number of tokens of its longest form (0 without forms)."""

    entities: np.ndarray
    longest_form_tokens: int


def write_shard(path: Path, part: MergedPartition, name_ranks: np.ndarray) -> Shard:
    """Write one merged partition as a shard (forms with ids 1..n in the partition's sorted
    order and their encoded candidates, and its (entity, form) pairs by entity).
    ``name_ranks[n]`` is the rank of entity number n's id in sorted order
    (:attr:`MappedEntityNames.ranks`): candidates of equal commonness are ordered by id."""
    counts, _, _ = commonness_counts(part)
    order = candidate_order(part.pair_forms, counts, np.asarray(name_ranks)[part.pair_entities])
    blobs, offsets = encode_candidates(part.pair_forms[order], part.pair_entities[order], part.pair_kb[order],
                                       part.pair_facc[order], part.pair_anchors[order])
    by_entity = np.sort(part.pair_entities << 32 | part.pair_forms)  # both below 2^32
    entities, form_ids = (by_entity >> 32).astype("<u4"), (by_entity & 0xFFFFFFFF).astype("<u4")
    chunks = ((n, entities[s:s + _PAIR_CHUNK].tobytes(), form_ids[s:s + _PAIR_CHUNK].tobytes())
              for n, s in enumerate(range(0, len(entities), _PAIR_CHUNK)))
    db = create(path)
    try:
        db.execute(SHARD_PAIRS)
        db.execute("BEGIN")
        # the ids: SQLite's own rowids, 1..n (a third fewer values to bind than ids given)
        insert_rows(db, "forms(form, candidates)", [part.forms, list(map(blobs.__getitem__, map(slice, offsets, offsets[1:])))])
        db.executemany("INSERT INTO entity_pairs VALUES (?, ?, ?)", chunks)
        db.execute("COMMIT")
    finally:
        db.close()
    longest = max(map(str.count, part.forms, repeat(" ")), default=-1) + 1  # forms are space-joined tokens
    return Shard(entities[np.r_[True, entities[1:] != entities[:-1]]] if len(entities) else entities, longest)


def _buckets(db: sqlite3.Connection) -> Path:
    """The folder of the entity bucket files of the store ``db`` is writing (beside its file)."""
    main = next(row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main")
    return Path(f"{main}.entity-pairs")


def append_shard(db: sqlite3.Connection, shard: Path, offset: int) -> None:
    """Copy a shard into the store, its form ids shifted by ``offset``, and append its (entity,
    form) pairs to the entity buckets. Shards are appended in form-id order."""
    buckets = _buckets(db)
    buckets.mkdir(exist_ok=True)
    db.execute("ATTACH DATABASE ? AS shard", (str(shard),))
    try:
        db.execute("BEGIN")
        db.execute("INSERT INTO forms SELECT id - 1 + ?, form, candidates FROM shard.forms", (offset,))
        db.execute("COMMIT")
        for entity_bytes, form_bytes in db.execute("SELECT entities, forms FROM shard.entity_pairs ORDER BY chunk"):
            pairs = np.empty(len(entity_bytes) // 4, _PAIR)
            pairs["entity"] = np.frombuffer(entity_bytes, "<u4")
            pairs["form"] = np.frombuffer(form_bytes, "<u4") + np.uint32(offset)
            bucket = pairs["entity"] >> ENTITY_BUCKET_BITS
            bounds = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1], True])
            for start, end in zip(bounds.tolist(), bounds[1:].tolist()):
                with open(buckets / f"{int(bucket[start]):08d}.pairs", "ab") as file:
                    pairs[start:end].tofile(file)
    finally:
        db.execute("DETACH DATABASE shard")


def _entity_forms(buckets: Path) -> Iterator[tuple[list[int], list[bytes]]]:
    """By entity, a bucket at a time: the entities and their form ids (little-endian uint32,
    ascending), each bucket file removed once read."""
    for path in sorted(buckets.glob("*.pairs")):
        pairs = np.fromfile(path, _PAIR)
        path.unlink()
        pairs = pairs[np.argsort(pairs["entity"], kind="stable")]  # forms stay ascending: appended in form order
        forms = pairs["form"].tobytes()
        starts = np.flatnonzero(np.r_[True, pairs["entity"][1:] != pairs["entity"][:-1]])
        bounds = (4 * np.r_[starts, len(pairs)]).tolist()
        yield pairs["entity"][starts].tolist(), list(map(forms.__getitem__, map(slice, bounds, bounds[1:])))


def finish(db: sqlite3.Connection, entities: np.ndarray, names: Sequence[str], longest_form_tokens: int,
           meta: dict[str, object]) -> None:
    """Write the ``entities`` used (numbers into ``names``, ascending) and their forms, index the
    assembled store, and record its format, the number of tokens of its longest form and ``meta``
    (JSON values)."""
    buckets = _buckets(db)
    db.execute("BEGIN")
    for start in range(0, len(entities), 1 << 20):
        part = entities[start:start + (1 << 20)]
        insert_rows(db, "entities", [part.tolist(), names_of(names, part)])
    if buckets.is_dir():
        for numbers, forms in _entity_forms(buckets):
            insert_rows(db, "entity_forms", [numbers, forms])
        shutil.rmtree(buckets)
    db.execute("COMMIT")
    db.executescript(INDEXES)
    meta = {**meta, LONGEST_FORM_KEY: longest_form_tokens}
    rows = [("format", FORMAT)] + [(k, json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, v in meta.items()]
    db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
