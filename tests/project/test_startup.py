"""The command's start-up, in real processes: ``--version`` and ``--help`` load the argparse layer
only (no numpy, Java or web stack), an argparse mistake is one line, and Ctrl-C at any moment of
the start-up (while the modules load) is one line "interrupted", never a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HEAVY = ("numpy", "scipy", "pyarrow", "jnius", "pyserini", "fastapi", "starlette", "pydantic", "uvicorn", "httpx",
         "ir_measures", "tqdm", "pyoxigraph", "pyspark", "matplotlib", "markdown_it")
LOADED = """
import contextlib, io, json, sys
from elquery.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""
SCRIPT = Path(sys.executable).with_name("elquery")
"""The console script users run. A signal test runs it rather than ``python -m elquery``: under
``-m``, CPython 3.11 ends a process whose start-up saw a KeyboardInterrupt inside exec'd code
(dataclasses and namedtuples build their methods so) by SIGINT after a clean exit, though the
command printed "interrupted" and returned 130."""


def loaded_packages(argv: list[str]) -> set[str]:
    """The top-level packages imported by ``elquery ARGV`` in a fresh interpreter."""
    completed = subprocess.run([sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return set(json.loads(completed.stdout))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["link", "--help"], ["rank", "--help"],
                                  ["evaluate", "rank", "--help"], ["serve", "--help"], ["build", "--help"],
                                  ["experiment", "--help"]],
                         ids=" ".join)
def test_help_and_version_load_no_heavy_module(argv: list[str]) -> None:
    loaded = loaded_packages(argv)
    assert "elquery" in loaded
    assert sorted(loaded & set(HEAVY)) == []


def test_the_check_sees_a_heavy_module() -> None:
    """The probe itself: a command that ranks would load numpy (here it stops at a missing file)."""
    completed = subprocess.run([sys.executable, "-c", LOADED.replace("main(sys.argv[1:])", "import numpy")],
                               capture_output=True, text=True, timeout=60)
    assert "numpy" in json.loads(completed.stdout)


def test_the_console_script_module_imports_nothing_before_main() -> None:
    """``elquery.cli`` (what the console script imports before it calls ``main``) loads no other
    module: everything is imported inside ``main``, where Ctrl-C is "interrupted", so the moments
    before it (where a Ctrl-C is a KeyboardInterrupt traceback) hold no elquery code but the
    package's empty ``__init__`` (a ``from typing import ...`` there was ~15 ms of them)."""
    probe = ("import sys; before = set(sys.modules); import elquery.cli; "
             "print(' '.join(sorted(set(sys.modules) - before)))")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["elquery", "elquery.cli"]


def test_version_builds_no_command() -> None:
    """``elquery --version`` answers before any command's parser is built: no elquery module but
    the package and ``elquery.cli`` is loaded (it loaded 77, every command-line module's imports)."""
    probe = ("import contextlib, io, sys; from elquery.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out: status = main(['--version'])\n"
             "print(status, out.getvalue().strip(), ' '.join(sorted(m for m in sys.modules if m.startswith('elquery'))))")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    from importlib import metadata

    assert completed.stdout.split() == ["0", "elquery", metadata.version("elquery"), "elquery", "elquery.cli"]


COMMAND_MODULES = """
import contextlib, io, json, sys
from elquery.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \\
        contextlib.suppress(SystemExit):
    main(sys.argv[1:])
print(json.dumps(sorted(name for name in sys.modules if name.endswith(".cli") or name.endswith(".evaluate_ids"))))
"""


