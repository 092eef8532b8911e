"""Nothing of a failed or interrupted ``elquery build`` remains: no ``--out`` folder it created for
nothing, no ``.NAME.building-*`` work folder, whenever it stops (a user mistake, a failed stage,
Ctrl-C at any moment of the index stage, a signal while the work folder is being removed); and a
later build removes the work folders of builds that were killed outright."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from elquery.cli import main as elquery
from elquery.indexing.demo import DEMO_DIR

REPO = Path(__file__).resolve().parents[2]
R = "http://dbpedia.org/resource/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def _work_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if ".building-" in p.name)


def _dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# --- user mistakes and failed stages: no --out ----------------------------------------------------


def test_bad_data_leaves_no_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for data, message in ((tmp_path / "no" / "such", "no such file or directory"),
                          (empty, "no .ttl/.nt dump files")):
        for out in (tmp_path / "art-x", tmp_path / "new" / "deeper" / "art-x"):
            assert elquery(["build", "--data", str(data), "--out", str(out)]) == 2
            assert f"{data}: {message}" in _one_error_line(capsys)
            assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]
    mine = tmp_path / "mine"
    mine.mkdir()  # a folder the user made stays, empty as it was
    assert elquery(["build", "--data", str(empty), "--out", str(mine)]) == 2
    _one_error_line(capsys)
    assert mine.is_dir() and list(mine.iterdir()) == []


def test_a_stage_that_fails_leaves_no_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Labels but no comments: the index stage starts, then finds no entity to index."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "labels_en.nt").write_text(f'<{R}Rome> <{LABEL}> "Rome"@en .\n', encoding="utf-8")
    out = tmp_path / "new" / "art"
    assert elquery(["build", "--data", str(data), "--out", str(out), "--workers", "1"]) == 2
    assert "no entity in the dumps has both rdfs:label and rdfs:comment" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_a_foreign_folder_is_refused_before_any_stage_is_built(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "art"
    (out / "surface-forms.db").mkdir(parents=True)
    assert elquery(["build", "--data", str(DEMO_DIR), "--out", str(out), "--workers", "1"]) == 2
    assert "surface-forms.db: exists and is not an elquery surface-form store" in _one_error_line(capsys)
    assert sorted(p.name for p in out.iterdir()) == ["surface-forms.db"]  # the index was not built first


# --- a signal while the work folder is removed ------------------------------------------------------


def _interrupting_rmtree(monkeypatch: pytest.MonkeyPatch, when: Callable[[Path], bool]) -> list[Path]:
    """``shutil.rmtree`` that sends this process SIGINT (Ctrl-C) first, once, on a path for which
    ``when`` holds; returns the list of such paths met."""
    real = shutil.rmtree
    met: list[Path] = []

    def rmtree(path: object, *args: object, **kwargs: object) -> None:
        if not met and when(Path(str(path))):
            met.append(Path(str(path)))
            os.kill(os.getpid(), signal.SIGINT)
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    return met


def _final_index_cleanup(path: Path) -> bool:
    """The index build's work folder, at its end (the partition indexes still in it)."""
    return path.name.startswith(".index.building-") and (path / "sub").is_dir()


def test_ctrl_c_while_the_index_work_folder_is_removed_leaves_nothing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from elquery.indexing.build_index import build_dbpedia_index

    met = _interrupting_rmtree(monkeypatch, _final_index_cleanup)
    try:
        build_dbpedia_index([DEMO_DIR], tmp_path / "index", workers=1)  # the index is published: the build stands
    except KeyboardInterrupt:
        pytest.fail(f"Ctrl-C cut the removal of the work folder short: {sorted(p.name for p in tmp_path.iterdir())}")
    assert met and sorted(p.name for p in tmp_path.iterdir()) == ["index"]


def test_ctrl_c_after_the_index_stage_stops_the_build_and_keeps_the_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    met = _interrupting_rmtree(monkeypatch, _final_index_cleanup)
    out = tmp_path / "art"
    assert elquery(["build", "--data", str(DEMO_DIR), "--out", str(out), "--workers", "1"]) == 130
    assert met and capsys.readouterr().err.splitlines()[-1] == "elquery: interrupted"
    assert sorted(p.name for p in out.iterdir()) == ["index"]


# --- Ctrl-C at several moments of the index stage (a real process) ---------------------------------


def _index_work(out: Path) -> Path | None:
    found = list(out.glob(".index.building-*")) if out.is_dir() else []
    return found[0] if found else None


def _in_work(pattern: str) -> Callable[[Path], bool]:
    """Whether the index work folder holds a path matching ``pattern``."""
    def reached(out: Path) -> bool:
        work = _index_work(out)
        try:
            return work is not None and any(work.glob(pattern))
        except OSError:  # removed while looked at
            return False
    return reached


MOMENTS: dict[str, Callable[[Path], bool]] = {
    "the output folder is created": lambda out: out.is_dir(),
    "the work folder is created": lambda out: _index_work(out) is not None,
    "the dumps are spilled": _in_work("spill/*/part-*"),
    "the partitions are written": _in_work("sub/p*/*"),
    "the partitions are merged": _in_work("index"),
}


@pytest.mark.parametrize("moment", MOMENTS)
def test_ctrl_c_during_the_index_stage_leaves_nothing(tmp_path: Path, moment: str) -> None:
    out = tmp_path / "art"
    reached = MOMENTS[moment]
    process = subprocess.Popen([sys.executable, "-m", "elquery", "build", "--data", str(DEMO_DIR), "--out", str(out),
                                "--workers", "2"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while process.poll() is None and not reached(out) and time.monotonic() < deadline:
        time.sleep(0.002)
    assert process.poll() is None, f"the build ended before {moment}"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-2000:]
    assert err.splitlines()[-1] == "elquery: interrupted"
    assert _work_folders(tmp_path) == []
    # Interrupted in its first stage, the build leaves no folder; a later moment may have let the
    # index be published (the signal then stops the build after it).
    assert not out.exists() or sorted(p.name for p in out.iterdir()) == ["index"]


# --- a rerun removes what killed builds left --------------------------------------------------------


def test_a_rerun_removes_the_work_folders_of_killed_builds(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "art"
    argv = ["build", "--data", str(DEMO_DIR), "--out", str(out), "--workers", "1"]
    assert elquery(argv) == 0
    built = sorted(p.name for p in out.iterdir())
    dead = _dead_pid()
    stale = [out / f".index.building-{dead}", out / f".index.building-{dead}-old",
             out / f".surface-forms.db.building-{dead}", out / f".tagme.building-{dead}-old"]
    (stale[0] / "sub" / "p0000").mkdir(parents=True)
    (stale[0] / "sub" / "p0000" / "_0.cfs").write_bytes(b"x" * 1000)
    for folder in stale[1:]:
        folder.mkdir()
        (folder / "file").write_text("x")
    with subprocess.Popen(["sleep", "60"]) as alive:
        running = out / f".index.building-{alive.pid}"  # a build still running: left alone
        running.mkdir()
        try:
            capsys.readouterr()
            assert elquery(argv) == 0  # every stage up to date, and the leftovers go
            err = capsys.readouterr().err
            assert _work_folders(out) == [running]
            for folder in stale:
                assert f"removed {folder}, left by an earlier build (process {dead}) that did not finish" in err
        finally:
            alive.kill()
    assert sorted(p.name for p in out.iterdir()) == [running.name, *built]
