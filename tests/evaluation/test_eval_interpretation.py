"""Hand-computed cases for ICTIR'15 Eq. 2-7 (methods.md section 7)."""

from fractions import Fraction as Fr

import pytest

from elquery.evaluation import (PRF, entity_scores, evaluate_interpretations, lean_scores, score_query,
                        strict_scores)


def I(*entities: str) -> frozenset[str]:  # noqa: E743 - an interpretation
    return frozenset(entities)


def S(*interpretations: frozenset[str]) -> frozenset[frozenset[str]]:
    return frozenset(interpretations)


def assert_prf(actual: PRF, p: float, r: float, f: float) -> None:
    assert (actual.p, actual.r, actual.f) == pytest.approx((float(p), float(r), float(f)),
                                                            abs=1e-12)


def test_empty_gold_and_empty_run_is_perfect() -> None:
    scores = score_query(S(), S())
    for part in (scores.strict, scores.entity, scores.lean):
        assert_prf(part, 1, 1, 1)


def test_empty_run_with_gold_scores_zero() -> None:
    scores = score_query(S(), S(I("a")))
    for part in (scores.strict, scores.entity, scores.lean):
        assert_prf(part, 0, 0, 0)


def test_run_with_empty_gold_scores_zero() -> None:
    scores = score_query(S(I("a")), S())
    for part in (scores.strict, scores.entity, scores.lean):
        assert_prf(part, 0, 0, 0)


def test_partial_interpretation_counts_for_entities_only() -> None:
    system, gold = S(I("a")), S(I("a", "b"))
    assert_prf(strict_scores(system, gold), 0, 0, 0)
    assert_prf(entity_scores(system, gold), 1, Fr(1, 2), Fr(2, 3))
    assert_prf(lean_scores(system, gold), Fr(1, 2), Fr(1, 4), Fr(1, 3))


def test_several_interpretations() -> None:
    system, gold = S(I("a", "c"), I("d")), S(I("a", "c"), I("b", "c"))
    assert_prf(strict_scores(system, gold), Fr(1, 2), Fr(1, 2), Fr(1, 2))
    assert_prf(entity_scores(system, gold), Fr(2, 3), Fr(2, 3), Fr(2, 3))
    assert_prf(lean_scores(system, gold), Fr(7, 12), Fr(7, 12), Fr(7, 12))


def test_extra_interpretations_lower_precision() -> None:
    system, gold = S(I("a"), I("b"), I("c")), S(I("a"))
    assert_prf(strict_scores(system, gold), Fr(1, 3), 1, Fr(1, 2))
    assert_prf(entity_scores(system, gold), Fr(1, 3), 1, Fr(1, 2))
    assert_prf(lean_scores(system, gold), Fr(1, 3), 1, Fr(1, 2))


def test_lean_f_is_eq7_on_lean_p_and_r() -> None:
    # strict (1/2, 1, 2/3), entity (1, 1, 1): lean P = 3/4, R = 1 and F = 2PR/(P+R) = 6/7,
    # not the mean of the two F values (5/6) that the published lean script prints.
    system, gold = S(I("a", "b"), I("a")), S(I("a", "b"))
    assert_prf(strict_scores(system, gold), Fr(1, 2), 1, Fr(2, 3))
    assert_prf(entity_scores(system, gold), 1, 1, 1)
    assert_prf(lean_scores(system, gold), Fr(3, 4), 1, Fr(6, 7))


def test_entity_order_within_an_interpretation_is_irrelevant() -> None:
    assert_prf(strict_scores(S(I("b", "a")), S(I("a", "b"))), 1, 1, 1)


def test_empty_interpretation_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least one entity"):
        score_query(S(I()), S(I("a")))


QRELS = {
    "q1": S(),
    "q2": S(I("a")),
    "q3": S(),
    "q4": S(I("a", "b")),
    "q5": S(I("a", "c"), I("b", "c")),
    "q6": S(I("a", "b")),
}
RUN = {
    "q1": S(),
    # q2 missing: counts as no interpretation
    "q3": S(I("a")),
    "q4": S(I("a")),
    "q5": S(I("a", "c"), I("d")),
    "q6": S(I("a", "b"), I("a")),
    "not-in-qrels": S(I("z")),
}


def f_of(p: Fr, r: Fr) -> float:
    return float(2 * p * r / (p + r))


def test_macro_aggregate_reports_both_f_definitions() -> None:
    result = evaluate_interpretations(QRELS, RUN)
    assert result.queries == 6
    assert sorted(result.per_query) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    strict = result.strict
    assert (strict.p, strict.r, strict.f) == pytest.approx((1 / 3, 5 / 12, 13 / 36))
    assert strict.f_of_means == pytest.approx(10 / 27)
    entity = result.entity
    assert (entity.p, entity.r, entity.f) == pytest.approx((11 / 18, 19 / 36, 5 / 9))
    assert entity.f_of_means == pytest.approx(f_of(Fr(11, 18), Fr(19, 36)))
    lean = result.lean
    assert (lean.p, lean.r, lean.f) == pytest.approx((17 / 36, 17 / 36, 233 / 504))
    assert lean.f_of_means == pytest.approx(17 / 36)


def test_as_dict_shape() -> None:
    data = evaluate_interpretations(QRELS, RUN).as_dict(per_query=True)
    assert set(data) == {"queries", "strict", "lean", "entity", "per_query"}
    assert set(data["strict"]) == {"P", "R", "F", "F_of_means"}
    assert data["per_query"]["q4"]["entity"] == pytest.approx({"P": 1, "R": 0.5, "F": 2 / 3})
    assert "per_query" not in evaluate_interpretations(QRELS, RUN).as_dict()
