"""Command line: ``elquery evaluate {elq,rank,compare}`` (and ``python -m elquery.evaluation evaluate``).

Exit status 0 on success, 2 on bad input (one ``error: path:line: reason`` line on stderr).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from elquery.base import COMMAND_SUMMARIES, ElqueryError, positive_int
from elquery.evaluation.errors import EvaluationInputError
from elquery.evaluation.interpretation import evaluate_interpretations
from elquery.evaluation.setmetrics import Aggregate
from elquery.files import check_input
from elquery.formats.elq import ElqData, read_elq
from elquery.formats.trec_qrels import read_trec_qrels
from elquery.formats.trec_run import read_trec_run

if TYPE_CHECKING:  # ir_measures, numpy and scipy load inside the commands that use them
    from elquery.evaluation.rank import RankEvaluation
    from elquery.evaluation.significance import Comparison

DEFAULT_METRICS = "map@100,p@10,ndcg@10,mrr"
_ELQ_METRIC = re.compile(r"(strict|entity|lean)\.([prf])", re.IGNORECASE)
_F_NOTE = ("F = mean of per-query F (as the ICTIR'15 tables report); "
           "F_of_means = F of the mean P and R (as the published strict script prints)")


@dataclass(frozen=True)
class Readers:
    """How the commands read their qrels and runs. :data:`AS_WRITTEN` compares the ids as the
    files write them; ``elquery evaluate --index`` (:mod:`elquery.experiments.evaluate_ids`) gives
    readers that resolve every id to its DBpedia id first (this package knows no id scheme)."""

    elq: Callable[[str], ElqData]
    trec_qrels: Callable[[str], Mapping[str, Mapping[str, int]]]
    trec_run: Callable[[str], Mapping[str, Mapping[str, float]]]


AS_WRITTEN = Readers(read_elq, read_trec_qrels, read_trec_run)


def _as_written(args: argparse.Namespace) -> Readers:
    return AS_WRITTEN


def register(subparsers: Any, options: Callable[[argparse.ArgumentParser], None] | None = None,
             readers: Callable[[argparse.Namespace], Readers] = _as_written) -> None:
    """Add the ``evaluate`` command (with sub-commands elq, rank, compare) to ``subparsers``;
    ``options`` adds more options to each sub-command, ``readers`` gives the readers of a command's
    files from its arguments (checking them, once every input file is checked, before any is read)."""
    evaluate = subparsers.add_parser(
        "evaluate", help=COMMAND_SUMMARIES["evaluate"],
        description="Score runs against qrels with the metrics of methods.md section 7.")
    commands = evaluate.add_subparsers(dest="evaluate_command", required=True,
                                       metavar="{elq,rank,compare}")

    elq = commands.add_parser(
        "elq", help="interpretation finding: strict, entity-based and lean P/R/F",
        description="Score an interpretation-finding run (ICTIR'15 Eq. 2-7), macro-averaged "
        "over the qrels queries; queries missing from the run count as having no "
        "interpretation, run queries not in the qrels are ignored. Both files are "
        "'qid<TAB>score<TAB>entity...' lines, a bare 'qid' line for a query with none. "
        + _F_NOTE + ".")
    _add_files(elq)
    _add_output(elq, per_query=True)

    rank = commands.add_parser(
        "rank", help="rank metrics (MAP, MRR, P@k, nDCG@k, ...) with trec_eval semantics",
        description="Score a TREC run against TREC qrels with ir_measures (the semantics of "
        "trec_eval -c: ties ordered by score then docid descending, unjudged = non-relevant, "
        "every query with a relevant entity evaluated, one missing from the run scoring 0; "
        "queries without a relevant entity skipped). See docs/evaluation.md.")
    _add_files(rank)
    rank.add_argument(
        "--metrics", type=_metric_list, default=DEFAULT_METRICS,
        help="comma-separated metrics: ir_measures names (AP@100, P@10, nDCG@10, RR, "
        "Success@1, ...) or aliases (map, map@k, mrr, ndcg@k, p@k, success@k); results are "
        f"keyed by the names as given (default: {DEFAULT_METRICS})")
    rank.add_argument("--skip-missing", dest="complete", action="store_false",
                      help="evaluate only the judged queries present in the run (trec_eval "
                      "without -c); by default a judged query missing from the run scores 0")
    _add_output(rank, per_query=True)

    comp = commands.add_parser(
        "compare", help="significance of the difference between two runs",
        description="Compare two runs on per-query scores: two-sided paired t-test and paired "
        "randomization test. ELQ metrics (strict.F, lean.P, entity.R, ...) read ELQ files and "
        "score every qrels query; rank metrics read TREC files and score every query with a "
        "relevant entity, a query missing from a run scoring 0 (trec_eval -c).")
    comp.add_argument("--qrels", required=True, help="qrels file (ELQ or TREC format)")
    comp.add_argument("run_a", metavar="RUN_A", help="first run")
    comp.add_argument("run_b", metavar="RUN_B", help="second run")
    comp.add_argument("--metric", required=True, type=_compare_metric,
                      help="strict.P|R|F, entity.P|R|F, lean.P|R|F, or one rank metric "
                      "(e.g. map, ndcg@10)")
    comp.add_argument("--trials", type=positive_int, default=10000,
                      help="randomization test trials (default: 10000; exact test when "
                      "2^queries <= trials)")
    comp.add_argument("--seed", type=int, default=0,
                      help="seed of the randomization test (default: 0)")
    _add_output(comp, per_query=False)
    for command, run in ((elq, _run_elq), (rank, _run_rank), (comp, _run_compare)):
        command.set_defaults(func=run, readers=readers)
        if options is not None:
            options(command)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m elquery.evaluation``."""
    parser = argparse.ArgumentParser(prog="python -m elquery.evaluation",
                                     description="elquery evaluation tools")
    register(parser.add_subparsers(dest="command", required=True, metavar="{evaluate}"))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ElqueryError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


