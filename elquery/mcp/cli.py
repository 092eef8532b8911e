"""``elquery mcp``: the MCP server (docs/mcp.md) over stdio, or over streamable HTTP with uvicorn."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from elquery.base import COMMAND_SUMMARIES
from elquery.indexing.artefacts import add_artefacts_argument

TRANSPORTS = ("stdio", "http")


def register(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp", help=COMMAND_SUMMARIES["mcp"],
        description="Serve elquery's tools (link, rank, entity, surface_form, artefacts, evaluate) to an MCP client "
        "over one set of artefacts (without --index and --surface-forms: the bundled demo knowledge base, with its "
        "TAGME artefact): over stdio (the client starts the command), or over streamable HTTP at /mcp. The answers "
        "and limits are the service's (elquery serve). See docs/mcp.md.")
    mcp.add_argument("--index", help="entity index (elquery index dbpedia)")
    mcp.add_argument("--surface-forms", metavar="SF.db", help="surface-form store (elquery index surface-forms)")
    mcp.add_argument("--tagme", metavar="DIR", help="TAGME artefact, for method tagme and the entities' page ids "
                     "(without --index: the demo knowledge base's)")
    mcp.add_argument("--model", metavar="MODEL", help="LTR model file (elquery ltr train) trained on features of the "
                     "served index and surface forms: serves method ltr")
    add_artefacts_argument(mcp, "--index, --surface-forms and --tagme (its TAGME artefact when built)")
    mcp.add_argument("--params", metavar="FILE", help="tuned thresholds: the params.json `elquery experiment` writes, "
                     "used where a call gives none (as elquery serve --params)")
    mcp.add_argument("--transport", choices=TRANSPORTS, default="stdio",
                     help="stdio (default: the client runs this command and talks on its standard input and output) "
                     "or http (streamable HTTP at http://HOST:PORT/mcp)")
    mcp.add_argument("--host", default="127.0.0.1", help="with --transport http: address to listen on (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8000, help="with --transport http: port (default 8000)")
    mcp.set_defaults(func=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    from elquery.linking.params import load_params
    from elquery.serve.cli import _check_artefacts, _check_model, _listening_socket, check_served_arguments

    check_served_arguments(args)

    params = load_params(args.params) if args.params is not None else None
    sock = _listening_socket(args.host, args.port) if args.transport == "http" else None
    with _stdout_to_stderr(args.transport == "stdio"):  # stdout is the protocol's: nothing else may reach it
        if args.index is None:
            from elquery.indexing.demo import demo_knowledge_base

            index, surface_forms, tagme = demo_knowledge_base()
            args.tagme = args.tagme or tagme
        else:
            index, surface_forms = Path(args.index), Path(args.surface_forms)
        tagme_path = Path(args.tagme) if args.tagme else None
        _check_artefacts(Path(index), Path(surface_forms), tagme_path)
        if args.model is not None:
            _check_model(Path(args.model), Path(index), Path(surface_forms))
        from elquery.mcp.server import create_server
        from elquery.serve.artefacts import Artefacts
        from elquery.serve.service import Limits, Service

        artefacts = Artefacts(Path(index), Path(surface_forms), tagme_path, demo_thresholds=args.index is None,
                              params=params, model=Path(args.model).resolve() if args.model else None)
        server = create_server(Service(artefacts, Limits()))
    if sock is None:
        server.run("stdio")
        return 0
    import uvicorn

    from elquery.mcp.server import PATH, http_app

    print(f"elquery mcp: http://{args.host}:{args.port}{PATH}", file=sys.stderr)
    config = uvicorn.Config(http_app(server, args.host), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


@contextmanager
def _stdout_to_stderr(active: bool) -> Iterator[None]:
    """Within the block (opening the artefacts: Java, a first build of the demo), whatever is
    written to standard output, by Python or by native code, goes to standard error."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
