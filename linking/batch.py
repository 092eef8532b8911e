"""Linking a batch of queries, in this process or spread over worker processes.

Shared by :class:`elquery.linking.linker.Linker` and :class:`elquery.linking.tagme.TagmeLinker`: this process
links with its own linker, each worker builds one once (a JVM and open artefacts do not cross
processes) from a picklable ``factory``, and results come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sized
from itertools import islice
from functools import partial
from types import TracebackType
from typing import Protocol, Self, TypeVar, overload

from elquery.base import ElqueryError, check_workers
from elquery.workers import ordered_map
from elquery.linking.ltr.threads import default_threads, share_cores
from elquery.linking.types import LinkResult


class ResultLinker(Protocol):
    def result(self, query: str, qid: str = ...) -> LinkResult: ...


Factory = Callable[[], ResultLinker]
"""A picklable maker of a linker, for processes that cannot share one (``Linker.factory()``)."""
T = TypeVar("T")


class OpenLinker(ResultLinker, Protocol):
    """A linker as a linking method opens it (:class:`~elquery.linking.linker.Linker`,
    :class:`~elquery.linking.tagme.TagmeLinker`): it links batches and closes what it opened."""

    def describe(self) -> str: ...

    def factory(self) -> Factory: ...

    @overload
    def link_many(self, queries: Iterable[tuple[str, str]], workers: int = ...) -> Iterator[LinkResult]: ...

    @overload
    def link_many(self, queries: Iterable[tuple[str, str]], workers: int = ...,
                  encode: Callable[[LinkResult], T] = ...) -> Iterator[T]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None, /) -> None: ...


MIN_QUERIES_PER_WORKER = 25_000
"""Queries a worker process must have to pay for itself. A worker starts Python, a JVM and the
artefacts (about a second), then spends its first thousands of queries in the JVM's JIT warm-up,
so a batch needs thousands of queries per extra process before it helps (benchmarks/bench_batch.py)."""

CHUNK = 256
"""Queries sent to a worker at a time."""

AHEAD = 64
"""Chunks this process may link ahead of the one it waits for (while a worker warms up), beside
the two chunks per worker in flight: at most that many chunks' results are held here."""

_worker_linker: ResultLinker | None = None


def _start_worker(factory: Factory, workers: int) -> None:
    """A worker of ``workers`` linking processes: its linker, an LTR forest on one thread when the
    processes fill the cores (:func:`~elquery.linking.ltr.threads.share_cores`)."""
    global _worker_linker
    share_cores(workers)
    _worker_linker = factory()


def _link_chunk(chunk: list[tuple[str, str]], encode: Callable[[LinkResult], T]) -> list[T]:
    assert _worker_linker is not None
    return _encoded(_worker_linker, chunk, encode)


def _encoded(linker: ResultLinker, chunk: list[tuple[str, str]], encode: Callable[[LinkResult], T]) -> list[T]:
    return [encode(linker.result(query, qid)) for qid, query in chunk]


def worker_count(queries: Iterable[object], workers: int) -> int:
    """The workers a batch gets: at most ``workers``, and for a batch of known size no more than
    it has :data:`MIN_QUERIES_PER_WORKER` queries for."""
    check_workers(workers)
    if isinstance(queries, Sized):
        return min(workers, max(1, len(queries) // MIN_QUERIES_PER_WORKER))
    return workers


def _same(result: LinkResult) -> LinkResult:
    return result


def link_many(linker: ResultLinker, factory: Factory | None, queries: Iterable[tuple[str, str]], workers: int,
              encode: Callable[[LinkResult], T] = _same) -> Iterator[T]:  # type: ignore[assignment]  # T = LinkResult by default: python/mypy#3737
    """``encode(result)`` of every ``(qid, query)`` pair, in input order, by ``workers`` linking
    processes (:func:`elquery.workers.ordered_map`): this one, with ``linker``, and ``workers - 1``
    spawned workers, each holding a linker made by ``factory`` and encoding its results itself (a
    run's text costs this process far less to receive than the results it is made of). Queries go
    out in chunks of :data:`CHUNK` (one at a time in this process alone), two per worker in
    flight; while the chunk next in order is still being linked elsewhere, this process links the
    following chunks itself (at most :data:`AHEAD` of them), so every core works and memory stays
    bounded whatever the batch size. A batch of known size gets no more processes than it has
    :data:`MIN_QUERIES_PER_WORKER` queries for."""
    default_threads()  # a bad ELQUERY_LTR_THREADS is one line here, whatever the batch's workers
    workers = worker_count(queries, workers)
    if workers > 1 and factory is None:
        raise ElqueryError("linking in other processes needs a factory of the linker")
    chunks = ((chunk,) for chunk in _chunks(queries, CHUNK if workers > 1 else 1))  # one: each result at once
    for results in ordered_map(partial(_link_chunk, encode=encode), chunks, workers, initializer=_start_worker,
                               initargs=(factory, workers), here=partial(_encoded, linker, encode=encode),
                               window=2 * (workers - 1) + AHEAD):
        yield from results


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk
