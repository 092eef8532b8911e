"""Ranking a batch of queries, in this process or spread over worker processes (``elquery rank``,
the experiment runner). Each worker opens its own searcher once (a JVM and an open index do not
cross processes): a searcher is safe to share between threads, but ranking spends much of its
time holding Python's GIL, so processes, not threads, rank in parallel."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from elquery.base import check_workers
from elquery.indexing.artefacts import check_artefact
from elquery.retrieval.queries import searched_query
from elquery.workers import ordered_map

if TYPE_CHECKING:
    from elquery.retrieval.models import Model
    from elquery.retrieval.queries import QueryRecord
    from elquery.retrieval.searcher import RankedEntity, Searcher

MIN_QUERIES_PER_WORKER = 20
"""A batch gets no more workers than it has this many queries for."""


def rank_many(index: str, queries: Sequence[QueryRecord], model: Model, k: int, workers: int,
              progress: Callable[[int], Any] | None = None) -> Iterator[tuple[str, list[RankedEntity]]]:
    """``(qid, ranking)`` of every query, in input order, ranked by ``workers`` processes (this
    process when 1; :func:`elquery.workers.ordered_map`); ``progress(n)`` is called as ``n`` more
    queries are done. An ``index`` that is not an entity index, or a count of workers out of
    range, is a one-line error before any worker starts."""
    check_workers(workers)
    check_artefact(index, "entity index")
    workers = min(workers, max(1, len(queries) // MIN_QUERIES_PER_WORKER))
    size = max(1, min(50, -(-len(queries) // (4 * workers))))
    chunks = ((list(queries[i : i + size]), model, k) for i in range(0, len(queries), size))
    for ranked in ordered_map(_rank_chunk, chunks, workers, initializer=_open_searcher, initargs=(index,),
                              finalizer=_close_searcher):
        yield from ranked
        if progress is not None:
            progress(len(ranked))


_searcher: Searcher | None = None
"""In a worker (or in this process, for one worker): the searcher of the batch's index."""


def _open_searcher(index: str) -> None:
    from elquery.retrieval.searcher import Searcher

    global _searcher
    _searcher = Searcher(index)
    _searcher.prepare()


def _close_searcher() -> None:
    global _searcher
    if _searcher is not None:
        _searcher.close()
        _searcher = None


def _rank_chunk(chunk: list[QueryRecord], model: Model, k: int) -> list[tuple[str, list[RankedEntity]]]:
    assert _searcher is not None
    return [(q.qid, _searcher.rank(searched_query(q), model, k)) for q in chunk]
