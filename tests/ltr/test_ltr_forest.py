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
    """The compiled engine walks the trees in blocks of about LANES / rows trees: one row (a block
    of 64 trees), a few rows, a block that does not divide the forest, and more rows than lanes,
    each the same numbers as scikit-learn's predict, from leaves of many distinct values."""
    from elquery.linking.ltr.forest import LANES

    rng = np.random.default_rng(11)
    matrix = rng.random((400, len(FEATURES)))
    labels = (matrix[:, 0] + 0.3 * rng.random(400) > 0.6).astype(np.int8)
    forest = train_forest(matrix, labels, trees=101, seed=3)  # 101 trees: no block size divides it
    model = LtrModel.load(saved(forest, tmp_path / "m.onnx"), engine="compiled")
    assert len(np.unique(np.concatenate([e.tree_.value.ravel() for e in forest.estimators_]))) > 2
    probes = rng.random((LANES + 37, len(FEATURES)))
    for size in (1, 2, 3, 7, 30, LANES, LANES + 37):
        rows = probes[:size]
        assert np.array_equal(model.score(rows), forest.predict(rows)), size


def test_compiled_engine_on_one_and_two_threads_gives_scikit_learns_scores_at_every_switch(tmp_path: Path) -> None:
    """The compiled engine's paths switch at LANES rows (tree blocks -> row blocks), at
    PARALLEL_PAIRS (tree, row) pairs (one thread -> two) and at 2 * LANES rows (two threads split
    the trees -> split the rows); on either side of each, on one thread and on two, the same
    numbers as scikit-learn's predict."""
    from elquery.linking.ltr.forest import LANES, PARALLEL_PAIRS, CompiledEngine, from_onnx
    from onnx import load

    rng = np.random.default_rng(12)
    matrix = rng.random((300, len(FEATURES)))
    labels = (matrix[:, 1] + 0.4 * rng.random(300) > 0.7).astype(np.int8)
    trees = 400
    forest = train_forest(matrix, labels, trees=trees, seed=4)
    arrays = from_onnx(load(saved(forest, tmp_path / "m.onnx")))
    engines = {threads: CompiledEngine(arrays, threads=threads) for threads in (1, 2)}
    parallel_rows = -(-PARALLEL_PAIRS // trees)  # the fewest rows walked on two threads
    assert parallel_rows < 2 * LANES
    probes = rng.random((2 * LANES + 1, len(FEATURES)))
    probes[:50] = matrix[:50]  # rows of the training data too: on thresholds' neighbours
    for size in (1, LANES - 1, LANES, LANES + 1, parallel_rows - 1, parallel_rows, 2 * LANES - 1, 2 * LANES,
                 2 * LANES + 1):
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
