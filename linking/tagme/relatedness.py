"""Milne-Witten relatedness from in-links (methods.md §6).

rel(a, b) = 1 - (log max(|in a|, |in b|) - log |in a ∩ in b|) / (log |E| - log min(|in a|, |in b|)),
clamped to [0, 1]; 0 if either entity has no in-links or they share none; rel(a, a) = 1. |E| is
the number of pages of the in-link graph (see :class:`elquery.kb.tagme.artefact.TagmeArtefact`).
If the smaller in-link set is the whole graph (the denominator is 0), rel is 1 when the two sets
are equal and 0 otherwise (the limit of the clamped formula).

Intersections are computed for a whole block of entity pairs at once, as a sparse product of
in-link incidence matrices whose columns are the in-link sources of the block only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from scipy.sparse import csr_matrix

from elquery.kb.tagme.graph import InlinkGraph


def milne_witten(size_a: np.ndarray, size_b: np.ndarray, common: np.ndarray, entities: int) -> np.ndarray:
    """Elementwise Milne-Witten relatedness of entity pairs given |in a|, |in b|, |in a ∩ in b|
    and |E| (the identity rule rel(a, a) = 1 is the caller's)."""
    size_a, size_b, common = (np.asarray(x, dtype=np.float64) for x in (size_a, size_b, common))
    larger, smaller = np.maximum(size_a, size_b), np.minimum(size_a, size_b)
    defined = common > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        numerator = np.log(larger) - np.log(common)
        denominator = np.log(entities) - np.log(smaller)
        ratio = np.where(denominator > 0, numerator / denominator, np.inf)
    ratio = np.where(numerator == 0, 0.0, ratio)
    return np.where(defined, np.clip(1.0 - ratio, 0.0, 1.0), 0.0)


def _concatenated(lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    flat = np.concatenate(lists) if lists else np.zeros(0, dtype=np.int32)
    return flat, sizes


def _offsets(sizes: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(sizes)))


class Relatedness:
    """Milne-Witten relatedness over an in-link graph. A call numbers in-link sources in an int32
    scratch array of one entry per graph node (reset after the call), so a block costs time in its
    in-links only. Safe to share between threads: each call in flight takes a scratch array of
    its own from a pool (one per call running at the same time, made on first need)."""

    def __init__(self, graph: InlinkGraph) -> None:
        self.graph = graph
        self._free: list[np.ndarray] = []
        self._lock = threading.Lock()

    @contextmanager
    def _scratch(self) -> Iterator[np.ndarray]:
        with self._lock:
            local = self._free.pop() if self._free else None
        if local is None:
            local = np.full(self.graph.nodes, -1, dtype=np.int32)
        try:
            yield local
        finally:
            with self._lock:
                self._free.append(local)

    def matrix(self, rows: Sequence[int], columns: Sequence[int]) -> np.ndarray:
        """rel(rows[i], columns[j]) for every pair, as a dense float64 matrix."""
        row_flat, row_sizes = _concatenated([self.graph.inlinks(n) for n in rows])
        col_flat, col_sizes = _concatenated([self.graph.inlinks(n) for n in columns])
        # number the distinct in-link sources of the rows 0..S-1 in the scratch array (no sort)
        with self._scratch() as local:
            local[row_flat] = np.arange(len(row_flat), dtype=np.int32)
            first = local[row_flat] == np.arange(len(row_flat))
            sources = int(first.sum())
            local[row_flat[first]] = np.arange(sources, dtype=np.int32)
            row_local, col_local = local[row_flat], local[col_flat]
            local[row_flat] = -1
        shared = np.flatnonzero(col_local >= 0)
        by_row = csr_matrix((np.ones(len(row_flat), np.int32), row_local, _offsets(row_sizes)),
                            shape=(len(rows), sources))
        by_column = csr_matrix((np.ones(len(shared), np.int32), col_local[shared],
                                np.searchsorted(shared, _offsets(col_sizes))), shape=(len(columns), sources))
        common = (by_column @ by_row.T).T.toarray()
        rel = milne_witten(row_sizes[:, None], col_sizes[None, :], common, self.graph.entities)
        rel[np.asarray(rows)[:, None] == np.asarray(columns)[None, :]] = 1.0
        return rel

    def pair(self, a: int, b: int) -> float:
        """rel(a, b) of two graph nodes."""
        return float(self.matrix([a], [b])[0, 0])
