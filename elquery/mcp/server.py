"""The MCP server over one :class:`~elquery.serve.service.Service` (its artefacts, limits and
bounded execution), and its streamable-HTTP endpoint ``/mcp`` on the service's application.

Over HTTP the server is stateless and answers in JSON (the SDK's ``stateless_http`` and
``json_response``): each POST is a whole exchange, so any worker process of ``elquery serve
--workers N`` answers any call, as for ``/link``. It takes POST only: a stateless server never
sends a message of its own, so the SDK's GET stream would only hold a connection open for ever
(and DELETE ends a session it has none of). On a loopback host the SDK's DNS-rebinding
protection accepts only loopback Host and Origin headers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from elquery.base import ElqueryError, one_line
from elquery.mcp.arguments import ToolBody, Values, tool_function
from elquery.mcp.tools import TOOLS
from elquery.serve.service import RequestError, Service

if TYPE_CHECKING:
    from fastapi import FastAPI
    from starlette.types import Receive, Scope, Send

PATH = "/mcp"
HOST_VARIABLE = "ELQUERY_SERVE_HOST"
"""The host ``elquery serve`` listens on, for the DNS-rebinding protection of its ``/mcp``."""
INSTRUCTIONS = (
    "elquery links the entities of search queries to DBpedia (link), ranks the entities of a knowledge base for a "
    "query (rank), looks up entities (entity) and surface forms (surface_form), tells what it serves (artefacts) "
    "and evaluates runs against qrels (evaluate). Entities are ids <dbpedia:Title>.")


def create_server(service: Service) -> MCPServer:
    """The MCP server whose tools (:data:`elquery.mcp.tools.TOOLS`) answer over ``service``."""
    server: MCPServer = MCPServer("elquery", title="elquery", instructions=INSTRUCTIONS, log_level="WARNING")
    for tool in TOOLS:
        function = tool_function(tool.name, tool.fields(service), refusing(tool.body(service)))
        server.add_tool(function, name=tool.name, title=tool.title, description=tool.description,
                        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                                    idempotent_hint=True, open_world_hint=False))
    return server


def refusing(body: ToolBody) -> ToolBody:
    """``body``, a refused call (a user mistake or a request over a limit) a tool error with
    the service's one-line message."""
    async def call(values: Values) -> dict[str, Any]:
        try:
            return await body(values)
        except (ElqueryError, RequestError) as exc:
            raise ToolError(one_line(exc)) from None
    return call


class Endpoint:
    """``/mcp`` of an application: the streamable-HTTP transport of an MCP server (stateless,
    JSON answers), its session manager started with the application (:meth:`running`, a fresh
    one each time)."""

    def __init__(self, server: MCPServer, host: str) -> None:
        self.server = server
        self.host = host
        self._manager: Any = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self.server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True,
                                        host=self.host)
        manager = self.server.session_manager
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._manager is None:
            from fastapi.responses import JSONResponse

            await JSONResponse({"error": "the MCP endpoint is not started (the application's lifespan did not run)"},
                               status_code=503)(scope, receive, send)
            return
        await self._manager.handle_request(scope, receive, send)


def route(endpoint: Endpoint) -> Any:
    """The route of ``endpoint``: POST at :data:`PATH`."""
    from starlette.routing import Route

    return Route(PATH, endpoint, methods=["POST"])


def http_app(server: MCPServer, host: str) -> Any:
    """An application serving ``server`` alone at :data:`PATH` (``elquery mcp --transport http``)."""
    from starlette.applications import Starlette

    endpoint = Endpoint(server, host)

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[None]:
        async with endpoint.running():
            yield
    return Starlette(routes=[route(endpoint)], lifespan=lifespan)


def mount(app: FastAPI, service: Service, host: str | None = None) -> None:
    """Serve the MCP server over ``service`` at :data:`PATH` of ``app``, started and stopped with
    it; ``host``: where the application listens (default: :data:`HOST_VARIABLE`, else 127.0.0.1)."""
    endpoint = Endpoint(create_server(service), host or os.environ.get(HOST_VARIABLE, "127.0.0.1"))
    app.router.routes.append(route(endpoint))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with endpoint.running(), inner(application) as state:
            yield state
    app.router.lifespan_context = lifespan