@pytest.mark.parametrize(("argv", "modules"), [
    (["--help"], ["elquery.cli"]),
    (["lnk"], ["elquery.cli"]),
    (["link", "--help"], ["elquery.cli", "elquery.linking.cli"]),
    (["info", "--help"], ["elquery.cli", "elquery.indexing.cli",  # with `index surface-forms`, `index tagme`
                            "elquery.indexing.surface_forms.cli", "elquery.indexing.tagme.cli"]),
    (["evaluate", "elq", "--help"], ["elquery.cli", "elquery.evaluation.cli", "elquery.experiments.evaluate_ids"]),
], ids=" ".join)
def test_only_the_chosen_commands_module_is_imported(argv: list[str], modules: list[str]) -> None:
    """``elquery --help`` lists the commands by their summaries and imports no command-line module
    (they were 0.2 of its 0.3 s); a command imports its own alone."""
    completed = subprocess.run([sys.executable, "-c", COMMAND_MODULES, *argv], capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == modules


def full_parser_help(argv: list[str]) -> str:
    """What the parser of every command's registrar (none listed by summary alone) prints for ``argv``."""
    import contextlib
    import io

    from elquery.base import Parser
    from elquery.cli import registrars

    parser = Parser(prog="elquery", description="elquery: entity retrieval and entity linking in queries over a "
                    "Lucene index of DBpedia.")
    parser.add_argument("--version", action="version", version="", help="show the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in registrars():
        register(commands)
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        parser.parse_args(argv)
    return out.getvalue()


@pytest.mark.parametrize("argv", [["--help"], ["link", "--help"], ["index", "--help"], ["info", "--help"]],
                         ids=" ".join)
def test_the_help_is_the_full_parsers(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The commands listed by their summaries print what the parser of every registrar prints: each
    registrar names its command with its summary, in the order of the summaries."""
    from elquery.base import COMMAND_SUMMARIES
    from elquery.cli import REGISTRARS, main

    assert list(REGISTRARS) == list(COMMAND_SUMMARIES)
    with pytest.raises(SystemExit):
        main(argv)
    assert capsys.readouterr().out == full_parser_help(argv)


def run_elquery(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "elquery", *argv], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("argv", "expected"), [
    (["rank", "--model", "bm52"], "elquery rank: error: argument --model: unknown model 'bm52'; models are mlm, "),
    (["link", "--format", "xml", "q"], "elquery link: error: argument --format: invalid choice: 'xml' (choose from "
                                       "'elq', 'trec', 'jsonl')"),
    (["rank", "--k", "ten"], "elquery rank: error: argument --k: k must be a whole number, got 'ten'"),
    (["frobnicate"], "elquery: error: argument COMMAND: invalid choice: 'frobnicate' (choose from 'index', "),
    ([], "elquery: error: the following arguments are required: COMMAND"),
    (["evaluate", "rank", "--run", "r"], "elquery evaluate rank: error: the following arguments are required: --qrels"),
])
def test_an_argparse_mistake_is_one_line(argv: list[str], expected: str) -> None:
    completed = run_elquery(*argv)
    assert completed.returncode == 2
    assert completed.stdout == ""
    [line] = completed.stderr.splitlines()
    assert line.startswith(expected)
    command = expected.split(":")[0]
    assert line.endswith(f"; see `{command} --help`")


def test_the_model_error_names_every_valid_model() -> None:
    from elquery.retrieval.models import MODELS

    [line] = run_elquery("rank", "--model", "bm52").stderr.splitlines()
    assert ", ".join(MODELS.names()) in line


def test_version_prints_the_installed_version() -> None:
    from importlib import metadata

    completed = run_elquery("--version")
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, f"elquery {metadata.version('elquery')}\n", "")


@pytest.fixture()
def evaluation_inputs(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 <dbpedia:Rome> 1\nq2 0 <dbpedia:Paris> 1\n", encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 <dbpedia:Rome> 1 2.5 x\nq2 Q0 <dbpedia:Rome> 1 1.5 x\n", encoding="utf-8")
    return qrels, run


@pytest.mark.skipif(not SCRIPT.exists(), reason=f"no console script at {SCRIPT}")
def test_ctrl_c_while_starting_is_one_line(evaluation_inputs: tuple[Path, Path]) -> None:
    """SIGINT at moments spread over the start-up of a command that loads ir_measures, numpy and
    scipy: each run ends with "interrupted" (status 130) or, when the signal came after the work,
    with the full answer; never with a traceback. (The interpreter's own first tens of
    milliseconds, before any elquery code runs, are out of the program's reach.)"""
    qrels, run = evaluation_inputs
    argv = [str(SCRIPT), "evaluate", "rank", "--qrels", str(qrels), "--run", str(run), "--format", "json"]
    started = time.monotonic()
    complete = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    whole = time.monotonic() - started
    assert complete.returncode == 0, complete.stderr
    # The moments follow the machine's speed: a fraction of one whole run, moved earlier when a
    # signal came after the work and later when it came before any elquery code ran.
    fraction, interrupted = 0.5, 0
    for _ in range(24):
        delay = fraction * whole
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        if err.startswith("Fatal Python error: init_import_site"):
            fraction = min(0.95, fraction * 1.25)  # still in the interpreter's own start-up
        elif err:
            assert (process.returncode, out, err) == (130, "", "elquery: interrupted\n"), f"at {delay:.3f} s"
            interrupted += 1
            fraction = fraction * 0.9 if interrupted % 2 else min(0.95, fraction * 1.15)
        else:  # the signal came after the work (during the interpreter's exit: killed by it)
            assert out == complete.stdout and process.returncode in (0, -signal.SIGINT), f"at {delay:.3f} s"
            fraction *= 0.75
        if interrupted >= 4:
            break
    assert interrupted > 0
