"""Batches of rankings over worker processes on the demo index: the searchers of a pool serve
several batches (an experiment's runs) with the same processes and the answers of one searcher,
pools of one worker share this process safely, and a pool ranks only in its own index."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.retrieval import BM25, Searcher, mlm
from elquery.retrieval.batch import MIN_QUERIES_PER_WORKER, rank_many, searcher_pool, workers_for
from elquery.retrieval.queries import QueryRecord
from conftest import child_processes  # tests/conftest.py, on the path as pytest loads it

TEXTS = ["new york pizza", "manhattan", "barack obama", "rome italy", "airline", "the big apple", "city"]


@pytest.fixture(scope="module")
def index() -> str:
    from elquery.indexing.demo import demo_artefacts

    return str(demo_artefacts()[0])


def queries(count: int) -> list[QueryRecord]:
    return [QueryRecord(f"q{n}", TEXTS[n % len(TEXTS)]) for n in range(count)]


def expected(index: str, records: list[QueryRecord], model: object, k: int) -> list[tuple[str, list]]:
    with Searcher(index) as searcher:
        return [(q.qid, searcher.rank(q.text, model, k)) for q in records]  # type: ignore[arg-type]


def workers_of(pid: int) -> set[int]:
    """The live children of ``pid`` but multiprocessing's resource tracker."""
    return set(child_processes(pid))


def test_a_pool_serves_several_batches_with_the_same_processes(index: str) -> None:
    records = queries(2 * MIN_QUERIES_PER_WORKER + 3)
    before = workers_of(os.getpid())
    with searcher_pool(index, 2) as searchers:
        first = list(rank_many(index, records, mlm(), 10, searchers))
        started = workers_of(os.getpid()) - before
        second = list(rank_many(index, records[:5], BM25(), 3, searchers))  # fewer queries: the same pool
        assert workers_of(os.getpid()) - before == started and len(started) == 2
    assert first == expected(index, records, mlm(), 10)
    assert second == expected(index, records[:5], BM25(), 3)
    deadline = time.monotonic() + 5
    while workers_of(os.getpid()) & started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not workers_of(os.getpid()) & started  # the pool's processes end with its block


def test_pools_of_one_worker_share_this_process(index: str) -> None:
    records = queries(9)
    with searcher_pool(index, 1) as outer:
        with searcher_pool(index, 1) as inner:
            assert list(rank_many(index, records, mlm(), 5, inner)) == expected(index, records, mlm(), 5)
        # the inner pool's end leaves the outer one's searcher open
        assert list(rank_many(index, records, mlm(), 5, outer)) == expected(index, records, mlm(), 5)
        assert list(rank_many(index, records, mlm(), 5, 1)) == expected(index, records, mlm(), 5)
        assert list(rank_many(index, records, mlm(), 5, outer)) == expected(index, records, mlm(), 5)


def test_a_pool_ranks_only_in_its_index(index: str, tmp_path: Path) -> None:
    with searcher_pool(index, 1) as searchers:
        with pytest.raises(ElqueryError, match=f"^a searcher pool of {index} cannot rank in {tmp_path}$"):
            list(rank_many(str(tmp_path), queries(3), mlm(), 5, searchers))


def test_a_batch_gets_no_more_workers_than_it_has_queries_for() -> None:
    assert workers_for(2 * MIN_QUERIES_PER_WORKER - 1, 8) == 1
    assert workers_for(2 * MIN_QUERIES_PER_WORKER, 8) == 2
    assert workers_for(10_000, 3) == 3
    with pytest.raises(ElqueryError, match="^--workers must be between 1 and 256, got 0$"):
        workers_for(100, 0)


def test_an_experiment_starts_its_searchers_once(index: str) -> None:
    """The experiment's ranker keeps one pool for all its runs (a pool per run cost each run the
    start of its processes and JVMs: 4x the time of the sample experiment on 2 cores)."""
    from elquery.experiments.backend import SearcherBackend

    texts = {q.qid: q.text for q in queries(2 * MIN_QUERIES_PER_WORKER)}
    before = workers_of(os.getpid())
    with SearcherBackend(Path(index), workers=2) as backend:
        runs = [dict(backend.rank(model, texts, 5, lambda n: None)) for model in (mlm(), BM25(), mlm())]
        started = workers_of(os.getpid()) - before
        assert len(started) == 2
        runs.append(dict(backend.rank(mlm(), texts, 5, lambda n: None)))
        assert workers_of(os.getpid()) - before == started
    records = queries(2 * MIN_QUERIES_PER_WORKER)
    assert list(runs[0].items()) == list(runs[2].items()) == list(runs[3].items()) == expected(index, records, mlm(), 5)
    assert list(runs[1].items()) == expected(index, records, BM25(), 5)
