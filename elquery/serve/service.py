"""What every route of the service shares: its :class:`Limits`, the :class:`Service` of one
application (artefacts, limits, statistics, bounded execution), the parameters and queries of a
request, and the error shape: a refused request gets ``{"error": "<one line>"}`` with status 400,
404, 413, 422 or 503, never a crash of the worker."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from elquery.base import ElqueryError
from elquery.kb.query_length import check_query_length
from elquery.linking.batch import ResultLinker
from elquery.linking.deadline import OutOfTime, stop_all_work, stopping, within
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.linking.methods import DEFAULT_METHOD, METHODS, LinkingMethod
from elquery.registry import validate_parameters
from elquery.formats.queries import check_query_text
from elquery.serve.artefacts import Artefacts
from elquery.serve.schema import LINKING_PARAMETERS, TOP_RANKED, FieldsOf, check_request, operation
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
        after ``limits.seconds``. The work itself stops then too: ``function``'s loops check the
        request's deadline (:func:`elquery.linking.deadline.check_deadline`), so a refused request
        leaves no work running behind its answer (a thread cannot be killed from outside)."""
        at = time.monotonic() + self.limits.seconds
        late = RequestError(503, f"the request took longer than {self.limits.seconds:g} s")

        async def limited() -> Any:
            async with self._working:
                return await run_in_threadpool(within, at, function, *args)
        try:
            return await asyncio.wait_for(limited(), self.limits.seconds)
        except (asyncio.TimeoutError, OutOfTime):
            raise (RequestError(503, "the server is stopping") if stopping() else late) from None

    def linker(self, values: dict[str, Any], top_ranked: bool = False) -> tuple[LinkingMethod, ResultLinker]:
        """The ``method`` of a request (a name of the registry, default :data:`DEFAULT_METHOD`) and
        its linker, with the request's values of the method's parameters (and ``top_ranked``
        where the route takes it), checked by the registry as ``elquery link`` checks its options."""
        method = METHODS.get(values.get("method", DEFAULT_METHOD))
        given = {name: values[name] for name in LINKING_PARAMETERS if values.get(name) not in (None, "")}
        finder = values.get(TOP_RANKED.name) if top_ranked else None
        ranked = finder not in (None, "") and TOP_RANKED.validate(finder)
        return method, self.artefacts.linker(method, validate_parameters(method, given), ranked,
                                             self.limits.max_query_tokens)

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
            named = qid if "queries" in values else None
            check_query_text(text, named)  # a blank one: 422, as the CLI's error
            check_query_length(text, self.limits.max_query_tokens, named)  # 422, as the CLI's error
        return pairs


def stop_work_on_signals() -> None:
    """From SIGTERM or SIGINT on, the work of every request of this process stops at its next
    deadline check (:func:`~elquery.linking.deadline.stop_all_work`), then the signal's handler
    (uvicorn's: stop serving once the requests in flight are answered) runs: a server ends within
    moments whatever it is doing. Called by a worker process as it loads the application, in its
    main thread (elsewhere signals cannot be handled: a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, partial(_stop_then, signal.getsignal(number)))


def _stop_then(previous: Any, number: int, frame: Any) -> None:
    stop_all_work()
    if callable(previous):
        previous(number, frame)
    elif previous != signal.SIG_IGN:  # the default action: end the process as the signal does
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)


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
    """Query-string parameters, then a form or JSON body (POST); a name repeated in a query string
    or a form has the list of its values (``params=k1=0.9&params=b=0.5``)."""
    values = gathered(request.query_params.multi_items())
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
            values.update(gathered(parse_qsl(text, keep_blank_values=True)))
    return check_request(values)


def gathered(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Name-value pairs as a dict, the values of a repeated name as a list."""
    values: dict[str, list[str]] = {}
    for name, value in pairs:
        values.setdefault(name, []).append(value)
    return {name: found[0] if len(found) == 1 else found for name, found in values.items()}


class Routes:
    """The routes of one door, declared by decorators and added to an application by
    :meth:`add_to` as its own routes (FastAPI's ``include_router`` would add one opaque route
    standing for the whole router); ``fields``: the request parameters a route documents in the
    OpenAPI schema (:mod:`elquery.serve.schema`)."""

    def __init__(self) -> None:
        self._routes: list[tuple[str, Callable[..., Any], str, FieldsOf | None, str | None, dict[str, Any]]] = []

    def route(self, path: str, method: str, fields: FieldsOf | None = None, body: str | None = None,
              **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Serve ``path`` by ``method`` (``options``: of :meth:`FastAPI.add_api_route`); ``body``:
        the media type of a body that holds no parameters (they are in the query string)."""
        def register(endpoint: Callable[..., Any]) -> Callable[..., Any]:
            self._routes.append((path, endpoint, method, fields, body, options))
            return endpoint
        return register

    def get_and_post(self, path: str, fields: FieldsOf | None = None) -> Callable[[Endpoint], Endpoint]:
        """Serve ``path`` by GET and POST as two operations, each with its own OpenAPI operation id
        (``link_get``, ``link_post``; one route of both methods gives both the same id)."""
        def register(endpoint: Endpoint) -> Endpoint:
            for method in ("GET", "POST"):
                self.route(path, method, fields, operation_id=f"{endpoint.__name__}_{method.lower()}")(endpoint)
            return endpoint
        return register

    def add_to(self, app: FastAPI, service: Service) -> None:
        for path, endpoint, method, fields, body, options in self._routes:
            documented = None if fields is None else operation(fields(service), method, body)
            app.add_api_route(path, endpoint, methods=[method], openapi_extra=documented, **options)


def answer_errors(app: FastAPI) -> None:
    """The error shape: a refused request (:class:`RequestError`) or a user mistake
    (:class:`ElqueryError`, 422) answers ``{"error": message}``."""
    async def refused(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status if isinstance(exc, RequestError) else 422)

    app.add_exception_handler(RequestError, refused)
    app.add_exception_handler(ElqueryError, refused)
