"""A trained random forest as plain arrays, its ONNX form, and two ways to run it.

The model file is ONNX (an ``ai.onnx.ml`` opset 5 ``TreeEnsemble`` node, double precision): it
cannot run code, and every ONNX runtime reads it. The trees are written straight from
scikit-learn's arrays with numpy (a few seconds for a thousand fully grown trees, where a
general converter took minutes), thresholds and leaf values in float64, so a row takes the same
branch as in scikit-learn (which compares ``float32(x) <= threshold``) and the prediction is
scikit-learn's to the last bits of the sum.

Engines (:data:`ENGINES`), both with scikit-learn's answers:

* ``compiled``: numba kernels (:mod:`elquery.linking.ltr.forest_kernels`) over a compact copy of
  the trees, 8 bytes a split and none a leaf: each row's features binned once among the
  thresholds of the forest (a split then compares two integers exactly as scikit-learn compares
  ``float32(x) <= t``), then the trees walked a block at a time with up to :data:`LANE_ROWS` rows
  together, a split's rows compared in one vector instruction and sent on as bit masks, so a
  split reached by many of a query's rows is read and tested once for them. On two threads (the
  default on a machine of two cores or more) from :data:`PARALLEL_PAIRS` (tree, row) pairs: the
  caller's and a :class:`HelperThread` the engine keeps, so that a query's rows (20 to 60 rows
  through 1,000 trees: 20,000 to 60,000 pairs) pay for it. A query's batch is shared in blocks of
  trees, the caller's taken from the front of the forest, the thread's from the back, each with
  one atomic instruction, so that neither waits for the other: a thread that wakes late (or not
  at all) leaves more blocks to the caller, which waits at the end for one block at most.
  Needs numba.
* ``onnxruntime``: the ONNX file in an onnxruntime session (one thread).

``benchmarks/bench_ltr.py`` measures both against scikit-learn's own ``predict``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from elquery.base import ElqueryError
from elquery.linking.ltr.threads import PATIENCE, threads_of

ENGINES = ("compiled", "onnxruntime")
INPUT, OUTPUT = "features", "score"
ML_DOMAIN = "ai.onnx.ml"
LANE_ROWS = 64
"""Rows the compiled engine walks together (a bit mask)."""
TREE_LANES = 1024
"""The compiled engine walks blocks of about TREE_LANES / rows trees (from 8 to 256 trees): the
more rows, the fewer trees, so that the blocks' nodes stay in the caches."""
PARALLEL_PAIRS = 10_000
"""The fewest (tree, row) pairs a batch has for the compiled engine to walk them on two threads."""
SMOOTHING = 0.1
"""The weight of a batch's time in :class:`ThreadChoice`'s moving averages."""
EXPLORE_EVERY = 16
"""One query-sized batch in EXPLORE_EVERY is walked the way :class:`ThreadChoice` finds slower."""


@dataclass(frozen=True)
class ForestArrays:
    """A regression forest (prediction = mean of its trees' leaf values) in the layout of ONNX's
    ``TreeEnsemble``: ``split_*`` per split node, ``true_*`` / ``false_*`` the child of a split
    when ``x[feature] <= threshold`` holds / does not (a split's index, or a leaf's when the
    matching ``*_leaf`` is 1), ``roots`` each tree's root split, ``leaf_values`` per leaf. Splits
    and leaves are in scikit-learn's order (depth first, left child first)."""

    features: int
    roots: np.ndarray
    split_features: np.ndarray
    split_thresholds: np.ndarray
    true_ids: np.ndarray
    true_leaf: np.ndarray
    false_ids: np.ndarray
    false_leaf: np.ndarray
    leaf_values: np.ndarray

    @property
    def trees(self) -> int:
        return len(self.roots)

    @property
    def nodes(self) -> int:
        return len(self.split_features) + len(self.leaf_values)


