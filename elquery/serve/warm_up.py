"""A worker's warm-up before it serves: each linker the service serves links queries made of the
knowledge base's own entity titles until :data:`WARM_UP_SECONDS` have passed (or every warm-up
query is linked), and the searcher ranks a few of them.

A fresh worker's first queries are slow, and slower as the knowledge base grows: the first one
reads the entity-id map (:meth:`EntityIndex.find_docid <elquery.kb.entity_index.EntityIndex.find_docid>`)
and the Java scorer's exact field lengths of every entity, and the JVM runs the scoring path in its
interpreter until the JIT has compiled it, over the first thousands of queries. Under load, the
requests that arrive meanwhile queue behind them. The warm-up runs in the application's start-up
(its lifespan), before uvicorn listens, so no request reaches a worker that has not warmed up;
``/ready`` says what the warm-up did (:mod:`elquery.serve.routes.stats`).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

from elquery.linking.deadline import stopping
from elquery.serve.page_cache import artefact_files, page_in

WARM_UP_SECONDS = 20.0
"""The default time a worker spends warming up (``elquery serve --warm-up SECONDS``), at most: it
ends sooner once :data:`WARM_UP_QUERIES` are linked (a small knowledge base's warm-up takes a
second or two). Over all of DBpedia (4.6M entities, 2 workers, the four linkers of the GIF
methods), 5 s linked about 200 queries (13-17 ms each for the four) and the first 10 s after
ready ran at 822 req/s, p99 69 ms; 20 s linked about 1,800 (4-5.5 ms) and the same 10 s ran at
1,660 req/s, p99 32 ms, ready 33 s after start instead of 21 (bench_serve.py, load 3.7)."""
WARM_UP_QUERIES = 4000
"""The most warm-up queries (made once, spread over the index's entities)."""
RANKED_QUERIES = 20
"""Warm-up queries also ranked by the searcher (``/rank``, entity retrieval over the whole index)."""
TAIL = 100


class _Entities(Protocol):
    @property
    def num_entities(self) -> int: ...

    def entity(self, docid: int) -> str: ...


@dataclass(frozen=True)
class WarmUp:
    """What a warm-up did: ``paged_in_mb`` of the artefacts' files read into the page cache in
    ``page_in_s`` seconds (:mod:`elquery.serve.page_cache`), ``prepare_s`` seconds reading what
    the first queries would read (the entity-id map, the searcher's tie order), ``queries`` linked
    (each by every served linker) in ``seconds``, the ``first_ms`` query's time (over every
    linker) and the median of the last :data:`TAIL` (``last_ms``)."""

    paged_in_mb: float
    page_in_s: float
    prepare_s: float
    queries: int
    seconds: float
    first_ms: float
    last_ms: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


NO_WARM_UP = WarmUp(0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0)


def title_words(entity: str) -> str:
    """``<dbpedia:New_York_(film)>`` -> ``New York``: the title's words as written, its qualifier
    dropped."""
    title = unquote(entity[len("<dbpedia:"):-1] if entity.startswith("<dbpedia:") else entity)
    return title.replace("_", " ").split(" (")[0]


SHAPES = ("{title}", "{lower}", "what is the {lower}", "{lower} {other}", "{title}'s {word} 2015",
          "{lower} {word}", "how to get to {lower} from {other}?", "{lower} of {word} in qzxv")
"""The shapes of the warm-up queries, in turn (``title``: an entity's title as written, ``lower``:
lowercased, ``other``: the title of another entity, ``word``: its first word). Web queries are
not all titles: they have function words, capitals, digits, punctuation and words no field holds.
The JVM's compiler optimizes the scoring path for what the warm-up showed it; a query of a shape
it never saw (a stop word, an upper-case letter, a term missing from a field) makes it throw that
code away and recompile, in the interpreter meanwhile. Warmed on titles alone, a full-scale
service recompiled its scoring, analysis and term-dictionary methods in its first seconds under
load (``-Xlog:jit+compilation``) and answered its first 10 s with a p99 of 20-31 ms against
13-19 ms for the next 10 s (bench_serve.py, 4.6M entities, 2 workers)."""


def warm_up_queries(index: _Entities, count: int = WARM_UP_QUERIES) -> list[str]:
    """``count`` queries from the titles of entities spread evenly over the index's docids, each
    in the next of the :data:`SHAPES` in turn (the other entity: the docid half a step on), so
    that mention detection finds candidates, the candidates' scores are read all over the index's
    files, and the scoring sees the shapes of web queries."""
    n = index.num_entities
    if n == 0:
        return []
    step = max(1, n // count)
    queries = []
    for number, docid in enumerate(range(0, n, step)):
        title = title_words(index.entity(docid))
        other = title_words(index.entity((docid + step // 2 + 1) % n)).lower()
        if title.strip():
            shape = SHAPES[number % len(SHAPES)]
            queries.append(shape.format(title=title, lower=title.lower(), other=other,
                                        word=(other.split() or [""])[0]))
    return queries[:count]


def warm_up(files: Sequence[Path], prepare: Sequence[Callable[[], object]], linkers: Sequence[Callable[[str], object]],
            rank: Callable[[str], object], queries: Sequence[str], seconds: float) -> WarmUp:
    """Read ``files`` (files or folders) into the page cache as memory allows
    (:func:`~elquery.serve.page_cache.page_in`), call each of ``prepare``, then link ``queries``
    in order, each with every one of ``linkers``, until ``seconds`` have passed; rank the first
    :data:`RANKED_QUERIES` of them with ``rank``. Then the objects made so far are moved out of
    reach of Python's cyclic garbage collector (:func:`gc.freeze`): they live as long as the
    worker, and a full collection would otherwise walk all of them."""
    if seconds <= 0:
        return NO_WARM_UP
    paged = page_in(artefact_files(files))
    started = time.perf_counter()
    for step in prepare:
        step()
    prepared = time.perf_counter() - started
    if not queries:
        return WarmUp(round(paged.size / 1e6, 1), paged.seconds, round(prepared, 3), 0, 0.0, 0.0, 0.0)
    started = time.perf_counter()
    deadline = started + seconds
    times = []
    for number, query in enumerate(queries):
        begun = time.perf_counter()
        for linker in linkers:
            linker(query)
        ended = time.perf_counter()
        times.append(ended - begun)
        if number < RANKED_QUERIES:
            rank(query)
        if ended >= deadline or stopping():  # SIGTERM: the worker ends now, not once warm
            break
    gc.collect()
    gc.freeze()
    return WarmUp(round(paged.size / 1e6, 1), paged.seconds, round(prepared, 3), len(times), round(time.perf_counter() - started, 3),
                  round(1000 * times[0], 3), round(1000 * statistics.median(times[-TAIL:]), 3))


class _Warming(Protocol):
    def warm_up(self, seconds: float) -> WarmUp: ...


def warm_up_at_start(app: Any, artefacts: _Warming, seconds: float) -> None:
    """Have ``app`` (a Starlette application) warm ``artefacts`` up for ``seconds`` at start-up,
    before the rest of its lifespan: on the thread that will serve (its own SQLite connection to
    the store), before the server listens."""
    then: Callable[[Any], AbstractAsyncContextManager[Any]] = app.router.lifespan_context

    @asynccontextmanager
    async def warming(app: Any) -> AsyncIterator[Any]:
        artefacts.warm_up(seconds)
        async with then(app) as state:
            yield state

    app.router.lifespan_context = warming
