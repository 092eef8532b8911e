"""Cross-validation folds (methods.md §7, "Parameter selection"): session-aware k-fold splits,
where all queries of one search session (the same query id prefix before ``_``) are in one fold,
leave-one-out, and folds given by a test collection (DBpedia-Entity v2's ``folds/*.json``).

All are deterministic: session-aware folds depend only on the query ids, ``k`` and the seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

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


def given_folds(files: Sequence[Path], qids: Iterable[str]) -> list[Fold]:
    """The folds of a test collection's fold files, restricted to ``qids``: each file is JSON
    ``{"0": {"training": [qid, ...], "testing": [qid, ...]}, ...}`` (DBpedia-Entity v2's
    ``folds/``), and the folds of every file are taken in turn, so a file per query category
    cross-validates each category on its own queries. Every query of ``qids`` must be tested in
    exactly one fold, and no fold may train on a query it tests; the training lists are taken as
    given (DBpedia-Entity v2's INEX-LD fold 1 leaves one query out of training). Query ids the
    files name but ``qids`` lacks are left out."""
    wanted = set(qids)
    folds: list[Fold] = []
    tested: dict[str, Path] = {}
    for path in files:
        file_folds = _read_fold_file(path)
        for name, (train, test) in file_folds.items():
            overlap = sorted(set(train) & set(test))
            if overlap:
                raise ValueError(f"{path}: fold {name} trains on the query {overlap[0]} it tests")
            for qid in test:
                if qid in tested:
                    raise ValueError(f"{path}: query {qid} is tested in {tested[qid]} too")
                tested[qid] = path
            kept_train = tuple(sorted(q for q in train if q in wanted))
            kept_test = tuple(sorted(q for q in test if q in wanted))
            if kept_test:
                folds.append(Fold(len(folds), kept_train, kept_test))
    missing = sorted(wanted - set(tested))
    if missing:
        raise ValueError(f"{len(missing)} queries are in no test fold of the fold files, e.g. {missing[0]}")
    return folds


def _read_fold_file(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    """A fold file's folds by name: (training, testing) query ids."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the fold file ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON fold file ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: expected a JSON object of folds {{\"0\": {{\"training\": [...], \"testing\": [...]}}}}")
    folds = {}
    for name, fold in data.items():
        if not (isinstance(fold, dict) and set(fold) == {"training", "testing"}
                and all(isinstance(fold[k], list) and all(isinstance(q, str) for q in fold[k])
                        for k in fold)):
            raise ValueError(f"{path}: fold {name}: expected {{\"training\": [qid, ...], \"testing\": [qid, ...]}}")
        folds[name] = (fold["training"], fold["testing"])
    return folds


def _folds(tests: Sequence[Sequence[str]]) -> list[Fold]:
    everything = sorted(qid for test in tests for qid in test)
    folds = []
    for index, test in enumerate(tests):
        held_out = set(test)
        folds.append(Fold(index, tuple(q for q in everything if q not in held_out),
                          tuple(sorted(test))))
    return folds
