"""Paired t-test and randomization test."""

import math

import pytest
from scipy import stats

from elquery.evaluation import compare, paired_t_test, randomization_test

A = [1.0, 2.0, 3.0, 4.0]
B = [0.0, 0.0, 0.0, 0.0]


def test_paired_t_test_by_hand() -> None:
    # differences 1..4: mean 2.5, sample sd sqrt(5/3), t = 2.5 / (sd / 2) = sqrt(15), 3 df
    result = paired_t_test(A, B)
    assert result.statistic == pytest.approx(math.sqrt(15))
    assert result.p_value == pytest.approx(2 * stats.t.sf(math.sqrt(15), 3))


def test_randomization_test_is_exact_for_few_queries() -> None:
    # 2^4 = 16 sign patterns; only all-plus and all-minus reach |mean| >= 2.5
    result = randomization_test(A, B, trials=10000)
    assert result.statistic == 2.5
    assert result.p_value == pytest.approx(2 / 16)


def test_randomization_test_is_seeded() -> None:
    a = [0.1 * (i % 7) for i in range(30)]
    b = [0.1 * (i % 5) for i in range(30)]
    first = randomization_test(a, b, trials=500, seed=3)
    assert randomization_test(a, b, trials=500, seed=3) == first
    assert 0.0 < first.p_value <= 1.0


def test_identical_runs() -> None:
    assert paired_t_test(A, A).p_value == 1.0
    assert paired_t_test(A, A).statistic == 0.0
    assert randomization_test(A, A).p_value == 1.0


def test_constant_nonzero_difference() -> None:
    result = paired_t_test([1.0, 2.0], [0.0, 1.0])
    assert (result.statistic, result.p_value) == (math.inf, 0.0)


def test_bad_input() -> None:
    with pytest.raises(ValueError):
        paired_t_test([1.0], [0.0])
    with pytest.raises(ValueError):
        randomization_test([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="different queries"):
        compare({"q1": 1.0, "q2": 0.5}, {"q1": 1.0, "q3": 0.5})


def test_compare_on_query_keyed_scores() -> None:
    result = compare({f"q{i}": a for i, a in enumerate(A)}, {f"q{i}": b for i, b in enumerate(B)})
    assert (result.queries, result.mean_a, result.mean_b) == (4, 2.5, 0.0)
    assert result.randomization.p_value == pytest.approx(0.125)
    assert (result.trials, result.seed) == (10000, 0)
