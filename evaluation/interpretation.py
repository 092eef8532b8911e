"""Interpretation-finding metrics: strict (Eq. 2-3), entity-based (Eq. 4-5) and lean (Eq. 6),
per query with F by Eq. 7, macro-averaged over the ground-truth queries (methods.md section 7).

An interpretation is a set of entity ids; a query's output is a set of interpretations.
Queries missing from the run count as having no interpretation; queries not in the ground truth
are ignored.

Lean F follows methods.md: Eq. 7 applied to the per-query lean P and R. (The published
``evaluator_lean.py`` instead averages the per-query strict and entity-based F; that figure is
``(strict.F + entity.F) / 2`` of the results reported here.)
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from elquery.evaluation.setmetrics import PRF, Aggregate, f_measure, macro_average, set_prf
from elquery.formats.elq import EntitySet


@dataclass(frozen=True)
class QueryScores:
    """Strict, entity-based and lean scores of one query."""

    strict: PRF
    entity: PRF
    lean: PRF

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {"strict": self.strict.as_dict(), "entity": self.entity.as_dict(),
                "lean": self.lean.as_dict()}


@dataclass(frozen=True)
class InterpretationEvaluation:
    """Aggregate and per-query results of an interpretation-finding run."""

    queries: int
    strict: Aggregate
    entity: Aggregate
    lean: Aggregate
    per_query: Mapping[str, QueryScores]

    def as_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"queries": self.queries, "strict": self.strict.as_dict(),
                               "lean": self.lean.as_dict(), "entity": self.entity.as_dict()}
        if per_query:
            out["per_query"] = {q: s.as_dict() for q, s in self.per_query.items()}
        return out


def strict_scores(system: Set[EntitySet], gold: Set[EntitySet]) -> PRF:
    """Eq. 2-3: an interpretation counts only if its entity set equals a ground-truth set."""
    return set_prf(system, gold)


def entity_scores(system: Set[EntitySet], gold: Set[EntitySet]) -> PRF:
    """Eq. 4-5: Eq. 2-3 on the union of the system's vs the ground truth's interpretations."""
    return set_prf(frozenset().union(*system), frozenset().union(*gold))


def lean_scores(system: Set[EntitySet], gold: Set[EntitySet]) -> PRF:
    """Eq. 6 (P and R are the means of strict and entity-based P and R), F by Eq. 7."""
    return _lean(strict_scores(system, gold), entity_scores(system, gold))


def _lean(strict: PRF, entity: PRF) -> PRF:
    p = (strict.p + entity.p) / 2
    r = (strict.r + entity.r) / 2
    return PRF(p, r, f_measure(p, r))


def score_query(system: Set[EntitySet], gold: Set[EntitySet]) -> QueryScores:
    """All three scores of one query."""
    for interpretation in (*system, *gold):
        if not interpretation:
            raise ValueError("an interpretation must hold at least one entity")
    strict = strict_scores(system, gold)
    entity = entity_scores(system, gold)
    return QueryScores(strict, entity, _lean(strict, entity))


def evaluate_interpretations(
    qrels: Mapping[str, Set[EntitySet]], run: Mapping[str, Set[EntitySet]]
) -> InterpretationEvaluation:
    """Score every ground-truth query and macro-average (methods.md section 7)."""
    per_query = {q: score_query(run.get(q, frozenset()), qrels[q]) for q in sorted(qrels)}
    scores = list(per_query.values())
    return InterpretationEvaluation(
        queries=len(scores),
        strict=macro_average([s.strict for s in scores]),
        entity=macro_average([s.entity for s in scores]),
        lean=macro_average([s.lean for s in scores]),
        per_query=per_query,
    )
