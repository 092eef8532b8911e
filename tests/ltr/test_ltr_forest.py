"""The forest's ONNX form and engines (elquery.linking.ltr.forest) against scikit-learn's own
forest: the same predictions, including trees that are a single leaf (a bootstrap sample with
one label only), rows on a split threshold, and thresholds between adjacent float32 values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elquery.linking.ltr.features import FEATURES
from elquery.linking.ltr.model import LtrModel, model_bytes, new_info, train_forest, write_model


def saved(forest: object, path: Path) -> Path:
    info = new_info(forest, {"file": "rows"}, {"index": None, "surface_forms": None}, 0.1)
    write_model(path, model_bytes(forest, info))
    return path


@pytest.mark.parametrize("engine", ["compiled", "onnxruntime"])
def test_single_leaf_trees_predict_as_in_scikit_learn(engine: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    matrix = rng.random((12, len(FEATURES)))
    labels = np.zeros(12, dtype=np.int8)
    labels[3] = 1  # one positive in 12: about a third of the bootstrap samples miss it
    forest = train_forest(matrix, labels, trees=40, seed=2)
    assert any(e.tree_.node_count == 1 for e in forest.estimators_)
    model = LtrModel.load(saved(forest, tmp_path / "m.onnx"), engine=engine)
    probes = np.vstack([matrix, rng.random((50, len(FEATURES)))])
    assert np.array_equal(model.score(probes), forest.predict(probes))


@pytest.mark.parametrize("engine", ["compiled", "onnxruntime"])
def test_rows_on_and_next_to_float32_thresholds_take_scikit_learns_branch(engine: str, tmp_path: Path) -> None:
    """Values one float32 step apart: scikit-learn splits between them at a float64 midpoint that
    no float32 holds (rounded to the nearest float32, half of them would become the upper value);
    a row at either value must take scikit-learn's branch."""
    rng = np.random.default_rng(9)
    # each value twice (rows 2k, 2k + 1), in [2, 4): a float32 step there (2.4e-7) is more than the
    # 1e-7 under which scikit-learn takes two values for one
    base = np.repeat((2 + 2 * rng.random(150)).astype(np.float32), 2)
    matrix = np.repeat(base[:, None], len(FEATURES), axis=1).astype(np.float64)
    matrix[1::2, :] = np.nextafter(base[1::2], np.float32(2)).astype(np.float64)[:, None]  # row 2k + 1: one step up
    labels = (np.arange(300) % 2).astype(np.int8)  # told apart only by that one step
    forest = train_forest(matrix, labels, trees=20, seed=5)
    model = LtrModel.load(saved(forest, tmp_path / "m.onnx"), engine=engine)
    thresholds = np.concatenate([e.tree_.threshold[e.tree_.children_left >= 0] for e in forest.estimators_])
    assert np.any(thresholds.astype(np.float32).astype(np.float64) != thresholds)  # not float32 values
    assert np.array_equal(model.score(matrix), forest.predict(matrix))
    assert forest.predict(matrix).min() < 0.5 < forest.predict(matrix).max()


def test_compiled_engine_gives_scikit_learns_scores_for_every_batch_size(tmp_path: Path) -> None:
    """The compiled engine walks up to LANE_ROWS rows together, in blocks of trees that depend on
    the rows: one row, a few, a block that does not divide the forest, exactly LANE_ROWS rows and
    more (a second, partial group of rows), each the same numbers as scikit-learn's predict, from
    leaves of many distinct values."""
    from elquery.linking.ltr.forest import LANE_ROWS

    rng = np.random.default_rng(11)
    matrix = rng.random((400, len(FEATURES)))
    labels = (matrix[:, 0] + 0.3 * rng.random(400) > 0.6).astype(np.int8)
    forest = train_forest(matrix, labels, trees=101, seed=3)  # 101 trees: no block size divides it
    model = LtrModel.load(saved(forest, tmp_path / "m.onnx"), engine="compiled")
    assert len(np.unique(np.concatenate([e.tree_.value.ravel() for e in forest.estimators_]))) > 2
    probes = rng.random((3 * LANE_ROWS + 5, len(FEATURES)))
    for size in (1, 2, 3, 7, 30, LANE_ROWS - 1, LANE_ROWS, LANE_ROWS + 1, 3 * LANE_ROWS + 5):
        rows = probes[:size]
        assert np.array_equal(model.score(rows), forest.predict(rows)), size


