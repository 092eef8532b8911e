"""The conventions every command shares, checked on `elquery link` in real processes over the demo
knowledge base: output files with the user's umask, `-` for standard input and output, a closed
pipe ends quietly, SIGTERM is handled like Ctrl-C with nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elquery.indexing.demo import demo_artefacts


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    cache = tmp_path_factory.mktemp("elquery-cache")
    environment = {**os.environ, "ELQUERY_CACHE": str(cache)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(cache))
        demo_artefacts()
    return environment


def elquery(args: list[str], env: dict[str, str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "elquery", *args], env=env, text=True, capture_output=True,
                          timeout=120, **kwargs)  # type: ignore[call-overload]


def test_output_files_get_the_users_umask(env: dict[str, str], tmp_path: Path) -> None:
    run = tmp_path / "run.elq"
    completed = subprocess.run(f"umask 022 && {sys.executable} -m elquery link 'new york pizza' --out {run}",
                               shell=True, env=env, text=True, capture_output=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert stat.S_IMODE(run.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["run.elq"]


def test_dash_reads_standard_input_and_writes_standard_output(env: dict[str, str], tmp_path: Path) -> None:
    completed = elquery(["link", "--queries", "-", "--out", "-", "--format", "jsonl"], env,
                        input="a\tnew york pizza manhattan\nb\tthe music man\n")
    assert completed.returncode == 0, completed.stderr
    assert [json.loads(line)["qid"] for line in completed.stdout.splitlines()] == ["a", "b"]
    assert not any(tmp_path.iterdir())


def test_a_closed_pipe_ends_quietly(env: dict[str, str], tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"q{i}\tnew york pizza manhattan\n" for i in range(3000)), encoding="utf-8")
    process = subprocess.Popen([sys.executable, "-m", "elquery", "link", "--queries", str(queries), "--format", "jsonl"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # `| head -1`
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == b""


def test_sigterm_is_handled_like_ctrl_c(env: dict[str, str], tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"q{i}\tnew york pizza manhattan the music man\n" for i in range(400_000)),
                       encoding="utf-8")
    out = tmp_path / "run.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "elquery", "link", "--queries", str(queries), "--format",
                                "jsonl", "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".run.jsonl.") for p in tmp_path.iterdir()):
        assert time.monotonic() < deadline and process.poll() is None, "linking never started writing"
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == "elquery: interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["queries.tsv"]
