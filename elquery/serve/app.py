"""The service: a FastAPI application over one set of artefacts, opened once per worker process.

Answers are the Python API's (and so the command line's): ``/link`` returns the records of
``elquery link --format jsonl`` (:func:`elquery.linking.output.jsonl_record`), ``/rank`` the ranking
of ``elquery rank``. Linkers and the searcher are shared between the server's threads (they are
thread-safe). Every request is bounded: query length (the linker's ``max_query_tokens``), batch
size, ``k``, and a time limit; a request over a limit gets a JSON error (413, 422 or 503), never a
crash of the worker.
"""

from __future__ import annotations

import asyncio
import datetime
import html
import json
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi_offline import FastAPIOffline
from starlette.concurrency import run_in_threadpool

from elquery.base import ElqueryError
from elquery.indexing.entity_index import EntityIndex
from elquery.indexing.ntriples import canonical_entity_id
from elquery.indexing.provenance import run_metadata
from elquery.indexing.surface_forms.store import SurfaceFormStore
from elquery.linking.linker import Linker
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.linking.mlm_scores import IndexScorer
from elquery.linking.output import jsonl_record
from elquery.linking.params import TAGME, LinkingParams
from elquery.retrieval.links import record_links
from elquery.retrieval.models import MODEL_HELP, EntityLinkingRetrieval, model_from_name, parse_params
from elquery.retrieval.queries import check_query_text
from elquery.retrieval.scoring import LinkedQuery
from elquery.retrieval.searcher import Searcher
from elquery.serve.example import Example, candidate_queries, find_example, thresholds

PAGE = Path(__file__).with_name("page.html")
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Limits:
    """What one request may ask for."""

    max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS
    max_batch: int = 1000
    max_k: int = 1000
    seconds: float = 10.0
    concurrency: int = 2
    """Requests worked on at once per worker process; the others wait their turn (first come, first
    served). Linking holds Python's GIL most of the time: more threads add contention, not speed."""


@dataclass
class Artefacts:
    """The artefacts of one worker, opened once: index, surface forms, TAGME (optional)."""

    index: Path
    surface_forms: Path
    tagme: Path | None = None
    demo_thresholds: bool = False
    params: LinkingParams | None = None
    """Tuned thresholds (``elquery serve --params``), used where a request gives none."""

    def __post_init__(self) -> None:
        self.entity_index = EntityIndex(self.index)
        self.scorer = IndexScorer(self.index)
        self.store = SurfaceFormStore(self.surface_forms)
        self.searcher = Searcher(self.entity_index)
        self._linkers: dict[tuple[Any, ...], Linker] = {}
        self._lock = threading.Lock()
        self.provenance = run_metadata("serve", {"index": self.index, "surface_forms": self.surface_forms,
                                                 "tagme": self.tagme})
        self.tagme_linker = None
        if self.tagme is not None:
            from elquery.linking.tagme import TagmeLinker

            tuned = self.params.of(TAGME) if self.params is not None else None
            self.tagme_linker = TagmeLinker(self.tagme, **({} if tuned is None else {"rho_na": tuned.rho_na}))
        self._example: Example | None = None

    def linker(self, method: str, commonness_threshold: float | None, gif_threshold: float | None,
               top_ranked: bool, max_query_tokens: int) -> Linker:
        """The linker of these settings, made once (a Linker is thread-safe; they share the
        open artefacts); at most 64 settings are kept. A threshold not given comes from the params
        file, else the demo's or the method's default (:meth:`LinkerConfig.origin`)."""
        key = (method, commonness_threshold, gif_threshold, top_ranked, max_query_tokens)
        with self._lock:
            linker = self._linkers.get(key)
            if linker is None:
                if len(self._linkers) >= 64:
                    self._linkers.pop(next(iter(self._linkers)))
                linker = self._linkers[key] = Linker(self.scorer, self.store, method, commonness_threshold,
                                                     gif_threshold, top_ranked, max_query_tokens=max_query_tokens,
                                                     params=self.params, demo_defaults=self.demo_thresholds)
        return linker

    def _default_linker(self, method: str) -> Linker:
        return self.linker(method, None, None, False, DEFAULT_MAX_QUERY_TOKENS)

    def thresholds(self) -> dict[str, Any]:
        """Per method, the thresholds a request that gives none links with, and where each comes
        from (params file, demo default or default)."""
        tagme = None
        if self.tagme_linker is not None:
            tuned = self.params is not None and self.params.of(TAGME) is not None
            tagme = (self.tagme_linker.params.rho_na, self.params.origin if tuned else "default")  # type: ignore[union-attr]
        return thresholds(self._default_linker, tagme)

    def example(self) -> Example:
        """The page's starting query, found once (:mod:`elquery.serve.example`)."""
        if self._example is None:
            candidates = candidate_queries(self.entity_index, self.store, self.demo_thresholds)
            self._example = find_example(candidates, self._default_linker)
        return self._example


