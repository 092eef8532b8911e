"""Rank metrics for semantic mapping and entity retrieval (methods.md section 7), computed by
ir_measures with trec_eval semantics.

Semantics, as ``trec_eval -c -q`` (and ir_measures):

- a run's documents are ordered by score descending, ties by docid descending (the rank column
  is ignored); unjudged documents count as non-relevant; relevant means relevance >= 1 unless a
  measure says otherwise (e.g. ``AP(rel=2)``); nDCG uses the graded relevance as gain;
- every judged query (one with a relevant entity in the qrels) is evaluated; a judged query
  missing from the run is evaluated as an empty ranking (every measure's default, 0 for the
  ranking measures), so a system cannot gain by answering nothing for hard queries; the
  aggregate is the mean over the judged queries (for count measures such as NumRet, the sum);
- queries whose qrels hold no relevant entity are skipped (methods.md section 7), and run
  queries absent from the qrels are ignored;
- ``complete=False`` (trec_eval without ``-c``) is the explicit opt-out: only judged queries
  present in the run are evaluated.

Every measure pytrec_eval (trec_eval's own code) computes goes through it; any other ir_measures
measure goes through ir_measures' default provider.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ir_measures
from ir_measures import Measure

from elquery.base import ElqueryError

# Common lowercase names -> ir_measures names; "@k" is carried over.
_ALIASES = {
    "map": "AP", "ap": "AP", "mrr": "RR", "rr": "RR", "ndcg": "nDCG", "p": "P",
    "precision": "P", "r": "R", "recall": "R", "success": "Success", "s": "Success",
}
_ALIAS_RE = re.compile(r"(?P<base>[a-z]+)(?:@(?P<cutoff>[1-9][0-9]*))?")


@dataclass(frozen=True)
class RankEvaluation:
    """Aggregate and per-query values, keyed by the metric names as given."""

    queries: int
    aggregate: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]

    def as_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"queries": self.queries, "aggregate": dict(self.aggregate)}
        if per_query:
            out["per_query"] = {q: dict(values) for q, values in self.per_query.items()}
        return out


def parse_metric(name: str) -> Measure:
    """Parse an ir_measures name (``AP@100``, ``P@10``, ``nDCG@10``, ``RR``, ``Success@1``, ...)
    or a common alias, case-insensitive: ``map``, ``map@k``, ``mrr``, ``mrr@k``, ``ndcg``,
    ``ndcg@k``, ``p@k``, ``r@k``/``recall@k``, ``success@k``/``s@k``."""
    match = _ALIAS_RE.fullmatch(name.strip().lower())
    if match and match["base"] in _ALIASES:
        base = _ALIASES[match["base"]]
        if match["cutoff"] is None and base in ("P", "R", "Success"):
            raise ElqueryError(f"metric {name!r} needs a cutoff, e.g. {name.strip()}@10")
        name = base if match["cutoff"] is None else f"{base}@{match['cutoff']}"
    try:
        return ir_measures.parse_measure(name.strip())
    except (ValueError, NameError, TypeError, SyntaxError, AttributeError):
        raise ElqueryError(
            f"unknown metric {name!r}: use an ir_measures name (AP@100, P@10, nDCG@10, RR, "
            "Success@1) or an alias (map, map@k, mrr, ndcg@k, p@k, success@k)") from None


def relevant_entities(qrels: Mapping[str, Mapping[str, int]], level: int = 1
                      ) -> dict[str, frozenset[str]]:
    """Per query, the entities judged with relevance >= level (queries with none are left out)."""
    out = {q: frozenset(d for d, rel in judged.items() if rel >= level)
           for q, judged in qrels.items()}
    return {q: docs for q, docs in out.items() if docs}


def evaluate_rankings(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str],
    complete: bool = True,
) -> RankEvaluation:
    """Evaluate a run with the named metrics (see the module docstring for the semantics)."""
    if len(set(metrics)) != len(metrics):
        raise ElqueryError("a metric is named twice")
    measures = {name: parse_metric(name) for name in metrics}
    judged = relevant_entities(qrels)
    evaluated = sorted(q for q in judged if complete or q in run)
    if not evaluated:
        raise ElqueryError("the qrels hold no query with a relevant entity" if complete or not judged
                         else "no query of the run has a relevant entity in the qrels")
    used_qrels = {q: dict(qrels[q]) for q in evaluated}
    used_run = {q: dict(run[q]) for q in evaluated if q in run}
    values = _per_query(list(set(measures.values())), used_qrels, used_run)
    per_query = {q: {name: values[q][m] for name, m in measures.items()} for q in evaluated}
    aggregate = {}
    for name, measure in measures.items():
        aggregator = measure.aggregator()
        for q in evaluated:
            aggregator.add(values[q][measure])
        aggregate[name] = float(aggregator.result())
    return RankEvaluation(len(evaluated), aggregate, per_query)


def _per_query(measures: list[Measure], qrels: dict[str, dict[str, int]],
               run: dict[str, dict[str, float]]) -> dict[str, dict[Measure, float]]:
    trec = [m for m in measures if ir_measures.pytrec_eval.supports(m)]
    other = [m for m in measures if m not in trec]
    values: dict[str, dict[Measure, float]] = {q: {} for q in qrels}
    metrics: list[ir_measures.Metric] = []
    if trec:
        metrics += ir_measures.pytrec_eval.iter_calc(trec, qrels, run)
    if other:
        metrics += ir_measures.iter_calc(other, qrels, run)
    for metric in metrics:
        values[metric.query_id][metric.measure] = float(metric.value)
    return values
