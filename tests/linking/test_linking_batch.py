"""The batch of :func:`elquery.linking.batch.link_many` over worker processes, with linkers that
say which process linked each query: every result once, in input order, from this process and
the workers both, and no more processes than the batch pays for."""

from __future__ import annotations

import ast
import os

import pytest

from elquery.linking import batch


class NamedLinker:
    """Answers ``(qid, query, process id, made by the factory?)`` for each query."""

    def __init__(self, spawned: bool) -> None:
        self.spawned = spawned

    def result(self, query: str, qid: str = "q1") -> tuple[str, str, int, bool]:  # type: ignore[override]
        return qid, query, os.getpid(), self.spawned


def make_spawned() -> NamedLinker:
    return NamedLinker(spawned=True)


def _queries(count: int) -> list[tuple[str, str]]:
    return [(f"q{number}", f"query {number}") for number in range(count)]


@pytest.mark.parametrize("workers", [2, 3])
def test_every_query_once_in_order_by_this_process_and_the_workers(workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "MIN_QUERIES_PER_WORKER", 1)
    monkeypatch.setattr(batch, "CHUNK", 5)
    queries = _queries(3000)
    results = list(batch.link_many(NamedLinker(spawned=False), make_spawned, queries, workers))
    assert [(qid, query) for qid, query, _, _ in results] == queries
    here = [r for r in results if not r[3]]
    assert here and all(pid == os.getpid() for _, _, pid, _ in here)  # this process linked some chunks itself
    spawned_pids = {pid for _, _, pid, spawned in results if spawned}
    assert os.getpid() not in spawned_pids and 1 <= len(spawned_pids) <= workers - 1
    assert all(len({r[3] for r in results[i:i + 5]}) == 1 for i in range(0, 3000, 5))  # whole chunks


def test_encode_runs_where_the_query_is_linked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "MIN_QUERIES_PER_WORKER", 1)
    results = list(batch.link_many(NamedLinker(spawned=False), make_spawned, _queries(600), 2, encode=repr))
    decoded = [ast.literal_eval(text) for text in results]
    assert [(qid, query) for qid, query, _, _ in decoded] == _queries(600)
    assert {spawned for _, _, _, spawned in decoded} == {True, False}


def test_small_batches_stay_in_this_process() -> None:
    queries = _queries(batch.MIN_QUERIES_PER_WORKER * 2 - 1)
    assert batch.worker_count(queries, 8) == 1
    assert batch.worker_count(_queries(batch.MIN_QUERIES_PER_WORKER * 2), 8) == 2
    assert batch.worker_count(iter(queries), 8) == 8  # a stream of unknown size gets what it asks for
    results = list(batch.link_many(NamedLinker(spawned=False), None, queries[:100], 4))
    assert {pid for _, _, pid, _ in results} == {os.getpid()}
    with pytest.raises(Exception, match="--workers must be between 1 and 256, got 0"):
        batch.worker_count(queries, 0)