@dataclass
class Statistics:
    """Request counts and latencies of this worker (the last 10,000 requests)."""

    started: float = field(default_factory=time.time)
    requests: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=10_000))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, path: str, seconds: float, error: bool) -> None:
        with self.lock:
            self.requests[path] = self.requests.get(path, 0) + 1
            self.errors += error
            self.latencies.append(seconds)

    def as_dict(self) -> dict[str, Any]:
        with self.lock:
            ordered = sorted(self.latencies)
        def percentile(p: float) -> float | None:
            return round(1000 * ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3) if ordered else None
        return {"uptime_s": round(time.time() - self.started, 1), "requests": dict(self.requests),
                "errors": self.errors, "latency_ms": {"p50": percentile(0.5), "p99": percentile(0.99)}}


class RequestError(Exception):
    """A request the service refuses: HTTP status and one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Counting:
    """Pure ASGI middleware counting requests and latencies (no body buffering or streaming in
    pieces, which would cost a TCP round trip per response)."""

    def __init__(self, app: Any, statistics: Statistics) -> None:
        self.app, self.statistics = app, statistics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.statistics.record(scope["path"], time.perf_counter() - started, status >= 400)


def create_app(artefacts: Artefacts, limits: Limits = Limits()) -> FastAPI:
    # /docs (Swagger UI) and /redoc load their scripts and styles from the installed fastapi-offline
    # package, not from a CDN: the documentation works offline
    app = FastAPIOffline(title="elquery", description="Entity linking in queries and entity retrieval (docs/serve.md).")
    statistics = Statistics()

    app.add_middleware(_Counting, statistics=statistics)

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    @app.exception_handler(ElqueryError)
    async def user_error(request: Request, exc: ElqueryError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=422)

    def get_and_post(path: str) -> Callable[[Endpoint], Endpoint]:
        """Serve ``path`` by GET and POST as two operations, each with its own OpenAPI operation id
        (``link_get``, ``link_post``; one route of both methods gives both the same id)."""
        def register(endpoint: Endpoint) -> Endpoint:
            for method in ("GET", "POST"):
                app.add_api_route(path, endpoint, methods=[method],
                                  operation_id=f"{endpoint.__name__}_{method.lower()}")
            return endpoint
        return register

    working = asyncio.Semaphore(limits.concurrency)

    async def limited(function: Any, *args: Any) -> Any:
        async with working:
            return await run_in_threadpool(function, *args)

    async def bounded(function: Any, *args: Any) -> Any:
        try:
            return await asyncio.wait_for(limited(function, *args), limits.seconds)
        except asyncio.TimeoutError:
            raise RequestError(503, f"the request took longer than {limits.seconds:g} s") from None

    async def parameters(request: Request) -> dict[str, Any]:
        """Query-string parameters, then a form or JSON body (POST)."""
        values: dict[str, Any] = dict(request.query_params)
        if request.method == "POST":
            body = await request.body()
            if len(body) > 1 << 20:
                raise RequestError(413, "request body larger than 1 MiB")
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                raise RequestError(400, "the request body is not valid UTF-8") from None
            if request.headers.get("content-type", "").startswith("application/json"):
                import json

                try:
                    data = json.loads(text or "{}")
                except ValueError as exc:
                    raise RequestError(400, f"invalid JSON: {exc}") from None
                if not isinstance(data, dict):
                    raise RequestError(400, "expected a JSON object")
                values.update(data)
            else:
                from urllib.parse import parse_qsl

                values.update(parse_qsl(text, keep_blank_values=True))
        return values

    def number(values: dict[str, Any], name: str) -> float | None:
        value = values.get(name)
        if value in (None, ""):
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise RequestError(422, f"{name}: {value!r} is not a number") from None

    def queries_of(values: dict[str, Any]) -> list[tuple[str, str]]:
        if "queries" in values:
            given = values["queries"]
            if isinstance(given, dict):
                pairs = [(str(q), t) for q, t in given.items()]
            elif isinstance(given, list):
                pairs = [(f"q{i}", t) for i, t in enumerate(given, 1)]
            else:
                raise RequestError(422, "queries: expected a list of queries or an object {qid: query}")
        elif "q" in values or "text" in values:
            pairs = [(str(values.get("qid", "q1")), values.get("q", values.get("text")))]
        else:
            raise RequestError(422, "give a query (q) or a list of queries (queries)")
        if len(pairs) > limits.max_batch:
            raise RequestError(413, f"{len(pairs)} queries in one request; the limit is {limits.max_batch}")
        for qid, text in pairs:
            if not isinstance(text, str):
                raise RequestError(422, f"query {qid!r}: expected a string")
            check_query_text(text, qid if "queries" in values else None)  # a blank one: 422, as the CLI's error
        return pairs

    def tagme_request(values: dict[str, Any]) -> tuple[Any, str]:
        """The TAGME linker and the ``text`` of a TAGME-style request."""
        if artefacts.tagme_linker is None:
            raise RequestError(422, "the service was started without --tagme")
        text = values.get("text")
        if not isinstance(text, str):
            raise RequestError(422, "text: expected a string")
        return artefacts.tagme_linker, check_query_text(text)

    def tagme_answer(key: str, items: list[dict[str, Any]], values: dict[str, Any], started: float) -> JSONResponse:
        """TAGME's answer envelope: the items, lang, time (ms) and timestamp."""
        return JSONResponse({key: items, "lang": values.get("lang", "en"),
                             "time": round(1000 * (time.perf_counter() - started)),
                             "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat()})

    def link_batch(linker: Any, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return [jsonl_record(linker.result(text, qid)) for qid, text in pairs]

    def linker_of(values: dict[str, Any]) -> tuple[str, Any]:
        """The ``method`` of a request (default mlmcg) and its linker, with the request's
        commonness_threshold, gif_threshold and top_ranked, as ``elquery link``."""
        method = values.get("method", "mlmcg")
        if method == "tagme":
            if artefacts.tagme_linker is None:
                raise RequestError(422, "method tagme: the service was started without --tagme")
            return method, artefacts.tagme_linker
        top_ranked = str(values.get("top_ranked", "false")).lower() in ("1", "true", "yes")
        return method, artefacts.linker(method, number(values, "commonness_threshold"),
                                        number(values, "gif_threshold"), top_ranked, limits.max_query_tokens)

    @get_and_post("/link")
    async def link(request: Request) -> JSONResponse:
        """Link one query (``q``) or several (``queries``): method, commonness_threshold,
        gif_threshold, top_ranked as ``elquery link``; answers as its jsonl format."""
        values = await parameters(request)
        pairs = queries_of(values)
        method, linker = linker_of(values)
        if len(pairs) == 1 and method != "tagme":
            # GIF's work on one query is bounded by its length (a few ms at the limit): doing it here
            # costs less than the hand-off to a thread, which took most of a request's CPU.
            return JSONResponse({"results": link_batch(linker, pairs)})
        return JSONResponse({"results": await bounded(link_batch, linker, pairs)})

    @get_and_post("/rank")
    async def rank(request: Request) -> JSONResponse:
        """Entity retrieval over the whole index: ``q``, model, k, params as ``elquery rank``."""
        values = await parameters(request)
        pairs = queries_of(values)
        name = values.get("model", "mlm")
        if name not in MODEL_HELP:
            raise RequestError(422, f"unknown model {name!r}; models are {', '.join(MODEL_HELP)}")
        k = number(values, "k")
        k = 100 if k is None else int(k)
        if not 1 <= k <= limits.max_k:
            raise RequestError(422, f"k must be between 1 and {limits.max_k}, got {k}")
        params = values.get("params", [])
        model = model_from_name(name, parse_params(params if isinstance(params, list) else [params]))
        linked = isinstance(model, EntityLinkingRetrieval)
        if not linked and "links" in values:
            raise RequestError(422, f"links go with the ELR models (sdm-elr, fsdm-elr, mlm-elr), not {name}")

        def ranked() -> list[dict[str, Any]]:
            queries: list[Any] = [text for _, text in pairs]
            if linked:
                queries = [LinkedQuery(text, tuple(links)) for text, links in zip(queries, query_links(values, pairs))]
            return [{"qid": qid, "query": text, "ranking": [{"rank": r.rank, "entity": r.entity, "score": r.score}
                                                              for r in artefacts.searcher.rank(query, model, k)]}
                    for (qid, text), query in zip(pairs, queries)]
        return JSONResponse({"results": await bounded(ranked)})

    def query_links(values: dict[str, Any], pairs: list[tuple[str, str]]) -> list[list[tuple[Any, Any]]]:
        """The linked entities of each query of an ELR ``/rank`` request: the request's ``links``
        (a list of ``{"entity", "score"}`` for one query, or an object of such lists by qid), else
        what the service's linker finds (``method``, default mlmcg, as ``/link``), by the rules of
        ``elquery rank --links`` over ``elquery link --format jsonl`` output."""
        given = values.get("links")
        if given is None:
            linker = artefacts.linker(values.get("method", "mlmcg"), number(values, "commonness_threshold"),
                                      number(values, "gif_threshold"), False, limits.max_query_tokens)
            return [record_links(jsonl_record(linker.result(text, qid)), f"query {qid!r}") for qid, text in pairs]
        if isinstance(given, list) and len(pairs) == 1:
            given = {pairs[0][0]: given}
        if not isinstance(given, dict):
            raise RequestError(422, "links: expected a list of {\"entity\", \"score\"} (one query) or an object of "
                               "such lists by qid")
        return [record_links({"links": given.get(qid, [])}, f"links of query {qid!r}") for qid, _ in pairs]

    @app.get("/entity/{entity:path}")
    async def entity(entity: str) -> JSONResponse:
        """An entity's names (as indexed) and aliases with commonness; any entity form."""
        canonical = canonical_entity_id(entity)
        document = artefacts.entity_index.document(canonical) if canonical else None
        if document is None:
            raise RequestError(404, f"entity {entity!r} is not in the index")
        aliases = [{"form": a.form, "count": a.count, "commonness": a.commonness, "sources": list(a.sources)}
                   for a in artefacts.store.aliases(canonical)[:1000]]  # type: ignore[arg-type]
        return JSONResponse({"entity": canonical, "names": document["names"].split("\n"), "aliases": aliases})

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        return {"index": {"path": str(artefacts.index), "entities": artefacts.entity_index.num_entities,
                          "metadata": artefacts.entity_index.metadata},
                "surface_forms": {"path": str(artefacts.surface_forms), "meta": artefacts.store.meta},
                "tagme": None if artefacts.tagme is None else str(artefacts.tagme),
                "provenance": artefacts.provenance, "limits": limits.__dict__,
                "params": None if artefacts.params is None else str(artefacts.params.path),
                "thresholds": artefacts.thresholds(), **statistics.as_dict()}

    @get_and_post("/tag")
    async def tag(request: Request) -> JSONResponse:
        """TAGME's REST answer: annotations with spot, start, end (character offsets), rho, title,
        id (the Wikipedia page id, where the artefact knows it from DBpedia's page_ids)."""
        values = await parameters(request)
        tagme, text = tagme_request(values)
        started = time.perf_counter()
        result = await bounded(tagme.result, text, "tag")
        dictionary = tagme.artefact.dictionary
        annotations = []
        for triple in result.scored:
            start, end = result.char_span(triple.mention)
            title = unquote(triple.entity[len("<dbpedia:"):-1]).replace("_", " ")
            node = dictionary.node(triple.entity)
            page_id = None if node is None else dictionary.page_id(node)
            annotations.append({"spot": text[start:end], "start": start, "end": end, "rho": triple.score,
                                "title": title, "dbpedia_id": triple.entity,
                                **({} if page_id is None else {"id": page_id})})
        return tagme_answer("annotations", annotations, values, started)

    @app.post("/nif")
    async def nif(request: Request) -> Response:
        """GERBIL's NIF interface: a Turtle NIF document in, annotated (docs/serve.md)."""
        from elquery.serve.nif import NifError, annotate

        body = await request.body()
        if len(body) > 1 << 20:
            raise RequestError(413, "request body larger than 1 MiB")
        values = dict(request.query_params)
        method = values.get("method", "mlmcg")
        linker = artefacts.tagme_linker if method == "tagme" else artefacts.linker(
            method, number(values, "commonness_threshold"), number(values, "gif_threshold"), False,
            limits.max_query_tokens)
        if linker is None:
            raise RequestError(422, "method tagme: the service was started without --tagme")
        try:
            turtle = await bounded(annotate, body, lambda text: linker.result(text, "nif"))
        except NifError as exc:
            raise RequestError(400, str(exc)) from None
        return Response(turtle, media_type="text/turtle")

    @get_and_post("/spot")
    async def spot(request: Request) -> JSONResponse:
        """TAGME's spotting: the mentions of ``text`` (character offsets) with their link probability."""
        values = await parameters(request)
        tagme, text = tagme_request(values)
        started = time.perf_counter()

        def spots() -> list[dict[str, Any]]:
            from elquery.indexing.normalize import tokenize

            tokens = tokenize(text)
            found = tagme.spots([t.text for t in tokens])
            return [{"spot": text[tokens[s.mention.start].start:tokens[s.mention.end - 1].end],
                     "start": tokens[s.mention.start].start, "end": tokens[s.mention.end - 1].end,
                     "lp": s.link_probability} for s in found]
        return tagme_answer("spots", await bounded(spots), values, started)

    @app.get("/", response_class=HTMLResponse)
    async def page() -> str:
        """The page, starting with a query that links on the served knowledge base and showing
        where each threshold comes from (:mod:`elquery.serve.example`)."""
        example = await run_in_threadpool(artefacts.example)
        settings = {"query": example.query, "method": example.method, "links": example.links,
                    "thresholds": artefacts.thresholds()}
        return (PAGE.read_text(encoding="utf-8").replace("{{QUERY}}", html.escape(example.query))
                .replace("{{SETTINGS}}", json.dumps(settings).replace("<", "\\u003c")))

    return app
