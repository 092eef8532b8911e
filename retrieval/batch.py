"""Ranking a batch of queries, in this process or spread over worker processes (``elquery rank``,
the experiment runner). Each worker opens its own searcher once (a JVM and an open index do not
cross processes): a searcher is safe to share between threads, but ranking spends much of its
time holding Python's GIL, so processes, not threads, rank in parallel."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from contextlib import AbstractContextManager
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from elquery.indexing.artefacts import check_artefact
from elquery.workers import process_pool

if TYPE_CHECKING:
    from elquery.retrieval.models import Model
    from elquery.retrieval.queries import QueryRecord
    from elquery.retrieval.searcher import RankedEntity, Searcher

T = TypeVar("T")
MIN_QUERIES_PER_WORKER = 20
"""A batch gets no more workers than it has this many queries for."""


def rank_many(index: str, queries: Sequence[QueryRecord], model: Model, k: int, workers: int,
              progress: Callable[[int], Any] | None = None) -> Iterator[tuple[str, list[RankedEntity]]]:
    """``(qid, ranking)`` of every query, in input order, ranked by ``workers`` processes (this
    process when 1); ``progress(n)`` is called as ``n`` more queries are done. An ``index`` that
    is not an entity index is a one-line error before any worker starts."""
    check_artefact(index, "entity index")
    workers = min(workers, max(1, len(queries) // MIN_QUERIES_PER_WORKER))
    size = max(1, min(50, -(-len(queries) // (4 * workers))))
    chunks = [list(queries[i : i + size]) for i in range(0, len(queries), size)]
    with _executor(workers, index) as executor:
        yield from _in_order(executor, chunks, model, k, 2 * workers, progress or (lambda n: None))


_searcher: Searcher | None = None


def _open_searcher(index: str) -> None:
    from elquery.retrieval.searcher import Searcher

    global _searcher
    _searcher = Searcher(index)
    _searcher.prepare()


def _rank_chunk(chunk: list[QueryRecord], model: Model, k: int) -> list[tuple[str, list[RankedEntity]]]:
    assert _searcher is not None
    return [(q.qid, _searcher.rank(q.query(), model, k)) for q in chunk]


def _in_order(executor: Executor, chunks: list[list[QueryRecord]], model: Model, k: int, window: int,
              progress: Callable[[int], Any]) -> Iterator[tuple[str, list[RankedEntity]]]:
    """The rankings of every chunk, in order, with at most ``window`` chunks in flight: memory
    stays bounded whatever the number of queries, and an interrupt finds little to cancel."""
    remaining = iter(chunks)
    pending: deque[Future[list[tuple[str, list[RankedEntity]]]]] = deque(
        executor.submit(_rank_chunk, chunk, model, k) for chunk in islice(remaining, window))
    while pending:
        ranked = pending.popleft().result()
        following = next(remaining, None)
        if following is not None:
            pending.append(executor.submit(_rank_chunk, following, model, k))
        yield from ranked
        progress(len(ranked))


def _executor(workers: int, index: str) -> AbstractContextManager[Executor]:
    """The searcher in this process for one worker, else a pool (:func:`elquery.workers.process_pool`)."""
    if workers == 1:
        _open_searcher(index)
        return _InlineExecutor()
    return process_pool(workers, _open_searcher, (index,))


class _InlineExecutor(Executor):
    """Runs tasks in this process (one worker): no process start-up."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        future.set_result(fn(*args, **kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        global _searcher
        if _searcher is not None:
            _searcher.close()
            _searcher = None


