"""The bottom of the stack, importable by every layer: the project-wide error type for user
mistakes and the command-line runner that turns one into a single line on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

Registrar = Callable[[argparse._SubParsersAction], None]


class ElqueryError(Exception):
    """A problem the user can fix; its message is one line, e.g. ``path:line: reason``."""


def run(registrars: Sequence[Registrar], prog: str, argv: Sequence[str] | None = None) -> int:
    """Build a parser from ``registrars``, run the chosen command, and turn a user error into one
    line on stderr and exit status 2 (no traceback)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="elquery: entity retrieval and entity linking in queries over a Lucene index of DBpedia.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in registrars:
        register(commands)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ElqueryError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
