"""Writing the surface-form store (the format of :mod:`elquery.kb.surface_forms.store`, which
reads it; methods.md §3): one shard per partition of the forms, each a store without indexes,
assembled into the store, then indexed and given its format and metadata.

Every table is filled in the order of its key (forms and pairs by form id, partition after
partition; entities by id), so each insert appends to its B-tree and the store is written at the
disk's speed with a bounded page cache, whatever its size; the indexes (forms by text, entities by
name, pairs by entity) are made at the end by SQLite's external sort.

Commonness (Eq. 9) is computed here, once, for every pair (:func:`commonness_counts`), and each
form's candidates are encoded in candidate order, so a lookup reads one row.
"""

from __future__ import annotations

import json
import marshal
import sqlite3
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from elquery.indexing.surface_forms.aggregate import MergedPartition
from elquery.indexing.surface_forms.entity_names import MappedEntityNames
from elquery.kb.surface_forms.layout import FORMAT
from elquery.kb.surface_forms.store import LONGEST_FORM_KEY, longest_form_tokens

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entities(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE forms(
    id INTEGER PRIMARY KEY, form TEXT NOT NULL,
    facc_total INTEGER NOT NULL, anchor_total INTEGER NOT NULL, candidates BLOB NOT NULL
);
CREATE TABLE pairs(
    form_id INTEGER NOT NULL, entity_id INTEGER NOT NULL,
    facc INTEGER NOT NULL, anchors INTEGER NOT NULL, kb INTEGER NOT NULL,
    PRIMARY KEY(form_id, entity_id)
) WITHOUT ROWID;
"""
# Created after the bulk load (faster than maintaining them row by row).
INDEXES = """
CREATE UNIQUE INDEX entities_by_name ON entities(name);
CREATE UNIQUE INDEX forms_by_form ON forms(form);
CREATE INDEX pairs_by_entity ON pairs(entity_id);
"""
_BUILD_PRAGMAS = ("journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE", "threads = 2")
SHARD_CACHE_KIB = 8192


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


def create(path: Path, cache_kib: int = SHARD_CACHE_KIB) -> sqlite3.Connection:
    """A new, empty store (or shard) at ``path``, set up for a bulk load (no journal), with a page
    cache (and memory for each sort) of ``cache_kib`` KiB."""
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in (*_BUILD_PRAGMAS, f"cache_size = -{cache_kib}"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(SCHEMA)
    return db


def write_shard(path: Path, part: MergedPartition, names: Sequence[str]) -> np.ndarray:
    """Write one merged partition as a shard (forms with ids 0..n-1 in the partition's sorted
    order and their encoded candidates, and pairs); returns the entity numbers the pairs use."""
    counts, totals, sources = commonness_counts(part)
    used, entity_index = np.unique(part.pair_entities, return_inverse=True)
    used_names = names_of(names, used)
    name_rank = np.empty(len(used_names), np.int64)
    name_rank[sorted(range(len(used_names)), key=used_names.__getitem__)] = np.arange(len(used_names))
    order = np.lexsort((name_rank[entity_index], -counts, part.pair_forms))
    ordered_names = [used_names[i] for i in entity_index[order].tolist()]
    flat = list(chain.from_iterable(zip(ordered_names, counts[order].tolist(), sources[order].tolist())))
    bounds = np.searchsorted(part.pair_forms, np.arange(len(part.forms) + 1)).tolist()
    form_totals = np.zeros(len(part.forms), np.int64)
    form_totals[part.pair_forms] = totals
    forms = zip(
        range(len(part.forms)),
        part.forms,
        part.facc_totals.tolist(),
        part.anchor_totals.tolist(),
        (marshal.dumps((total, *flat[3 * a : 3 * b]), 4) for total, a, b in zip(form_totals.tolist(), bounds, bounds[1:])),
    )
    pairs = zip(*(a.tolist() for a in (part.pair_forms, part.pair_entities, part.pair_facc, part.pair_anchors, part.pair_kb)))
    db = create(path)
    try:
        db.execute("BEGIN")
        db.executemany("INSERT INTO forms VALUES (?, ?, ?, ?, ?)", forms)
        db.executemany("INSERT INTO pairs VALUES (?, ?, ?, ?, ?)", pairs)
        db.execute("COMMIT")
    finally:
        db.close()
    return used


def append_shard(db: sqlite3.Connection, shard: Path, offset: int) -> None:
    """Copy a shard into the store, its form ids shifted by ``offset``."""
    db.execute("ATTACH DATABASE ? AS shard", (str(shard),))
    try:
        db.execute("BEGIN")
        db.execute("INSERT INTO forms SELECT id + ?, form, facc_total, anchor_total, candidates FROM shard.forms", (offset,))
        db.execute("INSERT INTO pairs SELECT form_id + ?, entity_id, facc, anchors, kb FROM shard.pairs", (offset,))
        db.execute("COMMIT")
    finally:
        db.execute("DETACH DATABASE shard")


def finish(db: sqlite3.Connection, entities: np.ndarray, names: Sequence[str], meta: dict[str, object]) -> None:
    """Write the ``entities`` used (numbers into ``names``, ascending), index the assembled store,
    and record its format and ``meta`` (JSON values)."""
    db.execute("BEGIN")
    for start in range(0, len(entities), 1 << 20):
        part = entities[start:start + (1 << 20)]
        db.executemany("INSERT INTO entities VALUES (?, ?)", zip(part.tolist(), names_of(names, part)))
    db.execute("COMMIT")
    db.executescript(INDEXES)
    meta = {**meta, LONGEST_FORM_KEY: longest_form_tokens(db)}
    rows = [("format", FORMAT)] + [(k, json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, v in meta.items()]
    db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
