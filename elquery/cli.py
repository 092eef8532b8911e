"""The ``elquery`` command: a thin dispatcher, on top of every layer, over their command-line modules.

Start-up imports only the argparse layer: each command-line module imports what its command
needs inside the command (tests/project/test_startup.py keeps ``--version`` and ``--help`` free
of numpy, Java and the web stack). This module imports nothing when it loads (``TYPE_CHECKING``
is mypy's, not ``typing``'s): every import happens in :func:`main`, where Ctrl-C is one line."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from elquery.base import Registrar


def registrars() -> list[Registrar]:
    """Every command's argparse registrar, in the order ``elquery --help`` lists them."""
    import elquery.data.cli
    import elquery.experiments.cli
    import elquery.experiments.evaluate_ids
    import elquery.indexing.cli
    import elquery.indexing.surface_forms.cli
    import elquery.linking.cli
    import elquery.linking.ltr.cli
    import elquery.mcp.cli
    import elquery.retrieval.cli
    import elquery.serve.cli

    return [
        elquery.indexing.cli.register,
        elquery.indexing.cli.register_build,
        elquery.indexing.surface_forms.cli.register,
        elquery.retrieval.cli.register,
        elquery.linking.cli.register,
        elquery.linking.ltr.cli.register,
        elquery.experiments.cli.register,
        elquery.experiments.evaluate_ids.register,  # elquery.evaluation.cli's, with --index
        elquery.serve.cli.register,
        elquery.mcp.cli.register,
        elquery.data.cli.register,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    try:  # Ctrl-C in the first moments, while the modules load, is "interrupted" too
        if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
            return _version()
        from elquery.base import run

        commands = registrars()
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