# ---- argument helpers -------------------------------------------------------------------------

def _add_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qrels", required=True, help="ground-truth file")
    parser.add_argument("--run", required=True, help="run file")


def _add_output(parser: argparse.ArgumentParser, per_query: bool) -> None:
    if per_query:
        parser.add_argument("--per-query", action="store_true",
                            help="also report every query's scores")
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="output format (default: table)")


def _metric_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty metric name in {text!r}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a metric is named twice in {text!r}")
    for name in names:
        _rank_metric(name)
    return names


def _rank_metric(name: str) -> str:
    from elquery.evaluation.rank import parse_metric

    try:
        parse_metric(name)
    except ElqueryError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name


def _compare_metric(text: str) -> str:
    return text.strip() if _ELQ_METRIC.fullmatch(text.strip()) else _rank_metric(text.strip())




# ---- commands ---------------------------------------------------------------------------------

def _readers(args: argparse.Namespace, runs: Sequence[str]) -> Readers:
    """The readers of the command's files, once every input file is checked (it exists and is a
    file), before any is read."""
    check_input(args.qrels, "qrels file")
    for run in runs:
        check_input(run, "run file")
    return args.readers(args)


def _run_elq(args: argparse.Namespace) -> int:
    read = _readers(args, [args.run])
    qrels, run = read.elq(args.qrels), read.elq(args.run)
    _warn_unmatched(args.run, run, qrels)
    result = evaluate_interpretations(qrels, run)
    if args.format == "json":
        _print_json(result.as_dict(per_query=args.per_query))
        return 0
    if args.per_query:
        header = ["qid"] + [f"{k}.{m}" for k in ("strict", "entity", "lean") for m in "PRF"]
        rows = [[q] + [_fmt(v) for part in (s.strict, s.entity, s.lean)
                       for v in (part.p, part.r, part.f)]
                for q, s in result.per_query.items()]
        _print_table(header, rows)
        print()
    aggregates: list[tuple[str, Aggregate]] = [
        ("strict", result.strict), ("entity", result.entity), ("lean", result.lean)]
    print(f"queries: {result.queries}")
    _print_table(["", "P", "R", "F", "F_of_means"],
                 [[name, *(_fmt(v) for v in a.as_dict().values())] for name, a in aggregates])
    print(_F_NOTE)
    return 0


