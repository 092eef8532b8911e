"""Writing the surface-form store (the format of :mod:`elquery.kb.surface_forms.store`, which
reads it; methods.md §3): one shard per partition of the forms (its rows of ``forms``, made in a
worker: :func:`write_shard`), inserted into the store in partition order (:func:`append_shard`),
which is then indexed and given its format and metadata.

Every table is filled in the order of its key (forms by form id, partition after partition;
entities and their forms by entity id), so each insert appends to its B-tree and the store is
written at the disk's speed with a bounded page cache, whatever its size; the indexes (forms by
text, entities by name) are made at the end by SQLite's external sort. The forms of each entity
(``entity_forms``) are gathered without holding the pairs: each shard's (entity, form) pairs are
written to a file sorted, as one 64-bit key each (:func:`write_shard`), with a count of its pairs per
range of 2^:data:`ENTITY_BUCKET_BITS` entity numbers; the ranges are grouped into runs of at most
a number of pairs that ``--memory`` sets (:func:`entity_ranges`, so a run's memory does not grow
with the pairs per entity), and each run's ``entity_forms`` rows are written to a file of their
own (:func:`write_entity_forms`, in the build's workers while the store is indexed) that
:func:`finish` copies into the store in entity order.

Commonness (Eq. 9) is computed here, once, for every pair (:func:`commonness_counts`), and each
form's candidates are encoded in candidate order (:func:`encode_candidates`), so a lookup reads
one row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from elquery.indexing.surface_forms.aggregate import MergedPartition
from elquery.indexing.surface_forms.arrow_arrays import string_buffers
from elquery.indexing.surface_forms.entity_names import MappedEntityNames
from elquery.indexing.surface_forms.kernels import (
    candidate_order_of,
    fill_candidates,
    fixed_decimals,
    json_strings,
    sort_by_entity,
    space_counts,
)
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
_BUILD_PRAGMAS = ("journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE", "threads = 2")
RUN_CACHE_KIB = 8192
"""The page cache of a worker's file of ``entity_forms`` rows (:func:`write_entity_forms`)."""
ENTITY_BUCKET_BITS = 10
"""A shard counts its pairs per range of 2^10 entity numbers (the grain of :func:`entity_ranges`)."""
ROWS_PER_INSERT = 1000
_FORM_MASK = (1 << 32) - 1


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
                      anchors: np.ndarray) -> tuple[bytes, np.ndarray]:
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
    return out.tobytes(), np.r_[0, ends]


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


_OFFSET_DIGITS = 12
_START = f"CAST(substr(?3, {_OFFSET_DIGITS} * key + 1, {_OFFSET_DIGITS}) AS INTEGER)"
_END = f"CAST(substr(?3, {_OFFSET_DIGITS} * key + {_OFFSET_DIGITS + 1}, {_OFFSET_DIGITS}) AS INTEGER)"
_INSERT_FORMS = (f"INSERT INTO forms(id, form, candidates) SELECT ?4 + key, value, substr(?2, {_START} + 1, {_END} - {_START}) "
                 "FROM json_each(CAST(?1 AS TEXT))")
FORMS_PER_INSERT = 1 << 20
BLOB_BYTES_PER_INSERT = 1 << 28


def insert_forms(db: sqlite3.Connection, text_offsets: np.ndarray, text: np.ndarray, blobs: bytes, offsets: np.ndarray,
                 first_id: int) -> None:
    """Insert forms (the strings ``text[text_offsets[i]:text_offsets[i + 1]]``, UTF-8) with ids
    ``first_id`` up and their candidate blobs (``blobs[offsets[i]:offsets[i + 1]]``) into ``forms``:
    in statements of many rows whose values SQLite cuts out itself (the forms from the text of a
    JSON array, :func:`json_strings`, through ``json_each``; the blobs by ``substr`` at offsets
    written as fixed-width decimals, :func:`fixed_decimals`), so Python makes no object per row
    (about a third of the CPU of binding each row's values, :func:`insert_rows`). Forms JSON would
    escape (none are, once normalized) are bound row by row."""
    count = len(text_offsets) - 1
    offsets = np.asarray(offsets, np.int64)
    start = 0
    while start < count:
        end = min(count, start + FORMS_PER_INSERT,
                  max(start + 1, int(np.searchsorted(offsets, offsets[start] + BLOB_BYTES_PER_INSERT, "right")) - 1))
        array_text = json_strings(text_offsets[start:end + 1], text)
        run = blobs[offsets[start]:offsets[end]]
        cuts = offsets[start:end + 1] - offsets[start]
        if array_text is None:
            forms = [bytes(text[a:b]).decode("utf-8") for a, b in zip(text_offsets[start:end].tolist(), text_offsets[start + 1:end + 1].tolist())]
            db.executemany("INSERT INTO forms(id, form, candidates) VALUES (?, ?, ?)",
                           zip(range(first_id + start, first_id + end), forms, map(run.__getitem__, map(slice, cuts.tolist(), cuts[1:].tolist()))))
        else:
            db.execute(_INSERT_FORMS, (array_text.tobytes(), run, fixed_decimals(cuts, _OFFSET_DIGITS).tobytes(), first_id + start))
        start = end


