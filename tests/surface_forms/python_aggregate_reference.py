"""The surface-form aggregation as elquery wrote it before its forms moved into pyarrow arrays
(indexing/surface_forms/aggregate.py at 644abbc): a dictionary of Python strings per chunk and per
partition, each raw form normalized by ``normalize``. The reference the build's stores must match
row for row (test_sf_same_store.py); read with ``facc.read_facc_blocks`` (the block reader)."""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from elquery.indexing.surface_forms.aggregate import MergedPartition, SpillWriter
from elquery.kb.normalize import normalize

_ENTITY_BITS = 32
_ENTITY_MASK = (1 << _ENTITY_BITS) - 1
SOURCE_KB, SOURCE_FACC, SOURCE_ANCHORS = 0, 1, 2


class PairChunk:
    """Sums the (surface form, entity, count) rows of one source, normalizing each distinct raw
    form once per chunk; spills when it holds ``max_rows`` rows or distinct raw forms (always
    summed: ``summed`` is taken for the build's signature)."""

    def __init__(self, source: int, spill: SpillWriter, max_rows: int, summed: bool = True) -> None:
        self.source = source
        self.spill = spill
        self.max_rows = max_rows
        self.empty_form_rows = 0
        self._reset()

    def _reset(self) -> None:
        self._raw: dict[str, int] = {}  # raw text -> chunk-local id of its normalized form (-1: empty)
        self._ids: dict[str, int] = {}  # normalized form -> chunk-local id
        self._keys: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._rows = 0

    def add(self, raw_forms: list[str], entities: np.ndarray, counts: np.ndarray) -> None:
        """Add rows; rows with entity -1 or a form that normalizes to nothing are dropped."""
        self._add(self._form_ids(raw_forms), entities, counts)

    def _form_ids(self, raw_forms: list[str]) -> np.ndarray:
        """The chunk-local ids of the normalized forms of ``raw_forms`` (-1: empty)."""
        raw = self._raw
        for text in set(raw_forms).difference(raw):
            form = normalize(text)
            raw[text] = self._ids.setdefault(form, len(self._ids)) if form else -1
        return np.fromiter(map(raw.__getitem__, raw_forms), np.int64, len(raw_forms))

    def _add(self, forms: np.ndarray, entities: np.ndarray, counts: np.ndarray) -> None:
        keep = entities >= 0
        empty = forms < 0
        self.empty_form_rows += int(np.count_nonzero(empty & keep))
        keep &= ~empty
        self._keys.append((forms[keep] << _ENTITY_BITS) | entities[keep])
        self._counts.append(counts[keep])
        self._rows += len(forms)
        if self._rows >= self.max_rows or max(len(self._raw), len(self._ids)) >= self.max_rows:
            self.flush()

    def flush(self) -> None:
        """Sum the chunk's rows per (form, entity) and spill them by partition."""
        if self._keys:
            keys, counts = _sum_by_key(np.concatenate(self._keys), np.concatenate(self._counts))
            forms = list(self._ids)
            # partition_of for each form, the loop in C
            partitions = np.fromiter(map(zlib.crc32, map(str.encode, forms)), np.int64, len(forms)) % self.spill.partitions
            row_partitions = partitions[keys >> _ENTITY_BITS]
            order = np.argsort(row_partitions, kind="stable")
            bounds = np.searchsorted(row_partitions[order], np.arange(self.spill.partitions + 1))
            for partition in range(self.spill.partitions):
                rows = order[bounds[partition] : bounds[partition + 1]]
                if len(rows):
                    local = keys[rows] >> _ENTITY_BITS
                    used, dense = np.unique(local, return_inverse=True)
                    piece_forms = [forms[i] for i in used.tolist()]
                    piece_keys = (dense.astype(np.int64) << _ENTITY_BITS) | (keys[rows] & _ENTITY_MASK)
                    self.spill.write(partition, (self.source, piece_forms, piece_keys, counts[rows]))
        self._reset()


def _group_starts(values: np.ndarray) -> np.ndarray:
    """Indices where a run of equal values starts in sorted ``values``."""
    return np.flatnonzero(np.r_[True, values[1:] != values[:-1]]) if len(values) else np.zeros(0, np.int64)


def _sum_by_key(keys: np.ndarray, *values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sort by key and sum ``values`` over equal keys."""
    order = np.argsort(keys)
    keys = keys[order]
    starts = _group_starts(keys)
    sums = tuple(np.add.reduceat(v[order], starts) if len(keys) else v[:0] for v in values)
    return (keys[starts], *sums)


def _pieces(paths: list[Path]) -> Iterator[tuple]:
    for path in paths:
        with open(path, "rb") as handle:
            while True:
                try:
                    yield pickle.load(handle)
                except EOFError:
                    break


def merge_partition(paths: list[Path], min_count: int) -> MergedPartition:
    """Merge the spilled pieces of one partition (methods.md §3): counts summed per (form, entity)
    and source; a source count below ``min_count`` is dropped, then pairs left with no source;
    totals per form are taken over the pairs kept."""
    index: dict[str, int] = {}
    keys, facc, anchors, kb = [], [], [], []
    for source, forms, piece_keys, counts in _pieces(paths):
        ids = np.fromiter((index.setdefault(f, len(index)) for f in forms), np.int64, len(forms))
        keys.append((ids[piece_keys >> _ENTITY_BITS] << _ENTITY_BITS) | (piece_keys & _ENTITY_MASK))
        zeros = np.zeros(len(counts), np.int64)
        facc.append(counts if source == SOURCE_FACC else zeros)
        anchors.append(counts if source == SOURCE_ANCHORS else zeros)
        kb.append(counts if source == SOURCE_KB else zeros)
    if not keys:
        empty = np.zeros(0, np.int64)
        return MergedPartition(pa.array([], pa.string()), empty, empty, empty, empty, empty, empty, empty)
    names = list(index)
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), np.int64)
    rank[order] = np.arange(len(names))
    all_keys = np.concatenate(keys)
    all_keys = (rank[all_keys >> _ENTITY_BITS] << _ENTITY_BITS) | (all_keys & _ENTITY_MASK)
    all_keys, facc_sum, anchor_sum, kb_sum = _sum_by_key(
        all_keys, np.concatenate(facc), np.concatenate(anchors), np.concatenate(kb)
    )
    facc_sum[facc_sum < min_count] = 0
    anchor_sum[anchor_sum < min_count] = 0
    keep = (facc_sum > 0) | (anchor_sum > 0) | (kb_sum > 0)
    all_keys, facc_sum, anchor_sum, kb_sum = all_keys[keep], facc_sum[keep], anchor_sum[keep], kb_sum[keep]
    form_ranks = all_keys >> _ENTITY_BITS
    used, pair_forms = np.unique(form_ranks, return_inverse=True)
    starts = _group_starts(form_ranks)
    return MergedPartition(
        forms=pa.array([names[order[r]] for r in used.tolist()], pa.string()),
        facc_totals=np.add.reduceat(facc_sum, starts) if len(starts) else facc_sum,
        anchor_totals=np.add.reduceat(anchor_sum, starts) if len(starts) else anchor_sum,
        pair_forms=pair_forms.astype(np.int64),
        pair_entities=all_keys & _ENTITY_MASK,
        pair_facc=facc_sum,
        pair_anchors=anchor_sum,
        pair_kb=(kb_sum > 0).astype(np.int64),
    )
