"""``--workers N``, the one option of every command that has workers: the same default (one per
core), the same range and the same one-line message everywhere, checked before any work; the
former ``--threads`` of rank and index dbpedia still works for one release, with a one-line note."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from elquery.base import MAX_WORKERS, Parser, default_workers, workers_of
from elquery.cli import main as elquery
from elquery.cli import registrars

# Each command with workers, with what it needs besides --workers to parse.
COMMANDS = {
    "link": ["link", "a query"],
    "rank": ["rank", "--queries", "q.tsv", "--out", "run"],
    "index dbpedia": ["index", "dbpedia", "--dumps", "d", "--out", "o"],
    "index surface-forms": ["index", "surface-forms", "--dumps", "d", "--out", "o.db"],
    "index facc-counts": ["index", "facc-counts", "a.tsv", "--out", "o.tsv"],
    "build": ["build", "--data", "d", "--out", "o"],
    "experiment": ["experiment", "c.toml", "--out", "o"],
    "ltr train": ["ltr", "train", "--features", "f.tsv", "--out", "m.onnx"],
    "serve": ["serve"],  # its workers are the server processes
}
FORMER = {"rank": "--threads", "index dbpedia": "--threads"}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = Parser(prog="elquery")
    commands = parser.add_subparsers(dest="command", required=True)
    for register in registrars():
        register(commands)
    return parser.parse_args(argv)


def test_the_default_is_one_worker_per_core() -> None:
    assert default_workers() == min(os.cpu_count() or 1, MAX_WORKERS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_the_same_option_and_default(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(COMMANDS[command])
    assert args.workers is None and workers_of(args) == default_workers()
    assert workers_of(parse([*COMMANDS[command], "--workers", "3"])) == 3
    with pytest.raises(SystemExit):
        parse([*command.split(), "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--workers N" in shown
    assert f"(1 to {MAX_WORKERS}; default: one per core, {default_workers()} here)" in shown
    assert "--threads" not in shown  # a former name is not offered


@pytest.mark.parametrize("value", ["0", "-1", "257", "two", "1.5"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_value_out_of_range_is_the_same_line_everywhere_before_any_work(
        command: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # none of the paths named exists: the option is checked first
    assert elquery([*COMMANDS[command], "--workers", value]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"elquery: error: --workers must be between 1 and {MAX_WORKERS}, got {value}\n"
    assert captured.out == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", FORMER)
def test_the_former_name_works_with_a_one_line_note(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert workers_of(parse([*COMMANDS[command], FORMER[command], "2"])) == 2
    assert capsys.readouterr().err == (f"elquery {command}: warning: {FORMER[command]} is deprecated and will be "
                                       "removed in the next release; use --workers\n")
    assert elquery([*COMMANDS[command], FORMER[command], "0"]) == 2  # the same range, the same line, no note
    assert capsys.readouterr().err == f"elquery: error: --workers must be between 1 and {MAX_WORKERS}, got 0\n"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - set(FORMER)))
def test_commands_that_never_had_threads_do_not_take_it(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        elquery([*COMMANDS[command], "--threads", "2"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --threads 2" in capsys.readouterr().err


def test_rank_with_threads_ranks_as_with_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.demo import demo_artefacts

    index, _ = demo_artefacts()
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tnew york pizza\nq2\tmanhattan\n", encoding="utf-8")
    common = ["rank", "--index", str(index), "--queries", str(queries), "--k", "5"]
    assert elquery([*common, "--workers", "1", "--out", str(tmp_path / "workers.run")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert elquery([*common, "--threads", "1", "--out", str(tmp_path / "threads.run")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "elquery rank: warning: --threads is deprecated and will be removed in the next release; use --workers"
    assert not any("warning" in line for line in err[1:])
    run = (tmp_path / "workers.run").read_text()
    assert run.count("\n") == 10 and (tmp_path / "threads.run").read_text() == run


def test_index_dbpedia_with_threads_builds_as_with_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.demo import DEMO_DIR

    common = ["index", "dbpedia", "--dumps", str(DEMO_DIR), "--no-ltr-fields"]
    assert elquery([*common, "--workers", "1", "--out", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    assert elquery([*common, "--threads", "1", "--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().err.startswith("elquery index dbpedia: warning: --threads is deprecated")
    assert (tmp_path / "a" / "entity_ids.txt").read_bytes() == (tmp_path / "b" / "entity_ids.txt").read_bytes()
