"""The in-link graph of page_links in CSR form, built in bounded memory (methods.md §6).

``inlinks.indptr.npy`` (int64, one entry per node plus one) and ``inlinks.indices.npy`` (int32):
the in-links of node n are ``indices[indptr[n]:indptr[n + 1]]``, the distinct source nodes of
the links pointing at n, ascending. Links are taken after redirect resolution; self-links are
dropped (a page linking to itself, often through a redirect, is not an in-link).

Build: every link is spilled as an int32 (target, source) pair to one file per bucket of
2^18 consecutive target nodes; each bucket is then sorted and de-duplicated on its own (memory:
one bucket, not the whole graph), and its sources appended to the indices.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from indexing.tagme.layout import INDICES_FILE, INDPTR_FILE

BUCKET_BITS = 18
_FLUSH_INTS = 1 << 22
_COPY_CHUNK = 1 << 24


class EdgeSpill:
    """Collects links (source, target) into per-bucket files of int32 (target, source) pairs."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._buffers: dict[int, array] = {}
        self._buffered = 0
        self.buckets: set[int] = set()

    def path(self, bucket: int) -> Path:
        return self.directory / f"edges-{bucket:05d}.i32"

    def add(self, source: int, target: int) -> None:
        if source == target:
            return
        bucket = target >> BUCKET_BITS
        buffer = self._buffers.get(bucket)
        if buffer is None:
            buffer = self._buffers[bucket] = array("i")
        buffer.append(target)
        buffer.append(source)
        self._buffered += 2
        if self._buffered >= _FLUSH_INTS:
            self.flush()

    def flush(self) -> None:
        for bucket, buffer in self._buffers.items():
            with open(self.path(bucket), "ab") as handle:
                buffer.tofile(handle)
            self.buckets.add(bucket)
        self._buffers.clear()
        self._buffered = 0


@dataclass(frozen=True)
class GraphCounts:
    """|E| (nodes with at least one in- or out-link), nodes numbered, distinct links."""

    entities: int
    nodes: int
    edges: int


def build_csr(spill: EdgeSpill, nodes: int, out_dir: Path) -> GraphCounts:
    """Write the CSR arrays of the spilled links of ``nodes`` nodes into ``out_dir``."""
    spill.flush()
    degree = np.zeros(nodes, dtype=np.int64)
    linked = np.zeros(nodes, dtype=bool)
    raw = spill.directory / "indices.i32"
    with open(raw, "wb") as handle:
        for bucket in tqdm(sorted(spill.buckets), desc="in-link graph", unit=" buckets", disable=None):
            pairs = np.fromfile(spill.path(bucket), dtype=np.int32).reshape(-1, 2)
            keys = np.unique((pairs[:, 0].astype(np.int64) << 32) | pairs[:, 1].astype(np.int64))
            del pairs
            targets = keys >> 32
            sources = (keys & 0xFFFFFFFF).astype(np.int32)
            base = bucket << BUCKET_BITS
            counts = np.bincount(targets - base)
            degree[base:base + len(counts)] = counts
            linked[targets] = True
            linked[sources] = True
            sources.tofile(handle)
    indptr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(degree, out=indptr[1:])
    np.save(out_dir / INDPTR_FILE, indptr)
    edges = int(indptr[-1])
    source = np.memmap(raw, dtype=np.int32, mode="r", shape=(edges,)) if edges else np.zeros(0, np.int32)
    indices = np.lib.format.open_memmap(out_dir / INDICES_FILE, mode="w+", dtype=np.int32, shape=(edges,))
    for start in range(0, edges, _COPY_CHUNK):
        indices[start:start + _COPY_CHUNK] = source[start:start + _COPY_CHUNK]
    indices.flush()
    del indices, source
    raw.unlink()
    return GraphCounts(int(linked.sum()), nodes, edges)


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
