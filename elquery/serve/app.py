"""The service: a FastAPI application over one set of artefacts, opened once per worker process.

Answers are the Python API's (and so the command line's): ``/link`` returns the records of
``elquery link --format jsonl`` (:func:`elquery.formats.link_output.jsonl_record`), ``/rank`` the ranking
of ``elquery rank``. Linkers and the searcher are shared between the server's threads (they are
thread-safe). Every request is bounded: query length (the linker's ``max_query_tokens``), batch
size, ``k``, and a time limit; a request over a limit gets a JSON error (413, 422 or 503), never a
crash of the worker. Each door is a router of :mod:`elquery.serve.routes`; what they share is
:mod:`elquery.serve.service`.

Every refusal has the one error shape, ``{"error": "<one line>"}``: the service's own
(:func:`~elquery.serve.service.answer_errors`) and those of the framework beneath it
(:func:`answer_framework_errors`: a path that is no door, 404; a method a door does not take,
405; a JSON body nested deeper than the parser goes, 400). A client that hangs up before its body
has arrived gets no answer and leaves no traceback in the log.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match

from elquery.serve.artefacts import Artefacts
from elquery.serve.routes import entity, link, nif, page, rank, stats, tagme
from elquery.serve.service import Limits, Service, answer_errors
from elquery.serve.statistics import Counting

__all__ = ["Artefacts", "Limits", "create_app"]

DOORS = (link.routes, rank.routes, entity.routes, stats.routes, tagme.routes, nif.routes, page.routes)


def create_app(artefacts: Artefacts, limits: Limits = Limits()) -> FastAPI:
    """The application serving ``artefacts`` within ``limits``."""
    # /docs (Swagger UI) and /redoc load their scripts and styles from the installed fastapi-offline
    # package, not from a CDN: the documentation works offline
    app = FastAPIOffline(title="elquery", description="Entity linking in queries and entity retrieval (docs/serve.md).")
    app.state.service = service = Service(artefacts, limits)
    app.add_middleware(Counting, statistics=service.statistics)
    answer_errors(app)
    answer_framework_errors(app)
    for routes in DOORS:
        routes.add_to(app, service)
    from elquery.mcp.server import mount

    mount(app, service)  # the MCP server at /mcp (docs/mcp.md)
    return app


def answer_framework_errors(app: FastAPI) -> None:
    """The error shape for what the framework refuses before (or beneath) a route: an unknown
    path (404), a method the path does not take (405, naming those it takes, in ``Allow`` too),
    a parameter FastAPI itself validates (422), a JSON body nested too deeply for the parser
    (400); a client gone mid-body is answered with nothing."""
    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return JSONResponse({"error": f"no such path: {request.url.path}"}, status_code=404)
        if exc.status_code == 405:
            allowed = allowed_methods(request)
            return JSONResponse({"error": f"method {request.method} not allowed on {request.url.path} "
                                          f"(allowed: {', '.join(allowed)})"},
                                status_code=405, headers={"Allow": ", ".join(allowed)})
        return JSONResponse({"error": " ".join(str(exc.detail).split())}, status_code=exc.status_code,
                            headers=exc.headers)

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        problems = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in exc.errors())
        return JSONResponse({"error": " ".join(problems.split())}, status_code=422)

    async def too_deep(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "the JSON body is nested too deeply"}, status_code=400)

    async def gone(request: Request, exc: Exception) -> Response:
        return Response(status_code=400)  # never sent: the client has gone

    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(RecursionError, too_deep)
    app.add_exception_handler(ClientDisconnect, gone)


def allowed_methods(request: Request) -> list[str]:
    """The methods the routes of the request's path take (each door's GET and POST are two routes)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        if route.matches(request.scope)[0] is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return sorted(methods - {"HEAD"})
