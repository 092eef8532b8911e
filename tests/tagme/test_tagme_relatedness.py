"""Milne-Witten relatedness (methods.md §6) against the formula, on small hand-made graphs."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from elquery.kb.tagme.graph import InlinkGraph
from elquery.kb.tagme.layout import INDICES_FILE, INDPTR_FILE
from elquery.linking.tagme.relatedness import Relatedness, milne_witten


def graph_of(directory: Path, inlinks: list[list[int]], entities: int) -> Relatedness:
    np.save(directory / INDPTR_FILE, np.concatenate(([0], np.cumsum([len(x) for x in inlinks]))).astype(np.int64))
    np.save(directory / INDICES_FILE, np.array([s for x in inlinks for s in sorted(x)], dtype=np.int32))
    return Relatedness(InlinkGraph(directory, entities))


def formula(a: set[int], b: set[int], entities: int) -> float:
    common = len(a & b)
    if not a or not b or not common:
        return 0.0
    big, small = max(len(a), len(b)), min(len(a), len(b))
    if big == common:
        return 1.0
    if entities == small:
        return 0.0
    return min(1.0, max(0.0, 1 - (math.log(big) - math.log(common)) / (math.log(entities) - math.log(small))))


def test_matrix_equals_formula(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    inlinks = [sorted(set(rng.integers(0, 40, int(rng.integers(0, 25))).tolist())) for _ in range(40)]
    related = graph_of(tmp_path, inlinks, 40)
    rows, columns = [3, 0, 17, 29, 5, 3], list(range(40)) + [17]
    got = related.matrix(rows, columns)
    assert np.array_equal(related.matrix(rows, columns), got)  # the scratch array was reset
    for (i, a), (j, b) in itertools.product(enumerate(rows), enumerate(columns)):
        want = 1.0 if a == b else formula(set(inlinks[a]), set(inlinks[b]), 40)
        assert got[i, j] == pytest.approx(want, abs=1e-12), (a, b)


def test_edge_cases(tmp_path: Path) -> None:
    related = graph_of(tmp_path, [[], [0, 1, 2], [0, 1, 2], [0, 1, 2, 3], [5], []], 4)
    assert related.pair(0, 0) == 1.0  # identity even without in-links
    assert related.pair(0, 1) == 0.0  # no in-links
    assert related.pair(1, 4) == 0.0  # none shared
    assert related.pair(1, 2) == 1.0  # equal sets
    assert related.pair(3, 1) == 0.0  # linked from every page, sets differ: denominator 0
    assert related.matrix([], [1, 2]).shape == (0, 2)
    assert related.matrix([1], []).shape == (1, 0)
    assert related.matrix([0], [0, 4]).tolist() == [[1.0, 0.0]]


def test_milne_witten_is_symmetric_and_clamped() -> None:
    sizes = np.array([1, 2, 5, 10, 50])
    a, b = np.meshgrid(sizes, sizes)
    common = np.minimum(a, b) // 2
    rel = milne_witten(a, b, common, 100)
    assert np.array_equal(rel, rel.T)
    assert ((rel >= 0) & (rel <= 1)).all()
    assert (rel[common == 0] == 0).all()


def test_one_relatedness_shared_by_threads_gives_the_single_threaded_matrices(tmp_path: Path) -> None:
    """Relatedness numbers in-link sources in scratch space; calls running at once in several
    threads (numpy releases the GIL on large arrays) must each get their own and the same result."""
    import threading

    rng = np.random.default_rng(5)
    nodes, targets = 400_000, 40
    lists = [np.unique(rng.integers(0, nodes, size=rng.integers(20_000, 60_000))).astype(np.int32)
             for _ in range(targets)]
    indptr = np.concatenate(([0], np.cumsum([len(x) for x in lists]), np.full(nodes - targets, sum(map(len, lists)))))
    np.save(tmp_path / INDPTR_FILE, indptr.astype(np.int64))
    np.save(tmp_path / INDICES_FILE, np.concatenate(lists))
    relatedness = Relatedness(InlinkGraph(tmp_path, nodes))
    blocks = [(list(range(i, i + 6)), list(range(i + 3, i + 11))) for i in range(0, targets - 11, 3)]
    expected = [relatedness.matrix(rows, columns) for rows, columns in blocks]
    failures: list[str] = []

    def work() -> None:
        for _ in range(5):
            for (rows, columns), want in zip(blocks, expected):
                if not np.array_equal(relatedness.matrix(rows, columns), want):
                    failures.append(f"{rows} x {columns}")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
