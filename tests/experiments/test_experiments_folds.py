"""Cross-validation folds (methods.md §7): session-aware k-fold and leave-one-out."""

from __future__ import annotations

import json

import pytest

from elquery.experiments.folds import leave_one_out, session_folds, session_of

# 30 sessions of 1-4 queries, shaped like Y-ERD query ids.
QIDS = [f"trec-2010-{100 + s}_{i}" for s in range(30) for i in range(1, 2 + s % 4)] + ["lonely"]


def test_session_of() -> None:
    assert session_of("trec-2010-100_2") == "trec-2010-100"
    assert session_of("TREC-10") == "TREC-10"


def test_sessions_never_split_and_every_query_tested_once() -> None:
    folds = session_folds(QIDS, 5, seed=3)
    assert len(folds) == 5
    tested = [q for fold in folds for q in fold.test]
    assert sorted(tested) == sorted(QIDS)
    for fold in folds:
        assert set(fold.train) == set(QIDS) - set(fold.test)
        sessions = {session_of(q) for q in fold.test}
        others = {session_of(q) for other in folds if other is not fold for q in other.test}
        assert not sessions & others
    sizes = [len(fold.test) for fold in folds]
    assert max(sizes) - min(sizes) <= 4  # within one session (at most 4 queries)


def test_folds_deterministic_per_seed() -> None:
    assert session_folds(QIDS, 5, seed=1) == session_folds(list(reversed(QIDS)), 5, seed=1)
    assert session_folds(QIDS, 5, seed=1) != session_folds(QIDS, 5, seed=2)


def test_real_y_erd_sessions(elq_data) -> None:
    qids = list(json.loads((elq_data / "y-erd" / "queries.json").read_text()))
    folds = session_folds(qids, 5)
    owner = {session_of(q): fold.index for fold in folds for q in fold.test}
    assert all(owner[session_of(q)] == fold.index for fold in folds for q in fold.test)
    assert sum(len(f.test) for f in folds) == len(qids)


def test_leave_one_out() -> None:
    folds = leave_one_out(["q3", "q1", "q2"])
    assert [f.test for f in folds] == [("q1",), ("q2",), ("q3",)]
    assert [f.train for f in folds] == [("q2", "q3"), ("q1", "q3"), ("q1", "q2")]


def test_too_few_sessions() -> None:
    with pytest.raises(ValueError, match="at least 3 sessions"):
        session_folds(["a_1", "a_2", "b_1"], 3)
    with pytest.raises(ValueError, match="at least 2 queries"):
        leave_one_out(["q1"])
