"""What a killed command leaves (issue 31.8) is removed by the next one writing the same output:
the temporary files of :func:`elquery.files.atomic_output` (``.NAME.PID-XXXXXXXX.tmp``, left
when ``rank`` or ``link`` is killed by SIGKILL mid-output) and a build's work folders, ``-old``
ones included (``.idx.building-PID-old``, left when ``index dbpedia --overwrite`` is killed at its
replace step). Those of a process still running are left alone. They used to survive every
later run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elquery.files import atomic_output, process_alive
from elquery.indexing.build_outputs import remove_stale_work


def dead_pid() -> int:
    finished = subprocess.Popen(["true"])
    finished.wait()
    assert not process_alive(finished.pid)
    return finished.pid


def test_the_next_output_removes_the_temporaries_of_dead_processes(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out, dead = tmp_path / "rank.out", dead_pid()
    stale = [tmp_path / f".rank.out.{dead}-0123abcd.tmp", tmp_path / f".rank.out.{2**40}-deadbeef.tmp"]
    others = [tmp_path / f".link.out.{dead}-0123abcd.tmp",  # another output's: its own command removes it
              tmp_path / f".rank.out.{dead}-old.tmp", tmp_path / "rank.out.tmp"]  # not atomic_output's names
    with subprocess.Popen(["sleep", "60"]) as alive:
        running = tmp_path / f".rank.out.{alive.pid}-00ff00ff.tmp"  # a command still writing: left alone
        try:
            for path in [*stale, *others, running]:
                path.write_text("half a run")
            with atomic_output(out) as stream:
                stream.write("q1 Q0 e 1 1.0 run\n")
        finally:
            alive.kill()
    assert out.read_text() == "q1 Q0 e 1 1.0 run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in [out, *others, running])
    err = capsys.readouterr().err
    for path in stale:
        assert f"removed {path}, left by an earlier command (process {path.name.split('.')[3].split('-')[0]}) " \
               "that did not finish" in err


def test_a_command_killed_mid_output_leaves_a_temporary_that_the_next_run_removes(tmp_path: Path) -> None:
    """The real thing: ``elquery link --queries`` killed by SIGKILL while its output is being
    written (a query file read from a pipe that stays open), then run again."""
    queries, out = tmp_path / "queries.tsv", tmp_path / "link.out"
    queries.write_text("a\tnew york pizza\nb\trome\n", encoding="utf-8")
    script = ("import sys, time\nfrom elquery.files import atomic_output\n"
              "with atomic_output(sys.argv[1]) as out:\n    out.write('half'); out.flush(); time.sleep(60)\n")
    writer = subprocess.Popen([sys.executable, "-c", script, str(out)])
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".link.out.*.tmp")):
        assert time.monotonic() < deadline and writer.poll() is None
        time.sleep(0.05)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    [left] = tmp_path.glob(".link.out.*.tmp")
    done = subprocess.run([sys.executable, "-m", "elquery", "link", "--queries", str(queries), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"removed {left}, left by an earlier command (process {writer.pid}) that did not finish" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.out", "queries.tsv"]
    assert {line.split("\t")[0] for line in out.read_text().splitlines()} == {"a", "b"}


def test_a_builds_old_work_folder_of_a_dead_process_goes_and_a_running_ones_stays(tmp_path: Path) -> None:
    out, dead = tmp_path / "idx", dead_pid()
    out.mkdir()
    stale = [tmp_path / f".idx.building-{dead}-old", tmp_path / f".idx.building-{dead}"]
    for folder in stale:
        (folder / "index").mkdir(parents=True)
    with subprocess.Popen(["sleep", "60"]) as alive:
        running = tmp_path / f".idx.building-{alive.pid}-old"
        running.mkdir()
        try:
            lines = remove_stale_work(out)
        finally:
            alive.kill()
    assert sorted(lines) == sorted(f"removed {folder}, left by an earlier build (process {dead}) that did not finish"
                                   for folder in stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, "idx"])


def test_a_model_write_removes_the_temporaries_of_dead_processes_and_leaves_none_of_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``elquery ltr train``'s model file is written by write_bytes_atomically, the byte twin of
    atomic_output: a killed writer's temporary is removed by the next write; a failed write
    leaves neither the model nor a temporary."""
    from elquery.files import write_bytes_atomically

    model, dead = tmp_path / "m.onnx", dead_pid()
    stale = tmp_path / f".m.onnx.{dead}-0123abcd.tmp"
    stale.write_bytes(b"half a model")
    write_bytes_atomically(model, b"\x08\x07onnx")
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"] and model.read_bytes() == b"\x08\x07onnx"
    assert f"removed {stale}, left by an earlier command (process {dead})" in capsys.readouterr().err
    with pytest.raises(TypeError):
        write_bytes_atomically(tmp_path / "other.onnx", "text, not bytes")  # type: ignore[arg-type]
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]