def test_compiled_engine_on_one_and_two_threads_gives_scikit_learns_scores_at_every_switch(tmp_path: Path) -> None:
    """The compiled engine's paths switch at PARALLEL_PAIRS (tree, row) pairs (one thread -> two)
    and at 2 * TREE_LANES rows (two threads split the trees -> split the rows, at a multiple of
    LANE_ROWS); on either side of each, on one thread and on two, the same numbers as
    scikit-learn's predict."""
    from elquery.linking.ltr.forest import LANE_ROWS, PARALLEL_PAIRS, TREE_LANES, CompiledEngine, from_onnx
    from onnx import load

    rng = np.random.default_rng(12)
    matrix = rng.random((300, len(FEATURES)))
    labels = (matrix[:, 1] + 0.4 * rng.random(300) > 0.7).astype(np.int8)
    trees = 100
    forest = train_forest(matrix, labels, trees=trees, seed=4)
    arrays = from_onnx(load(saved(forest, tmp_path / "m.onnx")))
    engines = {threads: CompiledEngine(arrays, threads=threads) for threads in (1, 2)}
    parallel_rows = -(-PARALLEL_PAIRS // trees)  # the fewest rows walked on two threads
    assert LANE_ROWS < parallel_rows < 2 * TREE_LANES
    probes = rng.random((2 * TREE_LANES + LANE_ROWS + 1, len(FEATURES)))
    probes[:50] = matrix[:50]  # rows of the training data too: on thresholds' neighbours
    for size in (1, LANE_ROWS, parallel_rows - 1, parallel_rows, 2 * TREE_LANES - 1, 2 * TREE_LANES,
                 2 * TREE_LANES + 1, 2 * TREE_LANES + LANE_ROWS + 1):
        rows = probes[:size]
        wanted = forest.predict(rows)
        for threads, engine in engines.items():
            assert np.array_equal(engine.predict(rows.astype(np.float32)), wanted), (size, threads)
    assert engines[2].predict(np.zeros((0, len(FEATURES)), dtype=np.float32)).shape == (0,)


def test_compiled_engine_refuses_other_thread_counts(tmp_path: Path) -> None:
    from elquery.base import ElqueryError
    from elquery.linking.ltr.forest import CompiledEngine, from_sklearn

    rng = np.random.default_rng(1)
    matrix = rng.random((20, len(FEATURES)))
    forest = train_forest(matrix, (matrix[:, 0] > 0.5).astype(np.int8), trees=3, seed=1)
    with pytest.raises(ElqueryError, match="1 or 2 threads, not 3"):
        CompiledEngine(from_sklearn(forest), threads=3)


def test_rows_exactly_on_every_threshold_take_scikit_learns_branch(tmp_path: Path) -> None:
    """The compiled engine compares bins (a value's number among its feature's thresholds), not
    floats: a row whose every feature holds one of that feature's thresholds (as a float32: the
    largest one not above it, which goes left, and the next one up, which goes right), at every
    split's threshold in turn, gets scikit-learn's numbers."""
    from elquery.linking.ltr.forest import CompiledEngine, from_sklearn

    rng = np.random.default_rng(21)
    matrix = np.round(rng.random((300, len(FEATURES))) * 20) / 4  # few distinct values: many rows on thresholds
    labels = (matrix[:, 2] + matrix[:, 5] + rng.random(300) > 5.5).astype(np.int8)
    forest = train_forest(matrix, labels, trees=30, seed=6)
    engine = CompiledEngine(from_sklearn(forest), threads=1)
    probes = []
    for estimator in forest.estimators_:
        tree = estimator.tree_
        for feature, threshold in zip(tree.feature[tree.feature >= 0], tree.threshold[tree.feature >= 0]):
            at_most = np.float32(threshold)
            if at_most > threshold:
                at_most = np.nextafter(at_most, np.float32(-np.inf))
            for value in (at_most, np.nextafter(at_most, np.float32(np.inf))):
                row = matrix[len(probes) % len(matrix)].astype(np.float32)
                row[feature] = value
                probes.append(row)
    rows = np.array(probes, dtype=np.float32)
    assert len(rows) > 1000
    assert np.array_equal(engine.predict(rows), forest.predict(rows))


def test_nan_and_infinite_values_go_where_onnxruntime_sends_them(tmp_path: Path) -> None:
    """LtrModel.score refuses a value that is not a finite number (as scikit-learn does); the engines
    themselves send NaN to the right child (``x <= t`` is false: ONNX's BRANCH_LEQ), +inf right
    and -inf left, the compiled engine as onnxruntime."""
    from elquery.linking.ltr.forest import CompiledEngine, OnnxRuntimeEngine, from_onnx
    from onnx import load

    rng = np.random.default_rng(22)
    matrix = rng.random((200, len(FEATURES)))
    forest = train_forest(matrix, (matrix[:, 0] + matrix[:, 1] > 1).astype(np.int8), trees=25, seed=7)
    path = saved(forest, tmp_path / "m.onnx")
    compiled = CompiledEngine(from_onnx(load(path)), threads=1)
    runtime = OnnxRuntimeEngine(path.read_bytes())
    rows = rng.random((90, len(FEATURES))).astype(np.float32)
    for n, value in enumerate((np.nan, np.inf, -np.inf)):
        rows[30 * n:30 * (n + 1), rng.integers(0, len(FEATURES), 30)] = value  # one or more features a row
    assert np.array_equal(compiled.predict(rows), runtime.predict(rows))
    assert not np.array_equal(compiled.predict(rows[:30]), compiled.predict(np.nan_to_num(rows[:30], nan=-1.0)))


def test_stumps_and_leaf_values_beyond_a_byte(tmp_path: Path) -> None:
    """A forest of stumps (a split and two leaves: both children leaves), and one fitted on
    real-valued labels (thousands of distinct leaf values, numbered in two bytes): scikit-learn's
    numbers."""
    from sklearn.ensemble import RandomForestRegressor

    from elquery.linking.ltr.forest import CompiledEngine, from_sklearn

    rng = np.random.default_rng(23)
    matrix = rng.random((500, len(FEATURES)))
    probes = np.vstack([matrix[:40], rng.random((100, len(FEATURES)))]).astype(np.float32)
    stumps = RandomForestRegressor(n_estimators=50, max_depth=1, random_state=1).fit(matrix, matrix[:, 3] > 0.5)
    assert all(e.tree_.node_count == 3 for e in stumps.estimators_)
    graded = RandomForestRegressor(n_estimators=20, random_state=2).fit(matrix, matrix[:, 0] + rng.random(500))
    assert len(np.unique(np.concatenate([e.tree_.value.ravel() for e in graded.estimators_]))) > 256
    for forest in (stumps, graded):
        for threads in (1, 2):
            assert np.array_equal(CompiledEngine(from_sklearn(forest), threads=threads).predict(probes),
                                  forest.predict(probes))


def test_a_forest_beyond_the_compact_layout_is_refused_in_one_line() -> None:
    """More distinct leaf values than the layout numbers (65,536): one line naming the limit and
    the other engine."""
    from elquery.base import ElqueryError
    from elquery.linking.ltr.forest import CompiledEngine, ForestArrays

    trees = 33_000  # stumps of two leaves each: 66,000 distinct leaf values
    ids = np.arange(trees)
    arrays = ForestArrays(features=len(FEATURES), roots=ids, split_features=ids % len(FEATURES),
                          split_thresholds=np.full(trees, 0.5), true_ids=2 * ids, true_leaf=np.ones(trees, dtype=np.int64),
                          false_ids=2 * ids + 1, false_leaf=np.ones(trees, dtype=np.int64),
                          leaf_values=np.arange(2 * trees) / (2 * trees))
    with pytest.raises(ElqueryError, match=r"at most 65536 distinct leaf values, not 66000 \(use engine onnxruntime\)"):
        CompiledEngine(arrays)


@pytest.mark.parametrize("distinct", [32_767, 32_768])
def test_a_feature_of_more_thresholds_than_two_byte_bins_hold_walks_as_in_order(distinct: int) -> None:
    """The bins are int16 while every feature has at most 32,767 distinct thresholds (its values'
    bins, NaN's included, 0 to 32,767), int32 beyond: stumps on feature 0 at ``distinct`` distinct
    thresholds, rows on, beside and between them and NaN, in batches of 1, 32 (half a vector) and
    64 rows and more, each the sum in tree order of the leaf each row reaches (computed here with
    numpy), divided by the trees."""
    from elquery.linking.ltr.forest import CompiledEngine, ForestArrays

    ids = np.arange(distinct)
    thresholds = (ids.astype(np.float64) + 0.5) / 8  # float32 values: no rounding
    rng = np.random.default_rng(41)
    left, right = rng.integers(0, 4, distinct) / 4, rng.integers(0, 4, distinct) / 4
    arrays = ForestArrays(features=len(FEATURES), roots=ids, split_features=np.zeros(distinct, dtype=np.int64),
                          split_thresholds=thresholds, true_ids=2 * ids, true_leaf=np.ones(distinct, dtype=np.int64),
                          false_ids=2 * ids + 1, false_leaf=np.ones(distinct, dtype=np.int64),
                          leaf_values=np.column_stack([left, right]).ravel())
    engine = CompiledEngine(arrays, threads=1)
    assert engine._bin_type == (np.int16 if distinct < 1 << 15 else np.int32)
    x = np.concatenate([thresholds[[0, 1, distinct // 2, distinct - 1]], thresholds[[0, distinct - 1]] + 1 / 16,
                        [-1.0, thresholds[-1] + 1, np.nan], rng.random(91) * distinct / 8]).astype(np.float32)
    rows = np.zeros((len(x), len(FEATURES)), dtype=np.float32)
    rows[:, 0] = x
    wanted = np.zeros(len(x))
    for tree in range(distinct):  # in tree order, as scikit-learn sums
        wanted += np.where(x.astype(np.float64) <= thresholds[tree], left[tree], right[tree])
    wanted /= distinct
    for size in (1, 32, 64, len(x)):
        assert np.array_equal(engine.predict(rows[:size]), wanted[:size]), size


@pytest.mark.parametrize("chain", [(1 << 20) - 2, (1 << 20) - 1])
def test_a_left_subtree_beyond_the_right_offsets_field_is_refused_not_walked_wrong(chain: int) -> None:
    """A split's right child is at an offset of its left subtree's splits + 1 in a field of
    RIGHT_BITS (20) bits, so a left subtree may have at most 2**20 - 2 splits: a root whose left
    child starts a chain of ``chain`` splits and whose right child is a split. At 2**20 - 2 a row
    sent right reaches that split's leaf (10); at 2**20 - 1 the forest is refused in one line (the
    offset would wrap into the chain, whose leaves are 1 and 2)."""
    from elquery.base import ElqueryError
    from elquery.linking.ltr.forest import CompiledEngine, ForestArrays

    splits = chain + 2  # the root, the chain, the right split; depth first, left first
    features = np.ones(splits, dtype=np.int64)
    features[0] = 0
    true_ids, false_ids = np.zeros(splits, dtype=np.int64), np.zeros(splits, dtype=np.int64)
    true_leaf, false_leaf = np.ones(splits, dtype=np.int64), np.ones(splits, dtype=np.int64)
    true_ids[0], true_leaf[0], false_ids[0], false_leaf[0] = 1, 0, chain + 1, 0
    true_ids[1:chain], true_leaf[1:chain] = np.arange(2, chain + 1), 0  # each chain split's left child: the next
    false_ids[1:chain + 1] = 0  # leaf 0 (value 1) right of every chain split
    true_ids[chain] = 1  # leaf 1 (value 2) left of the last
    true_ids[chain + 1], false_ids[chain + 1] = 2, 3  # the right split's leaves: 10 and 20
    arrays = ForestArrays(features=len(FEATURES), roots=np.zeros(1, dtype=np.int64), split_features=features,
                          split_thresholds=np.full(splits, 0.5), true_ids=true_ids, true_leaf=true_leaf,
                          false_ids=false_ids, false_leaf=false_leaf, leaf_values=np.array([1.0, 2.0, 10.0, 20.0]))
    rows = np.zeros((2, len(FEATURES)), dtype=np.float32)
    rows[0, 0] = 1.0  # right at the root, left at the right split: 10
    rows[1, :2] = 1.0  # right at the root and at the right split: 20
    if chain + 1 < 1 << 20:
        assert CompiledEngine(arrays, threads=1).predict(rows).tolist() == [10.0, 20.0]
    else:
        with pytest.raises(ElqueryError, match=r"at most 1048574 splits in a left subtree, not 1048575 "
                                               r"\(use engine onnxruntime\)"):
            CompiledEngine(arrays, threads=1)
