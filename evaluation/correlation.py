"""Relatedness correlation (EntEval entity similarity; methods.md section 7): Spearman's rank
correlation between a relatedness measure and gold scores, via scipy."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from scipy import stats


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho, its two-sided p-value and the number of pairs (rho is nan when one side
    is constant)."""

    rho: float
    p_value: float
    n: int


def spearman(gold: Mapping[Hashable, float], predicted: Mapping[Hashable, float]) -> Correlation:
    """Spearman correlation over the keys of ``gold`` (e.g. entity pairs); ``predicted`` must
    score exactly those keys."""
    if set(gold) != set(predicted):
        missing = len(set(gold) - set(predicted))
        extra = len(set(predicted) - set(gold))
        raise ValueError(f"keys differ: {missing} gold keys unscored, {extra} extra keys")
    if len(gold) < 3:
        raise ValueError("need at least 3 scored pairs")
    keys = list(gold)
    x = [gold[k] for k in keys]
    y = [predicted[k] for k in keys]
    if len(set(x)) == 1 or len(set(y)) == 1:
        return Correlation(float("nan"), float("nan"), len(keys))
    result = stats.spearmanr(x, y)
    return Correlation(float(result.statistic), float(result.pvalue), len(keys))
