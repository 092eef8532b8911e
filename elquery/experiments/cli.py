"""Command line: ``elquery experiment CONFIG --out DIR [--workers N]`` (methods.md §7-8): entity
linking in queries and entity retrieval (DBpedia-Entity v2) experiments."""

from __future__ import annotations

import argparse
from typing import Any

from elquery.base import COMMAND_SUMMARIES, ElqueryError, add_workers_argument, workers_of
from elquery.indexing.artefacts import add_artefacts_argument


def register(subparsers: Any) -> None:
    """Add the ``experiment`` command to ``subparsers``."""
    parser = subparsers.add_parser(
        "experiment", help=COMMAND_SUMMARIES["experiment"],
        description="Run an experiment description (TOML): sweep each method's parameters (linking: c, s; "
        "entity retrieval: any model of `elquery rank` with a grid of its --param values), "
        "choose them by cross-validation on the training folds (session folds, leave-one-out, or a "
        "collection's fold files such as DBpedia-Entity v2's), evaluate the test-fold results "
        "(entity retrieval: NDCG@10, NDCG@100, MAP@100 per query category and in total), "
        "test significance against the baseline (paired t-test) and write every run file, the "
        "chosen parameters per fold, per-query scores and Markdown tables in the layout of the "
        "ICTIR'15 tables and of the DBpedia-Entity v2 paper into DIR, with the tuned thresholds of the linking "
        "methods in DIR/params.json (for `elquery link --params` and `elquery serve --params`). Every input of "
        "every method is checked before the first run; a problem is one line and nothing is written. "
        "Finished runs are reused when "
        "re-run (content-hashed by their inputs and parameters). Ready configs: "
        "elquery/experiments/configs/ (with --check: the figures each must reproduce).")
    parser.add_argument("config", metavar="CONFIG", help="experiment description (TOML)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    add_artefacts_argument(parser, "the config's index, surface_forms and tagme (which it replaces)")
    add_workers_argument(parser, "linking and ranking processes (the figures do not depend on it)")
    parser.add_argument("--check", action="store_true",
                        help="compare the figures with the config's [expected] ones: one OK/FAIL line each, "
                        "exit status 1 on a FAIL (a reproduction check, like pyserini's regressions)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from elquery.experiments.config import load_config
    from elquery.experiments.runner import run_experiment

    config = load_config(args.config, args.artefacts)
    if args.check and not config.expected:
        raise ElqueryError(f"{args.config}: no [expected] figures to check")
    result = run_experiment(config, args.out, workers=workers_of(args))
    print(result.report, end="")
    if not args.check:
        return 0
    checked = result.check()
    for figure in checked:
        print(figure.line())
    return 0 if all(figure.ok for figure in checked) else 1
