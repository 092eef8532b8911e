"""Linking a batch of queries, in this process or spread over worker processes.

Shared by :class:`elquery.linking.linker.Linker` and :class:`elquery.linking.tagme.TagmeLinker`: this process
links with its own linker, each worker builds one once (a JVM and open artefacts do not cross
processes) from a picklable ``factory``, and results come back in input order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sized
from concurrent.futures import Future
from itertools import islice
from functools import partial
from typing import Protocol, TypeVar

from elquery.base import ElqueryError
from elquery.workers import process_pool
from elquery.linking.types import LinkResult


class ResultLinker(Protocol):
    def result(self, query: str, qid: str = ...) -> LinkResult: ...


Factory = Callable[[], ResultLinker]
"""A picklable maker of a linker, for processes that cannot share one (``Linker.factory()``)."""
T = TypeVar("T")


MIN_QUERIES_PER_WORKER = 25_000
"""Queries a worker process must have to pay for itself. A worker starts Python, a JVM and the
artefacts (about a second), then spends its first thousands of queries in the JVM's JIT warm-up,
so a batch needs thousands of queries per extra process before it helps (benchmarks/bench_batch.py)."""

CHUNK = 256
"""Queries sent to a worker at a time."""

AHEAD = 64
"""Chunks this process may link ahead of the one it waits for (while a worker warms up), and so
the most results held here at any time, with two chunks per worker in flight."""

_worker_linker: ResultLinker | None = None


def _start_worker(factory: Factory) -> None:
    global _worker_linker
    _worker_linker = factory()


def _link_chunk(chunk: list[tuple[str, str]], encode: Callable[[LinkResult], T]) -> list[T]:
    assert _worker_linker is not None
    return [encode(_worker_linker.result(query, qid)) for qid, query in chunk]


def worker_count(queries: Iterable[object], workers: int) -> int:
    """The workers a batch gets: at most ``workers``, and for a batch of known size no more than
    it has :data:`MIN_QUERIES_PER_WORKER` queries for."""
    if workers < 1:
        raise ElqueryError(f"workers must be at least 1, got {workers}")
    if isinstance(queries, Sized):
        return min(workers, max(1, len(queries) // MIN_QUERIES_PER_WORKER))
    return workers


def _same(result: LinkResult) -> LinkResult:
    return result


def link_many(linker: ResultLinker, factory: Factory | None, queries: Iterable[tuple[str, str]], workers: int,
              encode: Callable[[LinkResult], T] = _same) -> Iterator[T]:  # type: ignore[assignment]
    """``encode(result)`` of every ``(qid, query)`` pair, in input order, by ``workers`` linking
    processes: this one, with ``linker``, and ``workers - 1`` spawned workers, each holding a
    linker made by ``factory`` and encoding its results itself (a run's text costs this process far
    less to receive than the results it is made of). Queries go out in chunks of :data:`CHUNK`,
    two per worker in flight; while the chunk next in order is still being linked elsewhere, this
    process links the following chunks itself (at most :data:`AHEAD` of them), so every core
    works and memory stays bounded whatever the batch size. A batch of known size gets no more
    processes than it has :data:`MIN_QUERIES_PER_WORKER` queries for."""
    workers = worker_count(queries, workers)
    if workers == 1:
        for qid, query in queries:
            yield encode(linker.result(query, qid))
        return
    if factory is None:
        raise ElqueryError("linking in other processes needs a factory of the linker")
    work = partial(_link_chunk, encode=encode)
    chunks = _chunks(queries, CHUNK)
    in_flight_limit = 2 * (workers - 1)
    with process_pool(workers - 1, _start_worker, (factory,)) as pool:
        pending: deque[Future[list[T]] | list[T]] = deque()  # chunks in input order: sent, or linked here
        linked_here = 0
        exhausted = False
        while True:
            in_flight = sum(1 for item in pending if isinstance(item, Future) and not item.done())
            while not exhausted and in_flight < in_flight_limit:
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                else:
                    pending.append(pool.submit(work, chunk))
                    in_flight += 1
            if not pending:
                return
            head = pending[0]
            if isinstance(head, list):
                linked_here -= 1
            elif not (head.done() or exhausted or linked_here >= AHEAD):
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                else:
                    pending.append([encode(linker.result(query, qid)) for qid, query in chunk])
                    linked_here += 1
                continue
            pending.popleft()
            yield from head if isinstance(head, list) else head.result()


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk
