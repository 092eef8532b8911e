"""Building the in-link graph of page_links in CSR form in bounded memory (methods.md §6; read by
:mod:`elquery.kb.tagme.graph`).

``inlinks.indptr.npy`` (int64, one entry per node plus one) and ``inlinks.indices.npy`` (int32):
the in-links of node n are ``indices[indptr[n]:indptr[n + 1]]``, the distinct source nodes of
the links pointing at n, ascending. Links are taken after redirect resolution; self-links are
dropped (a page linking to itself, often through a redirect, is not an in-link).

Build: every link is appended to a spill file as an int32 (target, source) pair while the
number of links per target is counted. The targets are then cut into consecutive ranges of at
most :data:`RANGE_LINKS` links, the spill is split into one file per range (read in chunks), and
each range is sorted and de-duplicated on its own: memory holds one chunk or one range, whatever
the number of links (one range of 2^21 links: under 100 MB while sorting).
"""

from __future__ import annotations

import shutil
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from elquery.kb.tagme.graph import InlinkGraph  # noqa: F401  (kept here for compatibility, one release: moved to elquery.kb.tagme.graph)
from elquery.kb.tagme.layout import INDICES_FILE, INDPTR_FILE

RANGE_LINKS = 1 << 21
_FLUSH_INTS = 1 << 22
_CHUNK_PAIRS = 1 << 21
_COPY_BYTES = 1 << 24


class EdgeSpill:
    """Appends links (source, target) to ``directory/edges.i32`` as int32 (target, source)
    pairs, counting the links of each target in :attr:`links_to`."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.path = directory / "edges.i32"
        self._handle = open(self.path, "wb")
        self._buffer = array("i")
        self.links_to = np.zeros(0, dtype=np.int64)

    def add(self, source: int, target: int) -> None:
        if source == target:
            return
        self._buffer.append(target)
        self._buffer.append(source)
        if len(self._buffer) >= _FLUSH_INTS:
            self.flush()

    def flush(self) -> None:
        counts = np.bincount(np.frombuffer(self._buffer, dtype=np.int32)[0::2])
        if len(counts) > len(self.links_to):
            self.links_to = np.concatenate((self.links_to, np.zeros(len(counts) - len(self.links_to), np.int64)))
        self.links_to[:len(counts)] += counts
        self._buffer.tofile(self._handle)
        self._buffer = array("i")

    def close(self) -> None:
        self.flush()
        self._handle.close()


def target_ranges(links_to: np.ndarray, limit: int) -> np.ndarray:
    """Boundaries b_0 = 0 < b_1 < ... < b_k = len(links_to) of consecutive target ranges with at
    most ``limit`` links each (a target with more links than that gets a range of its own)."""
    before = np.concatenate(([0], np.cumsum(links_to)))
    boundaries = [0]
    while boundaries[-1] < len(links_to):
        start = boundaries[-1]
        end = int(np.searchsorted(before, before[start] + limit, side="right")) - 1
        boundaries.append(min(max(end, start + 1), len(links_to)))
    return np.array(boundaries, dtype=np.int64)


def _split(spill: EdgeSpill, boundaries: np.ndarray) -> list[Path]:
    """The spill cut into one pair file per target range, in range order."""
    paths = [spill.directory / f"range-{r:05d}.i32" for r in range(len(boundaries) - 1)]
    handles = [open(path, "wb") for path in paths]
    try:
        total = spill.path.stat().st_size // 8
        for start in range(0, total, _CHUNK_PAIRS):
            pairs = np.fromfile(spill.path, dtype=np.int32, count=2 * _CHUNK_PAIRS, offset=8 * start).reshape(-1, 2)
            ranges = np.searchsorted(boundaries, pairs[:, 0], side="right") - 1
            order = np.argsort(ranges, kind="stable")
            pairs, ranges = pairs[order], ranges[order]
            cuts = np.searchsorted(ranges, np.arange(len(paths) + 1))
            for r in np.flatnonzero(np.diff(cuts)):
                pairs[cuts[r]:cuts[r + 1]].tofile(handles[r])
    finally:
        for handle in handles:
            handle.close()
    spill.path.unlink()
    return paths


@dataclass(frozen=True)
class GraphCounts:
    """|E| (nodes with at least one in- or out-link), nodes numbered, distinct links."""

    entities: int
    nodes: int
    edges: int


def build_csr(spill: EdgeSpill, nodes: int, out_dir: Path) -> GraphCounts:
    """Write the CSR arrays of the spilled links of ``nodes`` nodes into ``out_dir``."""
    spill.close()
    links_to = np.zeros(nodes, dtype=np.int64)
    links_to[:len(spill.links_to)] = spill.links_to
    boundaries = target_ranges(links_to, RANGE_LINKS)
    degree = np.zeros(nodes, dtype=np.int64)
    linked = np.zeros(nodes, dtype=bool)
    raw = spill.directory / "indices.i32"
    with open(raw, "wb") as handle:
        ranges = _split(spill, boundaries)
        for number, path in enumerate(tqdm(ranges, desc="in-link graph", unit=" ranges", disable=None)):
            pairs = np.fromfile(path, dtype=np.int32).reshape(-1, 2)
            path.unlink()
            keys = pairs[:, 0].astype(np.int64) << 32
            keys |= pairs[:, 1]
            del pairs
            keys.sort()
            first = np.ones(len(keys), dtype=bool)
            np.not_equal(keys[1:], keys[:-1], out=first[1:])
            keys = keys[first]
            targets = keys >> 32
            sources = (keys & 0xFFFFFFFF).astype(np.int32)
            base = int(boundaries[number])
            counts = np.bincount(targets - base)
            degree[base:base + len(counts)] = counts
            linked[targets] = True
            linked[sources] = True
            sources.tofile(handle)
    indptr = np.zeros(nodes + 1, dtype=np.int64)
    np.cumsum(degree, out=indptr[1:])
    np.save(out_dir / INDPTR_FILE, indptr)
    edges = int(indptr[-1])
    with open(raw, "rb") as source, open(out_dir / INDICES_FILE, "wb") as indices:
        header = np.lib.format.header_data_from_array_1_0(np.zeros(0, dtype=np.int32))
        np.lib.format.write_array_header_1_0(indices, {**header, "shape": (edges,)})
        shutil.copyfileobj(source, indices, _COPY_BYTES)
    raw.unlink()
    return GraphCounts(int(linked.sum()), nodes, edges)
