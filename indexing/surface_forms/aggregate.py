"""Bounded-memory aggregation of (surface form, entity, count) rows (methods.md §3: counts summed
over files, collections and case variants after normalization).

Rows are normalized and summed in chunks held in memory (numpy arrays keyed by chunk-local form
ids, the forms in pyarrow arrays: no Python object per row); a full chunk is spilled to disk, split
into partitions by a hash of the normalized form.
Afterwards each partition, which holds every row of its forms, is merged on its own: rows summed
per (form, entity) and source, ``min_count`` applied, per-form totals computed, forms sorted.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from elquery.indexing.surface_forms.arrow_arrays import int64_array, numpy_of, string_array, string_array_of, string_buffers
from elquery.indexing.surface_forms.kernels import (
    crc32_partitions,
    fold_ascii,
    join_tokens,
    rows_by_partition,
    splice_strings,
    sum_pairs,
)
from elquery.kb.normalize import fold, normalize

SOURCE_KB, SOURCE_FACC, SOURCE_ANCHORS = 0, 1, 2
_ENTITY_BITS = 32
_ENTITY_MASK = (1 << _ENTITY_BITS) - 1


def partition_of(form: str, partitions: int) -> int:
    """The partition of a normalized form (a stable hash: the same in every process and run)."""
    return zlib.crc32(form.encode("utf-8")) % partitions


def partitions_of(forms: pa.Array, partitions: int) -> np.ndarray:
    """:func:`partition_of` of each of ``forms`` (normalized; a pyarrow string array): the CRC
    of each form's UTF-8 bytes, read from the array's buffers (:func:`crc32_partitions`)."""
    if partitions == 1:
        return np.zeros(len(forms), np.int64)
    return crc32_partitions(*string_buffers(forms), partitions)


def normalize_array(texts: pa.Array) -> pa.Array:
    """``normalize`` of each string (no nulls): ASCII strings by byte (for them ``normalize`` is
    lowercase, runs of characters other than a-z and 0-9 become a space, spaces stripped:
    :func:`fold_ascii`), others all at once (:func:`normalize_joined`), put back in their places
    (:func:`splice_strings`)."""
    if not len(texts):
        return texts
    ends, data, other = fold_ascii(*string_buffers(texts))
    if not other.any():
        return pa.StringArray.from_buffers(len(texts), pa.py_buffer(ends), pa.py_buffer(data))
    mask = pa.Array.from_buffers(pa.bool_(), len(other), [None, pa.py_buffer(np.packbits(other, bitorder="little"))])
    return string_array_of(*splice_strings(ends, data, other, *string_buffers(normalize_joined(texts.filter(mask)))))


_ASCII_ALNUM = np.array([chr(point).isalnum() for point in range(128)])


def _normalized_one_at_a_time(texts: pa.Array) -> pa.Array:
    return string_array(list(map(normalize, texts.to_pylist())))


def normalize_joined(texts: pa.Array) -> pa.Array:
    """``normalize`` of each string, all at once: their UTF-8 bytes joined by newlines (with
    numpy), decoded and folded (NFKC, casefolding: they keep each newline and make none) once,
    and the tokens of each string (runs of letters and digits: Python's ``str.isalnum``, asked
    once per distinct code point, which is what ``normalize``'s ``[\\W_]`` leaves) joined by one
    space (:func:`join_tokens`). One at a time when a string holds a newline itself."""
    count = len(texts)
    offsets = np.frombuffer(texts.buffers()[1], np.int32, count + 1, texts.offset * 4).astype(np.int64) if count else None
    if offsets is None or offsets[-1] == offsets[0]:
        return _normalized_one_at_a_time(texts)
    data = np.frombuffer(texts.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]
    if (data == ord("\n")).any():
        return _normalized_one_at_a_time(texts)
    joined = np.full(len(data) + count - 1, ord("\n"), np.uint8)
    joined[np.arange(len(data)) + np.repeat(np.arange(count), np.diff(offsets))] = data
    points = np.frombuffer(fold(joined.tobytes().decode("utf-8")).encode("utf-32-le"), np.uint32)
    others = np.unique(points[points >= 128])
    others_alnum = np.array([chr(point).isalnum() for point in others.tolist()], bool)
    tokens = join_tokens(points, _ASCII_ALNUM, others, others_alnum, count)
    if tokens is None:
        return _normalized_one_at_a_time(texts)
    return string_array_of(*tokens)


class SpillWriter:
    """Appends chunk pieces to one file per partition, ``<tag>-<partition>.spill`` in ``directory``."""

    def __init__(self, directory: Path, tag: str, partitions: int) -> None:
        self.directory = directory
        self.tag = tag
        self.partitions = partitions
        self._files: dict[int, BinaryIO] = {}

    def write(self, partition: int, piece: tuple) -> None:
        handle = self._files.get(partition)
        if handle is None:
            handle = self._files[partition] = open(self.directory / f"{self.tag}-{partition:05d}.spill", "ab")
        pickle.dump(piece, handle, protocol=pickle.HIGHEST_PROTOCOL)

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()


class PairChunk:
    """Sums the (surface form, entity, count) rows of one source; spills when it holds
    ``max_rows`` rows or distinct forms. Forms stay in pyarrow arrays: each batch's raw forms
    are normalized (:func:`normalize_array`) and dictionary-encoded, and a flush encodes the
    chunk's normalized forms once more, so no Python string is made per row.

    With ``summed`` false a flush spills the rows as they are, each row's form with it (the
    merge sums them all the same): for rows that are nearly all distinct pairs already (FACC
    count files: one row per raw form and id), where summing them here is the merge's work
    done twice (a hash of every form and a sort of every key)."""

    def __init__(self, source: int, spill: SpillWriter, max_rows: int, summed: bool = True) -> None:
        self.source = source
        self.spill = spill
        self.max_rows = max_rows
        self.summed = summed
        self.empty_form_rows = 0
        self._reset()

    def _reset(self) -> None:
        self._forms: list[pa.Array] = []  # each batch's normalized forms of the rows kept
        self._entities: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._rows = 0

    def add(self, raw_forms: list[str], entities: np.ndarray, counts: np.ndarray) -> None:
        """Add rows; rows with entity -1 or a form that normalizes to nothing are dropped."""
        self.add_array(string_array(raw_forms), entities, counts)

    def add_array(self, texts: pa.Array, entities: np.ndarray, counts: np.ndarray) -> None:
        """``add`` with the raw forms in a pyarrow string array. Every row's form is normalized
        (:func:`normalize_array`); the flush dictionary-encodes the chunk's normalized forms once
        (in FACC count files most raw forms of a batch are distinct, so encoding them first, to
        normalize each once, costs more than it saves)."""
        forms = normalize_array(texts)
        keep = entities >= 0
        empty = numpy_of(pc.binary_length(forms)) == 0 if len(forms) else keep
        self.empty_form_rows += int(np.count_nonzero(empty & keep))
        keep &= ~empty
        if not keep.all():
            forms = forms.take(int64_array(np.flatnonzero(keep)))
        self._forms.append(forms)
        self._entities.append(entities[keep])
        self._counts.append(counts[keep])
        self._rows += len(texts)
        if self._rows >= self.max_rows:
            self.flush()

    def flush(self) -> None:
        """Sum the chunk's rows per (form, entity) and spill them by partition."""
        if self._forms and not self.summed:
            self._spill_rows()
        elif self._forms:
            encoded = pc.dictionary_encode(self._forms[0] if len(self._forms) == 1 else pa.concat_arrays(self._forms))
            forms = encoded.dictionary
            keys = numpy_of(encoded.indices).astype(np.int64) << _ENTITY_BITS | np.concatenate(self._entities)
            keys, counts = _sum_by_key(keys, np.concatenate(self._counts))
            partitions = partitions_of(forms, self.spill.partitions)
            # keys stay sorted within a partition
            for partition, rows in _rows_by_partition(partitions[keys >> _ENTITY_BITS], self.spill.partitions):
                local = keys[rows] >> _ENTITY_BITS
                starts = _group_starts(local)
                dense = np.cumsum(np.r_[False, local[1:] != local[:-1]])
                piece_keys = (dense << _ENTITY_BITS) | (keys[rows] & _ENTITY_MASK)
                self.spill.write(partition, (self.source, forms.take(int64_array(local[starts])), piece_keys, counts[rows]))
        self._reset()

    def _spill_rows(self) -> None:
        """Spill the chunk's rows unsummed by partition (in row order within one, moved there
        at once by :func:`rows_by_partition`), a row's key its index in the piece's forms."""
        forms = self._forms[0] if len(self._forms) == 1 else pa.concat_arrays(self._forms)
        partitions = self.spill.partitions
        starts, offsets, data, entities, counts = rows_by_partition(
            *string_buffers(forms), partitions_of(forms, partitions), partitions,
            np.concatenate(self._entities), np.concatenate(self._counts))
        for partition, (first, last) in enumerate(zip(starts.tolist(), starts[1:].tolist())):
            if first < last:
                piece_offsets = (offsets[first:last + 1] - offsets[first]).astype(np.int32)
                piece = pa.StringArray.from_buffers(last - first, pa.py_buffer(piece_offsets),
                                                    pa.py_buffer(data[offsets[first]:offsets[last]]))
                keys = np.arange(last - first, dtype=np.int64) << _ENTITY_BITS | entities[first:last]
                self.spill.write(partition, (self.source, piece, keys, counts[first:last]))


