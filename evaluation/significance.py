"""Significance between two runs on per-query scores (methods.md section 7): the two-sided
paired t-test and a paired randomization (sign-flip permutation) test, both via scipy.

The randomization test permutes the scores within each query pair; it is exact when the
2^n pairings number at most ``trials``, otherwise it draws ``trials`` random pairings from a
generator seeded with ``seed`` (deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class PairedTest:
    """Test statistic and two-sided p-value."""

    statistic: float
    p_value: float


@dataclass(frozen=True)
class Comparison:
    """Means of two runs over the same queries and both tests on their difference (A - B)."""

    queries: int
    mean_a: float
    mean_b: float
    t_test: PairedTest
    randomization: PairedTest
    trials: int
    seed: int


def _pairs(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired scores must be two sequences of the same length")
    if len(x) < 2:
        raise ValueError("need at least 2 paired scores")
    return x, y


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Two-sided paired t-test. With no variance in the differences: t = 0, p = 1 when they are
    all 0, else t = ±inf, p = 0."""
    x, y = _pairs(a, b)
    d = x - y
    if np.all(d == d[0]):
        if d[0] == 0:
            return PairedTest(0.0, 1.0)
        return PairedTest(float(np.copysign(np.inf, d[0])), 0.0)
    result = stats.ttest_rel(x, y)
    return PairedTest(float(result.statistic), float(result.pvalue))


def randomization_test(a: Sequence[float], b: Sequence[float], trials: int = 10000,
                       seed: int = 0) -> PairedTest:
    """Paired randomization test of the mean difference; statistic = mean(a - b)."""
    x, y = _pairs(a, b)
    if trials < 1:
        raise ValueError("trials must be positive")
    result = stats.permutation_test(
        (x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=trials, batch=1000, alternative="two-sided",
        rng=np.random.default_rng(seed))
    return PairedTest(float(result.statistic), float(result.pvalue))


def compare(a: Mapping[str, float], b: Mapping[str, float], trials: int = 10000,
            seed: int = 0) -> Comparison:
    """Both tests on per-query scores keyed by query id; the two runs must score the same
    queries."""
    if set(a) != set(b):
        raise ValueError("the two runs are scored on different queries")
    keys = sorted(a)
    x, y = [a[k] for k in keys], [b[k] for k in keys]
    return Comparison(len(keys), fmean(x), fmean(y), paired_t_test(x, y),
                      randomization_test(x, y, trials, seed), trials, seed)
