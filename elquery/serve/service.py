"""What every route of the service shares: its :class:`Limits`, the :class:`Service` of one
application (artefacts, limits, statistics, bounded execution), the parameters and queries of a
request, and the error shape: a refused request gets ``{"error": "<one line>"}`` with status 400,
404, 413, 422 or 503, never a crash of the worker."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from elquery.base import ElqueryError
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.retrieval.queries import check_query_text
from elquery.serve.artefacts import Artefacts
from elquery.serve.statistics import Statistics

Endpoint = Callable[[Request], Awaitable[Response]]
MAX_BODY = 1 << 20


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


class RequestError(Exception):
    """A request the service refuses: HTTP status and one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Service:
    """One application's artefacts, limits and statistics, and the work it runs bounded."""

    artefacts: Artefacts
    limits: Limits
    statistics: Statistics = field(default_factory=Statistics)

    def __post_init__(self) -> None:
        self._working = asyncio.Semaphore(self.limits.concurrency)

    async def bounded(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` in a thread, at most ``limits.concurrency`` at once, refused (503)
        after ``limits.seconds``."""
        async def limited() -> Any:
            async with self._working:
                return await run_in_threadpool(function, *args)
        try:
            return await asyncio.wait_for(limited(), self.limits.seconds)
        except asyncio.TimeoutError:
            raise RequestError(503, f"the request took longer than {self.limits.seconds:g} s") from None

    def linker(self, values: dict[str, Any], top_ranked: bool = False, tagme: bool = True) -> tuple[str, Any]:
        """The ``method`` of a request (default mlmcg) and its linker, with the request's
        commonness_threshold and gif_threshold (and ``top_ranked`` where the route takes it), as
        ``elquery link``; ``tagme``: whether the route links with TAGME too."""
        method = values.get("method", "mlmcg")
        if tagme and method == "tagme":
            if self.artefacts.tagme_linker is None:
                raise RequestError(422, "method tagme: the service was started without --tagme")
            return method, self.artefacts.tagme_linker
        ranked = top_ranked and str(values.get("top_ranked", "false")).lower() in ("1", "true", "yes")
        return method, self.artefacts.linker(method, number(values, "commonness_threshold"),
                                             number(values, "gif_threshold"), ranked, self.limits.max_query_tokens)

    def queries(self, values: dict[str, Any]) -> list[tuple[str, str]]:
        """The (qid, query) pairs of a request: ``q`` (and ``qid``, default q1) or ``text``, or
        ``queries`` (a list, numbered q1, q2, ..., or an object {qid: query}); at most
        ``limits.max_batch``, none blank."""
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
        if len(pairs) > self.limits.max_batch:
            raise RequestError(413, f"{len(pairs)} queries in one request; the limit is {self.limits.max_batch}")
        for qid, text in pairs:
            if not isinstance(text, str):
                raise RequestError(422, f"query {qid!r}: expected a string")
            check_query_text(text, qid if "queries" in values else None)  # a blank one: 422, as the CLI's error
        return pairs


def service_of(request: Request) -> Service:
    """The service of the application answering ``request``."""
    service: Service = request.app.state.service
    return service


async def body_of(request: Request) -> bytes:
    """The request's body, at most :data:`MAX_BODY` bytes (else 413)."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise RequestError(413, "request body larger than 1 MiB")
    return body


async def parameters(request: Request) -> dict[str, Any]:
    """Query-string parameters, then a form or JSON body (POST)."""
    values: dict[str, Any] = dict(request.query_params)
    if request.method == "POST":
        try:
            text = (await body_of(request)).decode("utf-8")
        except UnicodeDecodeError:
            raise RequestError(400, "the request body is not valid UTF-8") from None
        if request.headers.get("content-type", "").startswith("application/json"):
            try:
                data = json.loads(text or "{}")
            except ValueError as exc:
                raise RequestError(400, f"invalid JSON: {exc}") from None
            if not isinstance(data, dict):
                raise RequestError(400, "expected a JSON object")
            values.update(data)
        else:
            values.update(parse_qsl(text, keep_blank_values=True))
    return values


def number(values: dict[str, Any], name: str) -> float | None:
    """The number ``values[name]``; None when absent or empty."""
    value = values.get(name)
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RequestError(422, f"{name}: {value!r} is not a number") from None


class Routes:
    """The routes of one door, declared by decorators and added to an application by
    :meth:`add_to` as its own routes (FastAPI's ``include_router`` would add one opaque route
    standing for the whole router)."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, Callable[..., Any], str, dict[str, Any]]] = []

    def route(self, path: str, method: str, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Serve ``path`` by ``method`` (``options``: of :meth:`FastAPI.add_api_route`)."""
        def register(endpoint: Callable[..., Any]) -> Callable[..., Any]:
            self._routes.append((path, endpoint, method, options))
            return endpoint
        return register

    def get_and_post(self, path: str) -> Callable[[Endpoint], Endpoint]:
        """Serve ``path`` by GET and POST as two operations, each with its own OpenAPI operation id
        (``link_get``, ``link_post``; one route of both methods gives both the same id)."""
        def register(endpoint: Endpoint) -> Endpoint:
            for method in ("GET", "POST"):
                self.route(path, method, operation_id=f"{endpoint.__name__}_{method.lower()}")(endpoint)
            return endpoint
        return register

    def add_to(self, app: FastAPI) -> None:
        for path, endpoint, method, options in self._routes:
            app.add_api_route(path, endpoint, methods=[method], **options)


def answer_errors(app: FastAPI) -> None:
    """The error shape: a refused request (:class:`RequestError`) or a user mistake
    (:class:`ElqueryError`, 422) answers ``{"error": message}``."""
    async def refused(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status if isinstance(exc, RequestError) else 422)

    app.add_exception_handler(RequestError, refused)
    app.add_exception_handler(ElqueryError, refused)
