"""Ranking a batch of queries, in this process or spread over worker processes (``elquery rank``,
the experiment runner). Each worker opens its own searcher once (a JVM and an open index do not
cross processes): a searcher is safe to share between threads, but ranking spends much of its
time holding Python's GIL, so processes, not threads, rank in parallel."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from elquery.base import ElqueryError, check_workers
from elquery.kb.artefacts import check_artefact
from elquery.retrieval.models import check_k
from elquery.retrieval.queries import searched_query
from elquery.workers import WorkerPool, ordered_map, worker_pool

if TYPE_CHECKING:
    from elquery.retrieval.models import Model
    from elquery.retrieval.queries import QueryRecord
    from elquery.retrieval.searcher import RankedEntity, Searcher

MIN_QUERIES_PER_WORKER = 20
"""A batch gets no more workers than it has this many queries for."""


@dataclass(frozen=True)
class SearcherPool:
    """Worker processes each holding a searcher of ``index`` (:func:`searcher_pool`)."""

    index: str
    pool: WorkerPool


@contextmanager
def searcher_pool(index: str, workers: int) -> Iterator[SearcherPool]:
    """``workers`` processes (this one for one worker) each holding a searcher of ``index``, for
    several :func:`rank_many` batches (an experiment's runs): the processes start and open the
    index once, not per batch. Leaving the block by an exception kills them at once."""
    check_workers(workers)
    check_artefact(index, "entity index")
    with worker_pool(workers, _open_searcher, (index,), partial(_close_searcher, index)) as pool:
        yield SearcherPool(index, pool)


def rank_many(index: str, queries: Sequence[QueryRecord], model: Model, k: int, workers: int | SearcherPool,
              progress: Callable[[int], Any] | None = None) -> Iterator[tuple[str, list[RankedEntity]]]:
    """``(qid, ranking)`` of every query, in input order, ranked by ``workers`` processes (this
    process when 1; :func:`elquery.workers.ordered_map`), or by an open :func:`searcher_pool` of
    ``index``; ``progress(n)`` is called as ``n`` more queries are done. An ``index`` that is not
    an entity index, or a count of workers out of range, is a one-line error before any worker
    starts, as is a ``k`` that :func:`~elquery.retrieval.models.check_k` refuses. A batch given a
    count gets no more workers than it has :data:`MIN_QUERIES_PER_WORKER` queries for."""
    k = check_k(k)
    if isinstance(workers, SearcherPool):
        if workers.index != index:
            raise ElqueryError(f"a searcher pool of {workers.index} cannot rank in {index}")
        yield from _rank(workers, queries, model, k, progress)
        return
    with searcher_pool(index, workers_for(len(queries), workers)) as searchers:
        yield from _rank(searchers, queries, model, k, progress)


def workers_for(queries: int, workers: int) -> int:
    """The workers a batch of ``queries`` gets: at most ``workers`` (checked), and no more than it
    has :data:`MIN_QUERIES_PER_WORKER` queries for."""
    return min(check_workers(workers), max(1, queries // MIN_QUERIES_PER_WORKER))


def _rank(searchers: SearcherPool, queries: Sequence[QueryRecord], model: Model, k: int,
          progress: Callable[[int], Any] | None) -> Iterator[tuple[str, list[RankedEntity]]]:
    """The rankings of ``queries`` by the searchers, in chunks of up to 50 queries, four per worker
    at least (so the workers finish together)."""
    size = max(1, min(50, -(-len(queries) // (4 * searchers.pool.size))))
    chunks = ((list(queries[i : i + size]), model, k, searchers.index) for i in range(0, len(queries), size))
    for ranked in ordered_map(_rank_chunk, chunks, searchers.pool):
        yield from ranked
        if progress is not None:
            progress(len(ranked))


_searchers: dict[str, tuple[Searcher, int]] = {}
"""In a worker, or in this process for pools of one worker: the open searcher of each index, and
how many pools use it (two pools of one worker may be open here at once)."""


def _open_searcher(index: str) -> None:
    from elquery.retrieval.searcher import Searcher

    if index in _searchers:
        searcher, users = _searchers[index]
    else:
        searcher, users = Searcher(index), 0
        searcher.prepare()
    _searchers[index] = searcher, users + 1


def _close_searcher(index: str) -> None:
    searcher, users = _searchers.pop(index)
    if users > 1:
        _searchers[index] = searcher, users - 1
    else:
        searcher.close()


def _rank_chunk(chunk: list[QueryRecord], model: Model, k: int, index: str) -> list[tuple[str, list[RankedEntity]]]:
    searcher = _searchers[index][0]
    return [(q.qid, searcher.rank(searched_query(q), model, k)) for q in chunk]