def from_sklearn(forest: Any) -> ForestArrays:
    """The arrays of a fitted ``RandomForestRegressor`` (one output). A tree that is a single
    leaf (its bootstrap sample held one label only) becomes a split on feature 0 whose two
    children are that leaf, as ONNX roots a tree at a split."""
    trees = [estimator.tree_ for estimator in forest.estimators_]
    counts = np.array([tree.node_count for tree in trees], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    base = np.repeat(starts, counts)
    left = np.concatenate([tree.children_left for tree in trees]).astype(np.int64)
    right = np.concatenate([tree.children_right for tree in trees]).astype(np.int64)
    is_leaf = left == -1
    splits, leaves = np.flatnonzero(~is_leaf), np.flatnonzero(is_leaf)
    number = np.empty(len(is_leaf), dtype=np.int64)
    number[splits] = np.arange(len(splits))
    number[leaves] = np.arange(len(leaves))
    left_global, right_global = left[splits] + base[splits], right[splits] + base[splits]
    lone = starts[counts == 1]  # single-leaf trees: a split of their own, after the others
    roots = number[starts]
    roots[counts == 1] = len(splits) + np.arange(len(lone))
    leaf_child = np.ones(len(lone), dtype=np.int64)
    return ForestArrays(
        features=int(forest.n_features_in_),
        roots=roots,
        split_features=np.concatenate([np.concatenate([tree.feature for tree in trees]).astype(np.int64)[splits],
                                       np.zeros(len(lone), dtype=np.int64)]),
        split_thresholds=np.concatenate([np.concatenate([tree.threshold for tree in trees]).astype(np.float64)[splits],
                                         np.zeros(len(lone))]),
        true_ids=np.concatenate([number[left_global], number[lone]]),
        true_leaf=np.concatenate([is_leaf[left_global].astype(np.int64), leaf_child]),
        false_ids=np.concatenate([number[right_global], number[lone]]),
        false_leaf=np.concatenate([is_leaf[right_global].astype(np.int64), leaf_child]),
        leaf_values=np.concatenate([tree.value[:, 0, 0] for tree in trees]).astype(np.float64)[leaves],
    )


def to_onnx(arrays: ForestArrays, metadata: Mapping[str, str]) -> bytes:
    """The forest as a serialized ONNX model (input ``features``: double [n, features]; output
    ``score``: double [n, 1]; AVERAGE over the trees), ``metadata`` in its metadata_props."""
    from onnx import AttributeProto, TensorProto, helper, numpy_helper

    def ints(name: str, values: np.ndarray) -> AttributeProto:
        attribute = AttributeProto(name=name, type=AttributeProto.INTS)
        attribute.ints.extend(values.tolist())
        return attribute

    def tensor(name: str, values: np.ndarray) -> AttributeProto:
        return helper.make_attribute(name, numpy_helper.from_array(values))

    node = helper.make_node("TreeEnsemble", [INPUT], [OUTPUT], domain=ML_DOMAIN, n_targets=1,
                            aggregate_function=0, post_transform=0)  # 0: AVERAGE, NONE
    node.attribute.extend([
        ints("tree_roots", arrays.roots), ints("nodes_featureids", arrays.split_features),
        tensor("nodes_splits", arrays.split_thresholds),
        tensor("nodes_modes", np.zeros(len(arrays.split_features), dtype=np.uint8)),  # 0: BRANCH_LEQ
        ints("nodes_truenodeids", arrays.true_ids), ints("nodes_trueleafs", arrays.true_leaf),
        ints("nodes_falsenodeids", arrays.false_ids), ints("nodes_falseleafs", arrays.false_leaf),
        ints("leaf_targetids", np.zeros(len(arrays.leaf_values), dtype=np.int64)),
        tensor("leaf_weights", arrays.leaf_values),
    ])
    graph = helper.make_graph(
        [node], "elquery-ltr-forest",
        [helper.make_tensor_value_info(INPUT, TensorProto.DOUBLE, [None, arrays.features])],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.DOUBLE, [None, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(ML_DOMAIN, 5)],
                              producer_name="elquery")
    helper.set_model_props(model, dict(metadata))
    return model.SerializeToString()


def from_onnx(model: Any) -> ForestArrays:
    """The arrays of an ONNX model written by :func:`to_onnx` (an ``onnx.ModelProto``)."""
    from onnx import numpy_helper

    nodes = [n for n in model.graph.node if n.op_type == "TreeEnsemble" and n.domain == ML_DOMAIN]
    if len(model.graph.node) != 1 or len(nodes) != 1:
        raise ElqueryError("not an elquery LTR model: expected one ai.onnx.ml TreeEnsemble node")
    attributes = {a.name: a for a in nodes[0].attribute}

    def ints(name: str) -> np.ndarray:
        return np.array(attributes[name].ints, dtype=np.int64)

    def tensor(name: str) -> np.ndarray:
        return numpy_helper.to_array(attributes[name].t)

    shape = model.graph.input[0].type.tensor_type.shape.dim
    return ForestArrays(int(shape[1].dim_value), ints("tree_roots"), ints("nodes_featureids"),
                        tensor("nodes_splits").astype(np.float64), ints("nodes_truenodeids"), ints("nodes_trueleafs"),
                        ints("nodes_falsenodeids"), ints("nodes_falseleafs"), tensor("leaf_weights").astype(np.float64))


# --- engines ------------------------------------------------------------------------------------


class OnnxRuntimeEngine:
    """The ONNX model in a one-thread onnxruntime session."""

    name = "onnxruntime"

    def __init__(self, model_bytes: bytes) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Mean leaf value of each row of float32 ``rows``."""
        return self._session.run(None, {INPUT: rows.astype(np.float64)})[0].ravel()


COMPILED_ARRAYS = ("nodes", "roots", "values", "thresholds", "starts", "fences", "fence_starts")
"""The arrays of a compiled forest (:func:`compile_forest`), all a process needs to run it."""


def compile_forest(arrays: ForestArrays) -> dict[str, np.ndarray]:
    """The compact layout of a forest (module docstring), as :data:`COMPILED_ARRAYS`: ``nodes`` (a
    uint64 word per split), ``roots`` (each tree's first word), ``values`` (the distinct leaf
    values), ``thresholds`` (each feature's distinct thresholds, sorted, ``starts[f]`` to
    ``starts[f + 1]``) and ``fences`` (every FENCE-th of them, ``fence_starts``); a forest beyond
    the layout's fields is refused in one line."""
    kernels = _kernels()
    if arrays.features > 1 << kernels.FEATURE_BITS:
        raise ElqueryError(f"the compiled engine takes at most {1 << kernels.FEATURE_BITS} features, "
                           f"not {arrays.features} (use engine onnxruntime)")
    thresholds = _float32_at_most(arrays.split_thresholds)
    order = np.lexsort((thresholds, arrays.split_features))  # by feature, then threshold
    by_feature, by_value = arrays.split_features[order], thresholds[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (by_feature[1:] != by_feature[:-1]) | (by_value[1:] != by_value[:-1])
    distinct = by_value[first]  # each feature's distinct thresholds, sorted
    starts = np.searchsorted(by_feature[first], np.arange(arrays.features + 1)).astype(np.int64)
    bins = np.empty(len(order), dtype=np.int64)
    bins[order] = np.cumsum(first) - 1 - starts[by_feature]  # a split's threshold number among its feature's
    fences = [np.arange(starts[f], starts[f + 1], kernels.FENCE) for f in range(arrays.features)]
    values, slots = np.unique(arrays.leaf_values, return_inverse=True)
    feature, threshold, left_leaf, right_leaf, right, left_slot, roots = kernels.compact(
        arrays.roots, arrays.split_features.astype(np.int64), bins, arrays.true_ids, arrays.true_leaf.astype(np.bool_),
        arrays.false_ids, arrays.false_leaf.astype(np.bool_), slots.astype(np.int64))
    # a field of b bits numbers 2**b thresholds or values; a right offset (a left subtree's splits + 1) is below 2**b
    for what, largest, most in (("distinct thresholds of one feature", int(np.diff(starts).max(initial=0)),
                                 1 << kernels.BIN_BITS),
                                ("distinct leaf values", len(values), 1 << kernels.SLOT_BITS),
                                ("splits in a left subtree", int(right.max(initial=0)) - 1, (1 << kernels.RIGHT_BITS) - 2)):
        if largest > most:
            raise ElqueryError(f"the compiled engine takes at most {most} {what}, not {largest} "
                               "(use engine onnxruntime)")
    u = np.uint64
    nodes = (feature.astype(u) | left_leaf.astype(u) << u(kernels.LEFT_LEAF)
             | right_leaf.astype(u) << u(kernels.RIGHT_LEAF) | threshold.astype(u) << u(kernels.BIN_SHIFT)
             | right.astype(u) << u(kernels.RIGHT_SHIFT) | left_slot.astype(u) << u(kernels.SLOT_SHIFT))
    return {"nodes": nodes, "roots": roots, "values": values, "thresholds": distinct, "starts": starts,
            "fences": distinct[np.concatenate(fences).astype(np.int64)],
            "fence_starts": np.concatenate([[0], np.cumsum([len(f) for f in fences])]).astype(np.int64)}


class CompiledEngine:
    """The numba kernels over the compact layout (module docstring), on ``threads`` threads for a
    batch of at least :data:`PARALLEL_PAIRS` (tree, row) pairs: the caller's and the engine's
    :class:`HelperThread`."""

    name = "compiled"

    def __init__(self, forest: ForestArrays | Mapping[str, np.ndarray], threads: int | None = None) -> None:
        """``forest``: a forest's arrays, compiled here, or those :func:`compile_forest` gave
        (which may be read-only, memory-mapped); ``threads``: 1 or 2 (default
        :func:`default_threads`)."""
        kernels = _kernels()
        compiled = compile_forest(forest) if isinstance(forest, ForestArrays) else forest
        self._nodes, self._roots, self._values = compiled["nodes"], compiled["roots"], compiled["values"]
        self._thresholds, self._starts = compiled["thresholds"], compiled["starts"]
        self._fences, self._fence_starts = compiled["fences"], compiled["fence_starts"]
        self._slot_type = np.uint8 if len(self._values) <= 1 << 8 else np.uint16
        self._bin_type = np.int16 if np.diff(self._starts).max(initial=0) < 1 << 15 else np.int32  # bins 0 to that
        self._features = len(self._starts) - 1
        self._bin_rows, self._walk = kernels.bin_rows, kernels.walk
        self._walk_front, self._walk_back = kernels.walk_front, kernels.walk_back
        self.threads, self._helper = threads_of(self, threads, "elquery-forest", "the compiled engine")
        self._choice = ThreadChoice()

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Mean leaf value of each row of float32 ``rows``: the trees' values summed in order, then
        divided by their number, as scikit-learn does. On two threads, a batch of at least
        2 * :data:`TREE_LANES` rows is split into two halves of its rows (at a multiple of
        :data:`LANE_ROWS`); a smaller one (a query's) into blocks of trees that the caller takes from
        the front and the helper thread from the back (:meth:`_run_shared`), or on the caller's
        thread alone, whichever has been the faster here (:class:`ThreadChoice`)."""
        rows = np.ascontiguousarray(rows, dtype=np.float32)
        count, trees = len(rows), len(self._roots)
        totals = np.zeros(count)
        if count == 0:
            return totals
        bins = np.empty(-(-count // LANE_ROWS) * self._features * LANE_ROWS, dtype=self._bin_type)
        self._bin_rows(rows, self._thresholds, self._starts, self._fences, self._fence_starts, bins)
        if self._helper is None or count * trees < PARALLEL_PAIRS:
            self._run(self._roots, bins, 0, totals)
        elif count >= 2 * TREE_LANES:
            half = count // 2 // LANE_ROWS * LANE_ROWS
            self._helper.run_beside(lambda: self._run(self._roots, bins, 0, totals[:half]),
                                    [partial(self._run_rows, bins, half, totals[half:])])
        else:
            threads = self._choice.threads()
            start = time.perf_counter()
            if threads == 2:
                self._run_shared(bins, totals)
            else:
                self._run(self._roots, bins, 0, totals)
            self._choice.record(threads, time.perf_counter() - start, count * trees)
        return totals / trees

    def _run_shared(self, bins: np.ndarray, totals: np.ndarray) -> None:
        """All the rows through the trees on the caller's thread and the helper thread, in blocks
        of trees each takes in turn, the caller's from the front, the thread's from the back
        (:func:`~elquery.linking.ltr.forest_kernels.walk_front`)."""
        count, trees = len(totals), len(self._roots)
        tree_block = _tree_block(count) // 2  # half one thread's: at the end, a shorter wait for the other's block
        blocks = -(-trees // tree_block)
        claims = np.array([1 | blocks << 32], dtype=np.int64)  # block 0 is the caller's
        done = np.zeros(blocks, dtype=np.int64)
        per_tree = np.empty((trees, count), dtype=self._slot_type)
        assert self._helper is not None
        self._helper.hand(partial(self._walk_back, self._nodes, self._roots, self._values, bins, self._features, count,
                                  tree_block, self._slots(tree_block), per_tree, claims, done))
        self._walk_front(self._nodes, self._roots, self._values, bins, self._features, count, tree_block,
                         self._slots(tree_block), totals, per_tree, claims, done, PATIENCE)

    def _run_rows(self, bins: np.ndarray, first_row: int, totals: np.ndarray) -> None:
        """Rows ``first_row`` to ``first_row + len(totals)`` through all the trees, their sums
        written to ``totals`` (not added to it: run twice, the same numbers)."""
        sums = np.zeros(len(totals))
        self._run(self._roots, bins, first_row, sums)
        totals[:] = sums

    def _run(self, roots: np.ndarray, bins: np.ndarray, first_row: int, totals: np.ndarray) -> None:
        """Rows ``first_row`` to ``first_row + len(totals)`` through ``roots``' trees."""
        tree_block = _tree_block(len(totals))
        self._walk(self._nodes, roots, self._values, bins, self._features, first_row, len(totals), tree_block,
                   self._slots(tree_block), totals)

    def _slots(self, tree_block: int) -> np.ndarray:
        """A walk's value numbers of a block of trees (forest_kernels.walk)."""
        return np.zeros(tree_block * LANE_ROWS + 1, dtype=self._slot_type)


def _tree_block(count: int) -> int:
    """The trees walked together for ``count`` rows (:data:`TREE_LANES`)."""
    return max(8, min(256, TREE_LANES // min(count, LANE_ROWS)))


@dataclass
class ThreadChoice:
    """Whether a query-sized batch is walked faster on one thread or on two, learnt from the
    batches walked: per way, its wall time per (tree, row) pair as a moving average
    (``a <- a + w * clip(s - a, -a, a)`` for a batch's s, w = :data:`SMOOTHING`: one slow batch
    moves it by w a at most), the faster way taken, the other every :data:`EXPLORE_EVERY`-th
    batch, so that a change (of the machine's load, of the cores the threads get) is seen. Two
    threads win where the helper thread gets a core of its own soon enough, which depends on the
    machine and its load, not on the forest: measured, not assumed."""

    seconds: list[float] = field(default_factory=lambda: [math.nan, math.nan])
    """Per pair, one thread's and two threads' (NaN: not measured yet)."""
    walked: list[int] = field(default_factory=lambda: [0, 0])
    """The batches walked each way (the first one not counted in the average: it may load the
    kernels or start the thread)."""
    batches: int = 0

    def threads(self) -> int:
        """The threads the next batch is walked on (each way first tried twice)."""
        self.batches += 1
        if min(self.walked) < 2:
            return 1 if self.walked[0] < 2 else 2
        faster = 1 if self.seconds[0] <= self.seconds[1] else 2
        return 3 - faster if self.batches % EXPLORE_EVERY == 0 else faster

    def record(self, threads: int, seconds: float, pairs: int) -> None:
        """A batch of ``pairs`` (tree, row) pairs walked on ``threads`` threads in ``seconds``."""
        self.walked[threads - 1] += 1
        sample, average = seconds / pairs, self.seconds[threads - 1]
        if self.walked[threads - 1] == 2:
            self.seconds[threads - 1] = sample
        elif self.walked[threads - 1] > 2:
            self.seconds[threads - 1] = average + SMOOTHING * min(max(sample - average, -average), average)


def _float32_at_most(values: np.ndarray) -> np.ndarray:
    """Per float64 threshold t, the largest float32 f <= t: for a float32 x, x <= f iff x <= t."""
    rounded = values.astype(np.float32)
    above = rounded.astype(np.float64) > values
    rounded[above] = np.nextafter(rounded[above], np.float32(-np.inf))
    return rounded


def compiled_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("numba") is not None


_KERNELS: Any = None


def _kernels() -> Any:
    """The numba kernels, compiled on first use (and cached on disk by numba)."""
    global _KERNELS
    if _KERNELS is None:
        if not compiled_available():
            raise ElqueryError("the compiled LTR engine needs numba, a dependency of elquery: pip install elquery "
                               "(or use engine onnxruntime)")
        from elquery.linking.ltr import forest_kernels

        _KERNELS = forest_kernels
    return _KERNELS
