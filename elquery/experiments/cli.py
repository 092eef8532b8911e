"""Command line: ``elquery experiment CONFIG --out DIR [--workers N]`` (methods.md §7-8)."""

from __future__ import annotations

import argparse
from typing import Any

from elquery.evaluation.cli import positive_int


def register(subparsers: Any) -> None:
    """Add the ``experiment`` command to ``subparsers``."""
    parser = subparsers.add_parser(
        "experiment", help="parameter sweeps, cross-validation, significance and tables from a config",
        description="Run an experiment description (TOML): sweep each method's parameters (c, s), "
        "choose them by cross-validation on the training folds, evaluate the test-fold results, "
        "test significance against the baseline (paired t-test) and write every run file, the "
        "chosen parameters per fold, per-query scores and Markdown tables in the layout of the "
        "ICTIR'15 tables into DIR. Finished runs are reused when re-run (content-hashed by their "
        "inputs and parameters). Ready configs: elquery/experiments/configs/{y-erd,erd-dev}.toml.")
    parser.add_argument("config", metavar="CONFIG", help="experiment description (TOML)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="linking processes (default: 1)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from elquery.experiments.runner import run_experiment

    result = run_experiment(args.config, args.out, workers=args.workers)
    print(result.report, end="")
    return 0
