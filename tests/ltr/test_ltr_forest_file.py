"""The compiled forest kept in a file per model and memory-mapped (elquery.linking.ltr.forest_file):
processes loading one model share one copy, written once; a file that does not match is written
again; without a writable cache the forest is compiled in memory; scikit-learn's numbers in every
case."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from elquery.linking.ltr.features import FEATURES
from elquery.linking.ltr.model import LtrModel, model_bytes, new_info, train_forest, write_model

LOAD_AND_SCORE = """
import json, sys
import numpy as np
from elquery.linking.ltr.model import LtrModel
model = LtrModel.load(sys.argv[1], engine="compiled")
rows = np.array(json.loads(sys.argv[2]))
print(json.dumps({"scores": model.score(rows).tolist(), "writeable": bool(model.engine._nodes.flags.writeable)}))
"""


@pytest.fixture()
def trained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, Path, np.ndarray]:
    """(a forest, its model file, probe rows), the cache folder in ``tmp_path / "cache"``."""
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(31)
    matrix = rng.random((300, len(FEATURES)))
    forest = train_forest(matrix, (matrix[:, 0] + 0.5 * rng.random(300) > 0.7).astype(np.int8), trees=60, seed=8)
    path = tmp_path / "m.onnx"
    write_model(path, model_bytes(forest, new_info(forest, {"file": "rows"}, {"index": None, "surface_forms": None}, 0.1)))
    return forest, path, rng.random((40, len(FEATURES)))


def forest_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "ltr-forests").glob("*.forest"))


def test_processes_loading_one_model_map_one_file_written_once(trained: tuple, tmp_path: Path) -> None:
    forest, path, probes = trained
    model = LtrModel.load(path, engine="compiled")
    [written] = forest_files(tmp_path)
    before = written.stat()
    assert not model.engine._nodes.flags.writeable  # a read-only view of the mapped file
    assert np.array_equal(model.score(probes), forest.predict(probes))
    out = subprocess.run([sys.executable, "-c", LOAD_AND_SCORE, str(path), json.dumps(probes.tolist())],
                         capture_output=True, text=True, check=True, env=os.environ).stdout
    other = json.loads(out)
    assert other["scores"] == forest.predict(probes).tolist() and not other["writeable"]
    after = written.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # mapped, not written again
    assert forest_files(tmp_path) == [written]


@pytest.mark.parametrize("change", ["cut short", "one byte altered", "another layout"])
def test_a_file_that_does_not_match_is_written_again(change: str, trained: tuple, tmp_path: Path) -> None:
    forest, path, probes = trained
    LtrModel.load(path, engine="compiled")
    [written] = forest_files(tmp_path)
    data = bytearray(written.read_bytes())
    if change == "cut short":
        data = data[:-64]
    elif change == "one byte altered":
        data[len(data) // 2] ^= 0xFF
    else:
        data[:data.index(b"\n")] = data[:data.index(b"\n")].replace(b"elquery-ltr-compiled/1", b"elquery-ltr-compiled/0")
    written.write_bytes(bytes(data))
    model = LtrModel.load(path, engine="compiled")
    assert np.array_equal(model.score(probes), forest.predict(probes))
    assert written.read_bytes() != bytes(data)  # replaced by a matching file
    assert not model.engine._nodes.flags.writeable


def test_without_a_writable_cache_the_forest_is_compiled_in_memory(trained: tuple, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    forest, path, probes = trained
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ELQUERY_CACHE", str(blocker / "cache"))  # under a file: no folder can be made
    model = LtrModel.load(path, engine="compiled")
    assert model.engine._nodes.flags.writeable
    assert np.array_equal(model.score(probes), forest.predict(probes))


def test_the_cache_holds_only_the_forest_files(trained: tuple, tmp_path: Path) -> None:
    """Processes lock the cache folder itself while one writes, so no lock file stays beside a forest."""
    _, path, _ = trained
    LtrModel.load(path, engine="compiled")
    LtrModel.load(path, engine="compiled")
    assert sorted(p.name for p in (tmp_path / "cache" / "ltr-forests").iterdir()) == [p.name for p in forest_files(tmp_path)]


def test_the_cache_keeps_the_most_recently_written_forests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing a forest removes the oldest written beyond KEPT_FORESTS (and lock files of earlier
    releases); a removed one is compiled again when its model loads, with the same scores."""
    from elquery.linking.ltr.forest_file import KEPT_FORESTS

    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "ltr-forests"
    folder.mkdir(parents=True)
    (folder / "left-by-an-earlier-release.forest.lock").write_text("")
    rng = np.random.default_rng(5)
    matrix = rng.random((60, len(FEATURES)))
    labels = (matrix[:, 0] > 0.5).astype(np.int8)
    models, written = [], []
    for seed in range(KEPT_FORESTS + 2):
        forest = train_forest(matrix, labels, trees=3, seed=seed)
        path = tmp_path / f"m{seed}.onnx"
        write_model(path, model_bytes(forest, new_info(forest, {"file": "rows"}, {"index": None, "surface_forms": None}, 0.1)))
        LtrModel.load(path, engine="compiled")
        [new] = set(forest_files(tmp_path)) - set(written)
        os.utime(new, ns=(10**18 + seed, 10**18 + seed))  # written in this order, whatever the clock's grain
        models.append((forest, path))
        written.append(new)
    assert forest_files(tmp_path) == sorted(written[2:])
    assert sorted(folder.iterdir()) == sorted(written[2:])
    forest, path = models[0]
    probes = rng.random((7, len(FEATURES)))
    assert np.array_equal(LtrModel.load(path, engine="compiled").score(probes), forest.predict(probes))
    assert written[0] in forest_files(tmp_path) and len(forest_files(tmp_path)) == KEPT_FORESTS
