"""The bottom of the stack, importable by every layer: the project-wide error type for user
mistakes and the command-line runner that turns one into a single line on stderr."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

Registrar = Callable[[argparse._SubParsersAction], None]

COMMAND_SUMMARIES: dict[str, str] = {
    "index": "build and inspect indexes",
    "build": "build every artefact (index, surface forms, TAGME) from the downloaded data",
    "info": "print the provenance record of an artefact or an artefacts folder",
    "surface-forms": "query a surface-form store",
    "rank": "rank entities for a file of queries into a TREC run",
    "link": "link entities in queries (interpretations and entity ranking)",
    "ltr": "learning to rank for entity linking: features and models (methods.md §9)",
    "experiment": "parameter sweeps, cross-validation, significance and tables from a config",
    "evaluate": "score runs against qrels (interpretations, rankings, significance)",
    "serve": "run the linking and retrieval service (JSON API, TAGME-compatible /tag, web page)",
    "mcp": "run the MCP server: the service's linking, ranking, lookups and evaluation as tools for agents",
    "data": "download and check the datasets elquery uses (DBpedia 2015-10, FACC1, test collections)",
}
"""Every ``elquery`` command's one-line summary, in the order ``elquery --help`` lists them: the
help its registrar gives it, here so that the dispatcher lists the commands without importing
their modules (:mod:`elquery.cli`)."""


class ElqueryError(Exception):
    """A problem the user can fix; its message is one line, e.g. ``path:line: reason``."""


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block, SIGTERM (kill, a timeout, a job scheduler) raises KeyboardInterrupt in
    the main thread, like Ctrl-C, so every clean-up on the way out runs; elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def one_line(exc: BaseException) -> str:
    """A user error as one line: an OSError names its path (``path: No such file or directory``)
    instead of Python's ``[Errno 2] ...``."""
    if isinstance(exc, OSError) and not isinstance(exc, ElqueryError) and exc.strerror:
        where = exc.filename if exc.filename is not None else ""
        return f"{where}: {exc.strerror}" if where else exc.strerror
    return " ".join(str(exc).split())


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


MAX_WORKERS = 256
"""The most worker processes a batch takes (``--workers``, ``workers=``)."""


def default_workers() -> int:
    """The workers a batch gets when none are asked for: one per core (``os.cpu_count()``, at
    most :data:`MAX_WORKERS`); each batch still starts no more than its size pays for."""
    return min(os.cpu_count() or 1, MAX_WORKERS)


def check_workers(workers: int | str) -> int:
    """``workers`` as a count of worker processes, 1 to :data:`MAX_WORKERS`, else the one-line
    error that every command (it is the type of ``--workers``) and every API function gives.
    As an argparse type it raises :class:`ElqueryError` rather than an argparse error, so the
    message is the same from the command line and from the API."""
    count = _integer(workers)
    if count is None or not 1 <= count <= MAX_WORKERS:
        raise ElqueryError(f"--workers must be between 1 and {MAX_WORKERS}, got {workers}")
    return count


def _integer(value: object) -> int | None:
    """An int, or the text of one; else None (a float, a bool, other text)."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _DeprecatedWorkers(argparse.Action):
    """A former name of ``--workers N`` (``--threads N`` of rank and index dbpedia), kept for one
    release: the same value, and a one-line note on stderr."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is deprecated and will be removed in the next release; "
              "use --workers", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_workers_argument(parser: argparse.ArgumentParser, what: str, former: str | None = None) -> None:
    """``--workers N`` (``what`` the N workers do), the one option of every command that has
    workers, with the one default (:func:`default_workers`, applied by :func:`workers_of`) and
    range (:func:`check_workers`); ``former`` is the option's deprecated former name, if it had one."""
    parser.add_argument("--workers", type=check_workers, default=None, metavar="N",
                        help=f"{what} (1 to {MAX_WORKERS}; default: one per core, {default_workers()} here)")
    if former is not None:
        parser.add_argument(former, type=check_workers, dest="workers", action=_DeprecatedWorkers,
                            help=argparse.SUPPRESS)


def workers_of(args: argparse.Namespace) -> int:
    """The workers the command line asks for: ``--workers N``, else :func:`default_workers`."""
    return default_workers() if args.workers is None else int(args.workers)


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` (PEP 562) over its public names, ``{module: names}``: a module
    is imported when one of its names is first used, so importing the package (as each command's
    start-up does for its command-line module) loads none of them."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(where[name]), name)

    return __getattr__


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line, exit status 2: the error (with the valid
    choices, where there are some) and where the help is, without the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}; see `{self.prog} --help`\n")


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib import metadata

        print(f"{parser.prog} {metadata.version('elquery')}")
        parser.exit()


def interrupted(prog: str) -> int:
    """Ctrl-C or SIGTERM: one line, exit status 130."""
    print(f"{prog}: interrupted", file=sys.stderr)
    return 130


def run(registrars: Sequence[Registrar], prog: str, argv: Sequence[str] | None = None) -> int:
    """Build a parser from ``registrars``, run the chosen command, and turn a user error into one
    line on stderr and exit status 2 (no traceback; an argparse mistake too, :class:`Parser`).
    Ctrl-C and SIGTERM end it alike, at any moment (while the command's modules are still being
    imported too): one line "interrupted", exit status 130, the command's own clean-up having run
    (both raise KeyboardInterrupt). Output into a closed pipe (``| head``) ends quietly with status
    141 (128 + SIGPIPE), as Unix tools do."""
    try:
        with sigterm_interrupts():
            parser = Parser(
                prog=prog,
                description="elquery: entity retrieval and entity linking in queries over a Lucene index of DBpedia.",
            )
            parser.add_argument("--version", action=_Version)
            commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
            for register in registrars:
                register(commands)
            args = parser.parse_args(argv)
            return int(args.func(args) or 0)
    except (ElqueryError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _quiet_broken_pipe()
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted(prog)
    except Exception as exc:
        if type(exc).__name__ == "JavaException" and "OutOfMemoryError" in str(exc):
            heap = os.environ.get("ELQUERY_JVM_HEAP", "2g")
            print(f"{prog}: error: out of Java heap (ELQUERY_JVM_HEAP={heap}): raise ELQUERY_JVM_HEAP", file=sys.stderr)
            return 2
        raise


def _quiet_broken_pipe() -> int:
    """The reader of standard output has gone: send what is left to /dev/null (so the interpreter's
    own flush at exit is quiet) and end with 128 + SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + signal.SIGPIPE
