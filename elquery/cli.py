"""The ``elquery`` command: a thin dispatcher, on top of every layer, over their command-line modules."""

from __future__ import annotations

from collections.abc import Sequence

from elquery.base import run


def main(argv: Sequence[str] | None = None) -> int:
    import elquery.data.cli
    import elquery.evaluation.cli
    import elquery.indexing.cli
    import elquery.indexing.surface_forms.cli
    import elquery.linking.cli
    import elquery.experiments.cli
    import elquery.retrieval.cli
    import elquery.serve.cli

    return run(
        [
            elquery.indexing.cli.register,
            elquery.indexing.cli.register_build,
            elquery.indexing.surface_forms.cli.register,
            elquery.retrieval.cli.register,
            elquery.linking.cli.register,
            elquery.experiments.cli.register,
            elquery.evaluation.cli.register,
            elquery.serve.cli.register,
            elquery.data.cli.register,
        ],
        prog="elquery",
        argv=argv,
    )
