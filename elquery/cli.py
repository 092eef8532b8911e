"""The ``elquery`` command: a thin dispatcher over the packages' own command-line modules."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

Registrar = Callable[[argparse._SubParsersAction], None]


def _user_errors() -> tuple[type[BaseException], ...]:
    from elquery.evaluation.errors import EvaluationInputError
    from elquery.indexing.errors import ElqueryError

    return (ElqueryError, EvaluationInputError, OSError)


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
    except _user_errors() as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    import elquery.evaluation.cli
    import elquery.indexing.cli
    import elquery.indexing.surface_forms.cli
    import elquery.linking.cli
    import elquery.linking.experiments.cli
    import elquery.retrieval.cli

    return run(
        [
            elquery.indexing.cli.register,
            elquery.indexing.surface_forms.cli.register,
            elquery.retrieval.cli.register,
            elquery.linking.cli.register,
            elquery.linking.experiments.cli.register,
            elquery.evaluation.cli.register,
        ],
        prog="elquery",
        argv=argv,
    )
