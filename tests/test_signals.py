"""Signals and processes, with real processes and real signals: a killed parent leaves no worker
behind, Ctrl-C stops a parallel ranking within seconds, and nothing partial is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elquery.indexing.build_index import build_dbpedia_index
from conftest import child_processes, gone  # tests/conftest.py, on the path as pytest loads it


def children(pid: int) -> list[int]:
    """Every live descendant of ``pid``."""
    found, frontier = [], [pid]
    while frontier:
        below = child_processes(frontier.pop(), resource_tracker=True)
        found += below
        frontier += below
    return found


@pytest.fixture(scope="module")
def sample_index(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("signals") / "index"
    build_dbpedia_index([dbpedia_sample], out, workers=1)
    return out


@pytest.fixture()
def many_queries(tmp_path: Path) -> Path:
    path = tmp_path / "queries.json"
    path.write_text(json.dumps({f"q{i}": f"airline city {i % 50} of rome" for i in range(100_000)}))
    return path


ENDS_WITHIN = 15
"""Seconds the processes of a stopped command have to end (the multiprocessing resource tracker,
a child too, exits on its own shortly after its parent)."""


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "elquery", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for_workers(process: subprocess.Popen[str], count: int) -> list[int]:
    deadline = time.monotonic() + 90
    while len(workers := children(process.pid)) < count:
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read() if process.stderr else ""
        time.sleep(0.1)
    time.sleep(2)  # the workers are up and working
    return children(process.pid)


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_rank_leaves_no_worker(sample_index: Path, many_queries: Path, tmp_path: Path,
                                        kill: signal.Signals) -> None:
    process = _start(["rank", "--index", str(sample_index), "--queries", str(many_queries), "--workers", "2",
                      "--out", str(tmp_path / "run")], tmp_path)
    workers = _wait_for_workers(process, 2)
    os.kill(process.pid, kill)
    process.wait(timeout=30)
    assert gone(workers, ENDS_WITHIN)
    if kill == signal.SIGTERM:  # handled like Ctrl-C: nothing partial left (SIGKILL cannot be handled)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["queries.json"]


def test_ctrl_c_stops_a_parallel_ranking_within_seconds(sample_index: Path, many_queries: Path,
                                                          tmp_path: Path) -> None:
    process = _start(["rank", "--index", str(sample_index), "--queries", str(many_queries), "--workers", "2",
                      "--out", str(tmp_path / "run")], tmp_path)
    workers = _wait_for_workers(process, 2)
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    started = time.monotonic()
    _, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 5
    assert process.returncode == 130, err
    assert "elquery: interrupted" in err.splitlines()
    assert "Traceback" not in err
    assert gone(workers, 5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["queries.json"]


def test_a_killed_link_leaves_no_worker(tmp_path: Path, many_queries: Path) -> None:
    process = _start(["link", "--queries", str(many_queries), "--workers", "2", "--out", str(tmp_path / "run")],
                     tmp_path)
    workers = _wait_for_workers(process, 2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert gone(workers, ENDS_WITHIN)
