"""A batch walked on two threads in blocks of trees (elquery.linking.ltr.forest_kernels.walk_front
and walk_back): whichever side walks a block, and whenever, the scores are scikit-learn's to the
last bit. The two sides are run here one after the other on one thread, so that each case (the
other thread never started, it walked every block but the caller's first, it took a block and
never finished it) is certain."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from elquery.linking.ltr import forest_kernels as kernels
from elquery.linking.ltr.features import FEATURES
from elquery.linking.ltr.forest import LANE_ROWS, compile_forest, from_sklearn
from elquery.linking.ltr.threads import PATIENCE
from elquery.linking.ltr.model import train_forest

TREES, BLOCK = 101, 8  # 13 blocks, the last of 5 trees


@pytest.fixture(scope="module")
def forest() -> tuple[Any, dict[str, np.ndarray], np.ndarray]:
    """A forest of deep trees (noisy labels, many distinct leaf values), its compiled arrays, and
    51 probe rows (a query's), some on the training rows."""
    rng = np.random.default_rng(29)
    matrix = rng.random((1500, len(FEATURES)))
    labels = ((matrix[:, 0] + matrix[:, 3] > 1.0) ^ (rng.random(1500) < 0.05)).astype(np.int8)
    fitted = train_forest(matrix, labels, trees=TREES, seed=4)
    probes = np.vstack([matrix[:20], rng.random((31, len(FEATURES)))]).astype(np.float32)
    return fitted, compile_forest(from_sklearn(fitted)), probes


class Batch:
    """What walk_front and walk_back share for one batch: its binned rows, the claims word, the
    blocks' done flags and the value numbers of the blocks walked from the back."""

    def __init__(self, compiled: dict[str, np.ndarray], rows: np.ndarray) -> None:
        self.compiled, self.count = compiled, len(rows)
        features = len(compiled["starts"]) - 1
        self.bins = np.empty(-(-len(rows) // LANE_ROWS) * features * LANE_ROWS, dtype=np.int16)
        kernels.bin_rows(rows, compiled["thresholds"], compiled["starts"], compiled["fences"], compiled["fence_starts"],
                         self.bins)
        self.blocks = -(-TREES // BLOCK)
        self.claims = np.array([1 | self.blocks << 32], dtype=np.int64)  # block 0 is the caller's
        self.done = np.zeros(self.blocks, dtype=np.int64)
        self.slot_type = np.uint8 if len(compiled["values"]) <= 256 else np.uint16
        self.per_tree = np.empty((TREES, len(rows)), dtype=self.slot_type)
        self.totals = np.zeros(len(rows))

    def args(self) -> tuple[Any, ...]:
        c = self.compiled
        return (c["nodes"], c["roots"], c["values"], self.bins, len(c["starts"]) - 1, self.count, BLOCK,
                np.zeros(BLOCK * LANE_ROWS + 1, dtype=self.slot_type))

    def front(self, patience: float = PATIENCE) -> int:
        return int(kernels.walk_front(*self.args(), self.totals, self.per_tree, self.claims, self.done, patience))

    def back(self) -> int:
        return int(kernels.walk_back(*self.args(), self.per_tree, self.claims, self.done))

    def meet(self) -> tuple[int, int]:
        word = int(self.claims[0])
        return word & 0xFFFFFFFF, word >> 32


def test_the_caller_alone_walks_every_block_when_the_other_thread_never_starts(forest: Any) -> None:
    fitted, compiled, probes = forest
    batch = Batch(compiled, probes)
    assert batch.front() == batch.blocks
    assert batch.meet() == (batch.blocks, batch.blocks)
    assert np.array_equal(batch.totals / TREES, fitted.predict(probes))
    assert batch.back() == 0  # started late: nothing left


def test_blocks_walked_from_the_back_are_added_after_the_callers_tree_by_tree(forest: Any) -> None:
    """The other side takes every block but the caller's first (from the last); the caller adds
    their value numbers' values in the trees' order: scikit-learn's sum to the last bit."""
    fitted, compiled, probes = forest
    batch = Batch(compiled, probes)
    assert batch.back() == batch.blocks - 1
    assert batch.meet() == (1, 1) and batch.done[1:].all() and not batch.done[0]
    assert batch.front() == 1
    assert np.array_equal(batch.totals / TREES, fitted.predict(probes))


@pytest.mark.parametrize("patience", [0.0, PATIENCE])
def test_a_block_the_other_thread_took_and_did_not_finish_is_walked_by_the_caller(forest: Any, patience: float) -> None:
    """The other side took blocks 5 to 12 and finished all but block 5 (it lost its core): the
    caller walks 0 to 4, waits for block 5 at most ``patience`` times its own time per block, then
    walks it itself, over the value numbers the other side had begun to write."""
    fitted, compiled, probes = forest
    batch = Batch(compiled, probes)
    batch.claims[0] = 5 | batch.blocks << 32
    assert batch.back() == batch.blocks - 5
    batch.done[5] = 0
    batch.per_tree[5 * BLOCK:6 * BLOCK] = 0  # half-written
    batch.claims[0] = 1 | 5 << 32  # the caller's state while block 5 is in the other thread's hands
    assert batch.front(patience) == 6
    assert np.array_equal(batch.totals / TREES, fitted.predict(probes))


@pytest.mark.parametrize("size", [1, 2, 22, 51, LANE_ROWS, LANE_ROWS + 3])
def test_every_split_of_the_blocks_between_the_sides_gives_scikit_learns_scores(forest: Any, size: int) -> None:
    """Wherever the sides meet (the other side starting after the caller's k-th block), for a
    single row, a few, a query's and more than LANE_ROWS rows."""
    fitted, compiled, probes = forest
    rows = np.vstack([probes, probes])[:size]
    wanted = fitted.predict(rows)
    for k in (1, 2, 7, 12, 13):
        batch = Batch(compiled, rows)
        batch.claims[0] = 1 | k << 32
        if k < 13:  # the other side walks blocks k to 12
            other = Batch(compiled, rows)
            other.claims[0] = k | 13 << 32
            assert other.back() == 13 - k
            batch.per_tree, batch.done = other.per_tree, other.done
        assert batch.front() == k
        assert np.array_equal(batch.totals / TREES, wanted), (size, k)