def _run_rank(args: argparse.Namespace) -> int:
    from elquery.evaluation.rank import relevant_entities

    read = _readers(args, [args.run])
    qrels, run = read.trec_qrels(args.qrels), read.trec_run(args.run)
    _warn_unmatched(args.run, run, qrels)
    _warn_missing(args.run, run, relevant_entities(qrels), args.complete)
    result = _rankings(args.run, qrels, run, args.metrics, args.complete)
    if args.format == "json":
        _print_json(result.as_dict(per_query=args.per_query))
        return 0
    rows = []
    if args.per_query:
        rows = [[q, *(_fmt(values[m]) for m in args.metrics)]
                for q, values in result.per_query.items()]
    rows.append(["all", *(_fmt(result.aggregate[m]) for m in args.metrics)])
    print(f"queries: {result.queries}")
    _print_table(["qid", *args.metrics], rows)
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    from elquery.evaluation.significance import compare

    read = _readers(args, [args.run_a, args.run_b])
    match = _ELQ_METRIC.fullmatch(args.metric)
    scores: list[dict[str, float]] = []
    if match:
        kind, letter = match[1].lower(), match[2].lower()
        qrels = read.elq(args.qrels)
        for path in (args.run_a, args.run_b):
            run = read.elq(path)
            _warn_unmatched(path, run, qrels)
            per_query = evaluate_interpretations(qrels, run).per_query
            scores.append({q: getattr(getattr(s, kind), letter) for q, s in per_query.items()})
    else:
        trec_qrels = read.trec_qrels(args.qrels)
        for path in (args.run_a, args.run_b):
            trec_run = read.trec_run(path)
            _warn_unmatched(path, trec_run, trec_qrels)
            result = _rankings(args.qrels, trec_qrels, trec_run, [args.metric], complete=True)
            scores.append({q: v[args.metric] for q, v in result.per_query.items()})
    if len(scores[0]) < 2:
        raise EvaluationInputError(args.qrels, None, "need at least 2 evaluated queries to "
                                   "compare runs")
    comparison = compare(scores[0], scores[1], trials=args.trials, seed=args.seed)
    _print_comparison(args, comparison)
    return 0


def _rankings(blamed_path: str, qrels: Mapping[str, Mapping[str, int]],
              run: Mapping[str, Mapping[str, float]], metrics: Sequence[str], complete: bool
              ) -> RankEvaluation:
    from elquery.evaluation.rank import evaluate_rankings

    try:
        return evaluate_rankings(qrels, run, metrics, complete=complete)
    except ElqueryError as exc:
        raise EvaluationInputError(blamed_path, None, str(exc)) from None


# ---- output -----------------------------------------------------------------------------------

def _warn_unmatched(path: str, run: Mapping[str, object], qrels: Mapping[str, object]) -> None:
    unmatched = sum(1 for q in run if q not in qrels)
    if unmatched:
        print(f"warning: {path}: {unmatched} of {len(run)} queries are not in the qrels and are "
              "ignored", file=sys.stderr)


def _warn_missing(path: str, run: Mapping[str, object], judged: Mapping[str, object],
                  complete: bool) -> None:
    missing = sum(1 for q in judged if q not in run)
    if missing:
        outcome = "score 0" if complete else "are skipped (--skip-missing)"
        print(f"warning: {path}: {missing} of {len(judged)} judged queries are missing from the "
              f"run and {outcome}", file=sys.stderr)


def _fmt(value: float) -> str:
    return f"{value:.4f}"


def _print_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    table = [list(header), *map(list, rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _print_comparison(args: argparse.Namespace, c: Comparison) -> None:
    data = {
        "metric": args.metric, "queries": c.queries,
        "run_a": {"path": args.run_a, "mean": c.mean_a},
        "run_b": {"path": args.run_b, "mean": c.mean_b},
        "difference": c.mean_a - c.mean_b,
        "t_test": {"statistic": _finite(c.t_test.statistic), "p_value": c.t_test.p_value},
        "randomization": {"p_value": c.randomization.p_value, "trials": c.trials,
                          "seed": c.seed},
    }
    if args.format == "json":
        _print_json(data)
        return
    _print_table(["", "value"], [
        ["metric", args.metric], ["queries", str(c.queries)],
        ["mean A", f"{_fmt(c.mean_a)}  {args.run_a}"],
        ["mean B", f"{_fmt(c.mean_b)}  {args.run_b}"],
        ["difference (A - B)", _fmt(c.mean_a - c.mean_b)],
        ["paired t-test", f"t = {_fmt(c.t_test.statistic)}, p = {c.t_test.p_value:.4g}"],
        ["randomization test", f"p = {c.randomization.p_value:.4g} "
                               f"({c.trials} trials, seed {c.seed})"],
    ])
