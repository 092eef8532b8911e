"""The ``elquery`` command: a thin dispatcher, on top of every layer, over their command-line modules.

Start-up imports only the chosen command's command-line module (``elquery --help`` lists the
commands by their summaries and imports none), and each command-line module imports what its
command needs inside the command (tests/project/test_startup.py keeps ``--version`` and ``--help``
free of numpy, Java and the web stack). This module imports nothing when it loads (``TYPE_CHECKING``
is mypy's, not ``typing``'s): every import happens in :func:`main`, where Ctrl-C is one line."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from elquery.base import Registrar


REGISTRARS: dict[str, tuple[str, str]] = {
    "index": ("elquery.indexing.cli", "register"),
    "build": ("elquery.indexing.cli", "register_build"),
    "info": ("elquery.indexing.cli", "register_build"),
    "surface-forms": ("elquery.indexing.surface_forms.cli", "register"),
    "rank": ("elquery.retrieval.cli", "register"),
    "link": ("elquery.linking.cli", "register"),
    "ltr": ("elquery.linking.ltr.cli", "register"),
    "experiment": ("elquery.experiments.cli", "register"),
    "evaluate": ("elquery.experiments.evaluate_ids", "register"),  # elquery.evaluation.cli's, with --index
    "serve": ("elquery.serve.cli", "register"),
    "mcp": ("elquery.mcp.cli", "register"),
    "data": ("elquery.data.cli", "register"),
}
"""Each command (:data:`elquery.base.COMMAND_SUMMARIES`, in that order) and the registrar that
adds it: (command-line module, function)."""


def registrars(command: str | None = None) -> list[Registrar]:
    """The argparse registrars of ``command`` (its module's, then one that lists every other
    command by its summary), or, with no command, of every command in ``elquery --help``'s order."""
    from importlib import import_module

    if command is None:
        places = dict.fromkeys(REGISTRARS.values())
        return [getattr(import_module(module), name) for module, name in places]
    module, name = REGISTRARS[command]
    return [getattr(import_module(module), name), _listed]


def _listed(commands: argparse._SubParsersAction) -> None:
    """Every command not yet added, by its summary alone: what ``elquery --help`` and a mistyped
    command's message show, without importing the command-line modules."""
    from elquery.base import COMMAND_SUMMARIES

    for command, summary in COMMAND_SUMMARIES.items():
        if command not in commands.choices:
            commands.add_parser(command, help=summary)


def main(argv: Sequence[str] | None = None) -> int:
    try:  # Ctrl-C in the first moments, while the modules load, is "interrupted" too
        arguments = list(sys.argv[1:] if argv is None else argv)
        if arguments == ["--version"]:
            return _version()
        from elquery.base import run

        # only the chosen command's module is imported (start-up); with none, only the listing
        commands = registrars(arguments[0]) if arguments and arguments[0] in REGISTRARS else [_listed]
    except KeyboardInterrupt:
        print("elquery: interrupted", file=sys.stderr)
        return 130
    return run(commands, prog="elquery", argv=argv)


def _version() -> int:
    """``elquery --version`` alone, answered before any command's parser is built (their modules
    are most of the start-up): ``elquery.base``'s ``--version`` action prints the same line."""
    from importlib import metadata

    print(f"elquery {metadata.version('elquery')}")
    return 0
