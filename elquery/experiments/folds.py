"""Cross-validation folds (methods.md §7, "Parameter selection"): session-aware k-fold splits,
where all queries of one search session (the same query id prefix before ``_``) are in one fold,
and leave-one-out.

Both are deterministic: session-aware folds depend only on the query ids, ``k`` and the seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SESSION_SEPARATOR = "_"


@dataclass(frozen=True)
class Fold:
    """One cross-validation fold: parameters are chosen on ``train`` and applied to ``test``."""

    index: int
    train: tuple[str, ...]
    test: tuple[str, ...]


def session_of(qid: str, separator: str = SESSION_SEPARATOR) -> str:
    """The search session of a query: its id up to the first ``separator``
    (``trec-2010-100_2`` -> ``trec-2010-100``); an id without one is a session of its own."""
    return qid.partition(separator)[0]


def session_folds(qids: Iterable[str], k: int, seed: int = 0,
                  separator: str = SESSION_SEPARATOR) -> list[Fold]:
    """``k`` folds that never split a session. Sessions are shuffled with ``seed``, then assigned,
    largest first, to the fold holding the fewest queries so far (lowest index on ties), which
    keeps the folds' sizes within one session of each other."""
    sessions: dict[str, list[str]] = {}
    for qid in sorted(set(qids)):
        sessions.setdefault(session_of(qid, separator), []).append(qid)
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    if len(sessions) < k:
        raise ValueError(f"{k} folds need at least {k} sessions, the queries form {len(sessions)}")
    order = sorted(sessions)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda s: -len(sessions[s]))  # stable: equal sizes keep the shuffled order
    tests: list[list[str]] = [[] for _ in range(k)]
    for session in order:
        smallest = min(range(k), key=lambda i: (len(tests[i]), i))
        tests[smallest].extend(sessions[session])
    return _folds(tests)


def leave_one_out(qids: Iterable[str]) -> list[Fold]:
    """One fold per query (in sorted order) whose test set is that query alone."""
    ordered = sorted(set(qids))
    if len(ordered) < 2:
        raise ValueError(f"leave-one-out needs at least 2 queries, got {len(ordered)}")
    return _folds([[qid] for qid in ordered])


def _folds(tests: Sequence[Sequence[str]]) -> list[Fold]:
    everything = sorted(qid for test in tests for qid in test)
    folds = []
    for index, test in enumerate(tests):
        held_out = set(test)
        folds.append(Fold(index, tuple(q for q in everything if q not in held_out),
                          tuple(sorted(test))))
    return folds
