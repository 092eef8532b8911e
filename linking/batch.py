"""Linking a batch of queries, in this process or spread over worker processes.

Shared by :class:`elquery.linking.linker.Linker` and :class:`elquery.linking.tagme.TagmeLinker`: each worker
builds its own linker once (a JVM and open artefacts do not cross processes) from a picklable
``factory``, and results come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Protocol

from elquery.base import ElqueryError
from elquery.workers import process_pool
from elquery.linking.types import LinkResult


class ResultLinker(Protocol):
    def result(self, query: str, qid: str = ...) -> LinkResult: ...


MIN_QUERIES_PER_WORKER = 25_000
"""Queries a worker process must have to pay for itself. A worker starts Python, a JVM and the
artefacts (about half a second), then spends its first thousands of queries in the JVM's JIT
warm-up, and each result travels back pickled; on 100k-entity artefacts 20,000 queries took 4.8 s
with 2 workers and 2.6 s in one warm process (benchmarks/bench_linking.py), so a batch needs
tens of thousands of queries per worker before extra processes help."""

_worker_linker: ResultLinker | None = None


def _start_worker(factory: Callable[[], ResultLinker]) -> None:
    global _worker_linker
    _worker_linker = factory()


def _link_in_worker(item: tuple[str, str]) -> LinkResult:
    assert _worker_linker is not None
    qid, query = item
    return _worker_linker.result(query, qid)


def worker_count(queries: Iterable[object], workers: int) -> int:
    """The workers a batch gets: at most ``workers``, and for a batch of known size no more than
    it has :data:`MIN_QUERIES_PER_WORKER` queries for."""
    if workers < 1:
        raise ElqueryError(f"workers must be at least 1, got {workers}")
    if isinstance(queries, Sized):
        return min(workers, max(1, len(queries) // MIN_QUERIES_PER_WORKER))
    return workers


def link_many(
    linker: ResultLinker, factory: Callable[[], ResultLinker], queries: Iterable[tuple[str, str]], workers: int
) -> Iterator[LinkResult]:
    """Results of ``(qid, query)`` pairs in input order: with ``linker`` when ``workers`` is 1,
    else in that many spawned processes, each holding a linker made by ``factory``. A batch of
    known size gets no more workers than it has :data:`MIN_QUERIES_PER_WORKER` queries for (a
    smaller batch is linked here, in this process)."""
    workers = worker_count(queries, workers)
    if workers == 1:
        for qid, query in queries:
            yield linker.result(query, qid)
        return
    with process_pool(workers, _start_worker, (factory,)) as pool:
        yield from pool.map(_link_in_worker, queries, chunksize=32)
