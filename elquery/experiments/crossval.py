"""Parameter selection by cross-validation (methods.md §7): in each fold, the setting with the
best mean objective over the *training* queries is chosen and applied to the test queries; the
test-fold outputs are concatenated, so every query is answered by a setting chosen without it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Generic, TypeVar

from elquery.experiments.folds import Fold

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class FoldChoice(Generic[K]):
    """The setting chosen in one fold and its mean objective on the training queries (NaN when
    no training query is scored)."""

    fold: Fold
    setting: K
    train_score: float


def choose(objective: Mapping[K, Mapping[str, float]], train: Sequence[str]) -> tuple[K, float]:
    """The setting with the highest mean objective over the ``train`` queries it scores (queries
    absent from a setting's scores, e.g. without a relevant entity, are skipped). Ties go to
    the setting listed first; a setting scoring no training query ranks last."""
    if not objective:
        raise ValueError("no setting to choose from")
    best: tuple[K, float] | None = None
    for setting, scores in objective.items():
        values = [scores[q] for q in train if q in scores]
        mean = fmean(values) if values else math.nan
        if best is None or (not math.isnan(mean) and (math.isnan(best[1]) or mean > best[1])):
            best = (setting, mean)
    assert best is not None
    return best


def cross_validate(folds: Sequence[Fold], objective: Mapping[K, Mapping[str, float]]
                   ) -> list[FoldChoice[K]]:
    """One :class:`FoldChoice` per fold, chosen on that fold's training queries only."""
    return [FoldChoice(fold, *choose(objective, fold.train)) for fold in folds]


def combine(outputs: Mapping[K, Mapping[str, V]], choices: Sequence[FoldChoice[K]]) -> dict[str, V]:
    """Each test query's output under the setting chosen for its fold (queries a setting left
    unanswered stay absent), in query id order."""
    combined: dict[str, V] = {}
    for choice in choices:
        chosen = outputs[choice.setting]
        for qid in choice.fold.test:
            if qid in chosen:
                combined[qid] = chosen[qid]
    return dict(sorted(combined.items()))
