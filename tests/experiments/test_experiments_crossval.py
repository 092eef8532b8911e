"""Parameter selection on training folds only (methods.md §7)."""

from __future__ import annotations

import math

from elquery.experiments.crossval import choose, combine, cross_validate
from elquery.experiments.folds import Fold

QIDS = ("q1", "q2", "q3", "q4", "q5", "q6")
FOLDS = [Fold(0, ("q3", "q4", "q5", "q6"), ("q1", "q2")),
         Fold(1, ("q1", "q2", "q5", "q6"), ("q3", "q4")),
         Fold(2, ("q1", "q2", "q3", "q4"), ("q5", "q6"))]


def test_test_fold_does_not_leak() -> None:
    # "B" is best only on fold 0's test queries; it also wins on all queries together
    # ((2 + 4 * 0.4) / 6 = 0.6 > 0.5), so choosing with the test fold in any way picks it.
    objective = {
        "A": {q: 0.5 for q in QIDS},
        "B": {"q1": 1.0, "q2": 1.0, "q3": 0.4, "q4": 0.4, "q5": 0.4, "q6": 0.4},
    }
    choices = cross_validate(FOLDS, objective)
    assert [c.setting for c in choices] == ["A", "B", "B"]
    assert choices[0].train_score == 0.5
    assert math.isclose(choices[1].train_score, 0.7)


def test_ties_go_to_the_first_setting_and_unscored_rank_last() -> None:
    assert choose({"x": {"q1": 0.5}, "y": {"q1": 0.5}}, ["q1"]) == ("x", 0.5)
    setting, score = choose({"none": {"q9": 1.0}, "some": {"q1": 0.0}}, ["q1"])
    assert setting == "some" and score == 0.0
    setting, score = choose({"none": {}, "also": {}}, ["q1"])
    assert setting == "none" and math.isnan(score)


def test_combine_takes_each_test_query_from_its_fold_choice() -> None:
    objective = {"A": {q: 0.5 for q in QIDS},
                 "B": {"q1": 1.0, "q2": 1.0, "q3": 0.4, "q4": 0.4, "q5": 0.4, "q6": 0.4}}
    choices = cross_validate(FOLDS, objective)
    outputs = {"A": {q: f"A-{q}" for q in QIDS}, "B": {q: f"B-{q}" for q in QIDS if q != "q6"}}
    assert combine(outputs, choices) == {"q1": "A-q1", "q2": "A-q2", "q3": "B-q3", "q4": "B-q4",
                                         "q5": "B-q5"}