def _rows_by_partition(row_partitions: np.ndarray, partitions: int) -> Iterator[tuple[int, np.ndarray]]:
    """Each partition that has rows, with its rows' indices (in row order: a stable sort)."""
    if partitions <= 1 << 16:
        row_partitions = row_partitions.astype(np.uint16)  # a stable argsort of 16 bits is a radix sort
    order = np.argsort(row_partitions, kind="stable")
    bounds = np.searchsorted(row_partitions[order], np.arange(partitions + 1)).tolist()
    for partition, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        if start < stop:
            yield partition, order[start:stop]


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


@dataclass(frozen=True)
class MergedPartition:
    """The final rows of one partition: forms (sorted, a pyarrow string array) with their totals,
    and pairs keyed by the index of their form in ``forms``."""

    forms: pa.Array
    facc_totals: np.ndarray
    anchor_totals: np.ndarray
    pair_forms: np.ndarray
    pair_entities: np.ndarray
    pair_facc: np.ndarray
    pair_anchors: np.ndarray
    pair_kb: np.ndarray


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
    totals per form are taken over the pairs kept. The pieces' forms are dictionary-encoded and
    sorted by pyarrow (UTF-8 byte order, which is code point order: Python's order of strings),
    the rows summed by :func:`sum_pairs`."""
    pieces = list(_pieces(paths))
    if not pieces:
        empty = np.zeros(0, np.int64)
        return MergedPartition(pa.array([], pa.string()), empty, empty, empty, empty, empty, empty, empty)
    encoded = pc.dictionary_encode(pa.concat_arrays([forms for _, forms, _, _ in pieces]))
    names, ids = encoded.dictionary, numpy_of(encoded.indices).astype(np.int64)
    order = numpy_of(pc.sort_indices(names)).astype(np.int64)
    rank = np.empty(len(names), np.int64)
    rank[order] = np.arange(len(names))
    ids = rank[ids]
    form_ranks, entities, sources, counts = [], [], [], []
    offset = 0
    for source, forms, piece_keys, piece_counts in pieces:
        form_ranks.append(ids[offset + (piece_keys >> _ENTITY_BITS)])
        entities.append(piece_keys & _ENTITY_MASK)
        sources.append(np.full(len(piece_keys), source, np.int8))
        counts.append(piece_counts)
        offset += len(forms)
    del pieces
    row_forms, row_entities, row_sources, row_counts = (np.concatenate(rows) for rows in (form_ranks, entities, sources, counts))
    pair_forms, pair_entities, facc_sum, anchor_sum, kb_sum = sum_pairs(
        row_forms, row_entities, row_sources, row_counts, len(names), SOURCE_FACC, SOURCE_ANCHORS)
    del row_forms, row_entities, row_sources, row_counts
    facc_sum[facc_sum < min_count] = 0
    anchor_sum[anchor_sum < min_count] = 0
    keep = (facc_sum > 0) | (anchor_sum > 0) | (kb_sum > 0)
    form_ranks, pair_entities, facc_sum, anchor_sum, kb_sum = (
        pair_forms[keep], pair_entities[keep], facc_sum[keep], anchor_sum[keep], kb_sum[keep])
    starts = _group_starts(form_ranks)
    used = form_ranks[starts]
    return MergedPartition(
        forms=names.take(int64_array(order[used])),
        facc_totals=np.add.reduceat(facc_sum, starts) if len(starts) else facc_sum,
        anchor_totals=np.add.reduceat(anchor_sum, starts) if len(starts) else anchor_sum,
        pair_forms=np.cumsum(np.r_[False, form_ranks[1:] != form_ranks[:-1]]).astype(np.int64),
        pair_entities=pair_entities,
        pair_facc=facc_sum,
        pair_anchors=anchor_sum,
        pair_kb=(kb_sum > 0).astype(np.int64),
    )