def create(path: Path, cache_kib: int = RUN_CACHE_KIB) -> sqlite3.Connection:
    """A new, empty store (or a worker's file of ``entity_forms`` rows) at ``path``, set up for a bulk load (no journal), with a page
    cache (and memory for each sort) of ``cache_kib`` KiB."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in (*_BUILD_PRAGMAS, f"cache_size = -{cache_kib}"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(SCHEMA)
    return db


@dataclass(frozen=True)
class Shard:
    """A merged partition as :func:`write_shard` hands it to the assembler: the entity numbers its
    pairs use (ascending), the number of tokens of its longest form (0 without forms), its pairs
    per range of 2^:data:`ENTITY_BUCKET_BITS` entity numbers (``bucket_pairs[b]``: numbers
    ``b << ENTITY_BUCKET_BITS`` up; as long as the last range used), and its rows of ``forms`` for
    :func:`append_shard`: the forms in order (string offsets and UTF-8 bytes) and their candidate
    blobs one after the other with the n + 1 offsets that cut them apart."""

    entities: np.ndarray
    longest_form_tokens: int
    bucket_pairs: np.ndarray
    form_offsets: np.ndarray
    form_text: np.ndarray
    blobs: bytes
    blob_offsets: np.ndarray

    @property
    def forms(self) -> int:
        return len(self.form_offsets) - 1


def write_shard(pairs_path: Path, part: MergedPartition, name_ranks: np.ndarray) -> Shard:
    """One merged partition as a shard: its forms in the partition's sorted order with their
    encoded candidates, and its (entity, form) pairs written to ``pairs_path``: ``entity << 32 |
    form`` (the form's index in the shard, from 0), uint64 ascending. ``name_ranks[n]`` is the rank
    of entity number n's id in sorted order (:attr:`MappedEntityNames.ranks`): candidates of equal
    commonness are ordered by id."""
    counts, _, _ = commonness_counts(part)
    order = candidate_order(part.pair_forms, counts, np.asarray(name_ranks)[part.pair_entities])
    blobs, offsets = encode_candidates(part.pair_forms[order], part.pair_entities[order], part.pair_kb[order],
                                       part.pair_facc[order], part.pair_anchors[order])
    keys = (part.pair_entities << 32 | part.pair_forms).astype(np.uint64)  # both below 2^32; forms ascending
    by_entity = sort_by_entity(keys, int(part.pair_entities.min()), int(part.pair_entities.max()) + 1) if len(keys) else keys
    by_entity.tofile(pairs_path)
    entities = by_entity >> np.uint64(32)
    form_offsets, form_text = string_buffers(part.forms)
    longest = int(space_counts(form_offsets, form_text).max(initial=-1)) + 1  # forms are space-joined tokens
    used = entities[np.r_[True, entities[1:] != entities[:-1]]] if len(entities) else entities
    return Shard(used.astype(np.int64), longest, np.bincount((entities >> np.uint64(ENTITY_BUCKET_BITS)).astype(np.int64)),
                 form_offsets, form_text, blobs, offsets)


def append_shard(db: sqlite3.Connection, shard: Shard, offset: int) -> None:
    """Insert a shard's forms into the store with ids ``offset`` up (:func:`insert_forms`; the
    store's form ids start at 0). Shards are appended in form-id order, so every row goes at the
    end of the table."""
    db.execute("BEGIN")
    insert_forms(db, shard.form_offsets, shard.form_text, shard.blobs, shard.blob_offsets, offset)
    db.execute("COMMIT")


def entity_ranges(bucket_pairs: np.ndarray, most_pairs: int) -> list[tuple[int, int]]:
    """Consecutive ranges [first, end) of entity numbers that together cover every bucket of
    ``bucket_pairs`` (pairs per 2^:data:`ENTITY_BUCKET_BITS` numbers), each as many whole buckets
    as hold at most ``most_pairs`` pairs (one bucket if it alone holds more): the runs of
    ``entity_forms`` written by one :func:`write_entity_forms` each, whose memory is then bounded
    by ``most_pairs`` (not by the pairs per entity)."""
    ranges: list[tuple[int, int]] = []
    first, held = 0, 0
    for bucket, pairs in enumerate(np.asarray(bucket_pairs).tolist()):
        if held and held + pairs > most_pairs:
            ranges.append((first << ENTITY_BUCKET_BITS, bucket << ENTITY_BUCKET_BITS))
            first, held = bucket, 0
        held += pairs
    if held:
        ranges.append((first << ENTITY_BUCKET_BITS, len(bucket_pairs) << ENTITY_BUCKET_BITS))
    return ranges


def write_entity_forms(path: Path, shards: Sequence[tuple[Path, int]], first: int, end: int) -> Path:
    """Write, as the table ``entity_forms`` of a new file ``path``, the forms of the entities
    numbered ``first`` to ``end - 1`` from the pair files (:func:`write_shard`) of ``shards``
    (each with the store id of its first form), form ids ascending; the file is returned."""
    low, high = np.uint64(first << 32), np.uint64(end << 32)
    keys = []
    for pairs_path, offset in shards:
        pairs = np.memmap(pairs_path, np.uint64, mode="r") if pairs_path.stat().st_size else np.zeros(0, np.uint64)
        run = np.array(pairs[np.searchsorted(pairs, low):np.searchsorted(pairs, high)])
        keys.append(run + np.uint64(offset))  # the store's form ids: below 2^32, so no carry into the entity
        del pairs
    # each shard's run is in (entity, form) order and its forms are above those of the shards before
    ordered = sort_by_entity(np.concatenate(keys), first, end) if keys else np.zeros(0, np.uint64)
    del keys
    entities = (ordered >> np.uint64(32)).astype(np.int64)
    forms = (ordered & np.uint64(_FORM_MASK)).astype("<u4").tobytes()
    del ordered
    starts = np.flatnonzero(np.r_[True, entities[1:] != entities[:-1]]) if len(entities) else np.zeros(0, np.int64)
    bounds = (4 * np.r_[starts, len(entities)]).tolist()
    db = create(path)
    try:
        db.execute("BEGIN")
        if len(starts):
            insert_rows(db, "entity_forms", [entities[starts].tolist(), list(map(forms.__getitem__, map(slice, bounds, bounds[1:])))])
        db.execute("COMMIT")
    finally:
        db.close()
    return path


def finish(db: sqlite3.Connection, entities: np.ndarray, names: Sequence[str], longest_form_tokens: int,
           meta: dict[str, object], entity_forms: Iterable[Path] = (), index_cache_kib: int | None = None) -> None:
    """Write the ``entities`` used (numbers into ``names``, ascending), index the assembled store,
    copy in the ``entity_forms`` files (:func:`write_entity_forms`, in entity order; each removed
    once copied: an iterable consumed after the indexing, so they may be written meanwhile), and
    record the store's format, the number of tokens of its longest form and ``meta`` (JSON values).
    ``index_cache_kib`` (if given) is SQLite's page cache, and memory for its sort, while it
    indexes: the sort then has no helper threads (``PRAGMA threads``), each of which would hold a
    list of that size of its own (three times the memory at 300M pairs), and sorts in one list."""
    db.execute("BEGIN")
    for start in range(0, len(entities), 1 << 20):
        part = entities[start:start + (1 << 20)]
        insert_rows(db, "entities", [part.tolist(), names_of(names, part)])
    db.execute("COMMIT")
    if index_cache_kib is not None:
        db.execute(f"PRAGMA cache_size = -{index_cache_kib}")
        db.execute("PRAGMA threads = 0")
    db.executescript(INDEXES)
    for path in entity_forms:
        db.execute("ATTACH DATABASE ? AS run", (str(path),))
        try:
            db.execute("BEGIN")
            db.execute("INSERT INTO entity_forms SELECT id, forms FROM run.entity_forms")
            db.execute("COMMIT")
        finally:
            db.execute("DETACH DATABASE run")
        path.unlink()
    meta = {**meta, LONGEST_FORM_KEY: longest_form_tokens}
    rows = [("format", FORMAT)] + [(k, json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, v in meta.items()]
    db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
