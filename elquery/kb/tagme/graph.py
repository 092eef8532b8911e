"""The in-link graph of the TAGME artefact (methods.md §6), memory-mapped: ``inlinks.indptr.npy``
(int64, one entry per node plus one) and ``inlinks.indices.npy`` (int32); the in-links of node n
are ``indices[indptr[n]:indptr[n + 1]]``, the distinct source nodes of the links pointing at n,
ascending. Built by :mod:`elquery.indexing.tagme.graph`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from elquery.kb.tagme.layout import INDICES_FILE, INDPTR_FILE


class InlinkGraph:
    """The in-link lists of an artefact directory, memory-mapped."""

    def __init__(self, directory: Path, entities: int) -> None:
        self.indptr = np.load(directory / INDPTR_FILE, mmap_mode="r")
        self.indices = np.load(directory / INDICES_FILE, mmap_mode="r")
        self.entities = entities

    @property
    def nodes(self) -> int:
        """Number of graph nodes (pages numbered by the build, redirect pages included)."""
        return len(self.indptr) - 1

    def inlinks(self, node: int) -> np.ndarray:
        """Distinct source nodes linking to ``node``, ascending (int32)."""
        return np.asarray(self.indices[self.indptr[node]:self.indptr[node + 1]])
