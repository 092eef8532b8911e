"""``elquery serve``: start the service (docs/serve.md) with uvicorn."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import Any

from elquery.base import COMMAND_SUMMARIES, ElqueryError, add_workers_argument, positive_int, workers_of
from elquery.indexing.artefacts import IF_BUILT, REQUIRED, add_artefacts_argument, resolve_artefact_args
from elquery.kb.query_length import DEFAULT_MAX_QUERY_TOKENS

WARM_UP_SECONDS = 20.0
TIME_LIMIT = 10.0
"""The default of ``--time-limit``: :attr:`elquery.serve.service.Limits.seconds` (not imported
from there, for the same reason)."""
"""The default of ``--warm-up`` (:mod:`elquery.serve.warm_up`; not imported from there: ``elquery
--help`` imports no more than the argparse layer)."""

_ENV = {"index": "ELQUERY_SERVE_INDEX", "surface_forms": "ELQUERY_SERVE_SURFACE_FORMS",
        "tagme": "ELQUERY_SERVE_TAGME", "demo": "ELQUERY_SERVE_DEMO", "params": "ELQUERY_SERVE_PARAMS",
        "model": "ELQUERY_SERVE_MODEL", "warm_up": "ELQUERY_SERVE_WARM_UP",
        "max_query_tokens": "ELQUERY_SERVE_MAX_QUERY_TOKENS", "time_limit": "ELQUERY_SERVE_TIME_LIMIT"}


def register(commands: Any) -> None:
    serve = commands.add_parser(
        "serve", help=COMMAND_SUMMARIES["serve"],
        description="Serve /link, /rank, /entity/ID, /tag, /health, /stats and a web page at / over one set of "
        "artefacts (without --index and --surface-forms: the bundled demo knowledge base, with its TAGME "
        "artefact). Each worker process opens the artefacts once. See docs/serve.md.")
    serve.add_argument("--index", help="entity index (elquery index dbpedia)")
    serve.add_argument("--surface-forms", metavar="SF.db", help="surface-form store (elquery index surface-forms)")
    serve.add_argument("--tagme", metavar="DIR", help="TAGME artefact, for method tagme, /tag and /spot "
                       "(without --index: the demo knowledge base's)")
    serve.add_argument("--model", metavar="MODEL", help="LTR model file (elquery ltr train), trained on features "
                       "of the served index and surface forms: serves method ltr (LTR-greedy, GIF on the model's "
                       "scores; its ranking is LTR), checked before the server starts")
    add_artefacts_argument(serve, "--index, --surface-forms and --tagme (its TAGME artefact when built)")
    serve.add_argument("--params", metavar="FILE",
                       help="tuned thresholds: the params.json `elquery experiment` writes into its --out folder "
                       "(c and s per method, TAGME's rho_na), used where a request gives none; otherwise the demo "
                       "KB's defaults (without --index) or each method's; the page at / and /stats show which")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    add_workers_argument(serve, "server processes, each opening the artefacts once and answering requests")
    serve.add_argument("--warm-up", type=non_negative_seconds, default=WARM_UP_SECONDS, metavar="SECONDS",
                       help="each worker links queries of the knowledge base's titles for this long before it "
                       f"listens, so that no request meets a cold worker; /ready says what it did (default "
                       f"{WARM_UP_SECONDS:g}; 0: none)")
    serve.add_argument("--max-query-tokens", type=positive_int, default=DEFAULT_MAX_QUERY_TOKENS, metavar="N",
                       help="refuse a query or text longer than N normalized tokens with 422, at every endpoint "
                       f"(default {DEFAULT_MAX_QUERY_TOKENS}, as elquery link and rank)")
    serve.add_argument("--time-limit", type=positive_seconds, default=TIME_LIMIT, metavar="SECONDS",
                       help="answer 503 to a request whose work, waiting included, takes longer, and stop that work "
                       f"(default {TIME_LIMIT:g})")
    serve.set_defaults(func=_serve)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    check_served_arguments(args)
    if args.params is not None:
        from elquery.linking.params import load_params

        load_params(args.params)  # a bad file is one line here, not an error in every worker
        os.environ[_ENV["params"]] = str(Path(args.params).resolve())
    else:
        os.environ.pop(_ENV["params"], None)
    if args.index is None:
        from elquery.indexing.demo import demo_knowledge_base

        index, surface_forms, tagme = demo_knowledge_base()
        args.tagme = args.tagme or tagme
        os.environ[_ENV["demo"]] = "1"
    else:
        index, surface_forms = args.index, args.surface_forms
    os.environ[_ENV["index"]], os.environ[_ENV["surface_forms"]] = str(index), str(surface_forms)
    os.environ["ELQUERY_SERVE_HOST"] = args.host  # for /mcp's DNS-rebinding protection (elquery.mcp.server)
    if args.tagme:
        os.environ[_ENV["tagme"]] = str(args.tagme)
    _check_artefacts(Path(index), Path(surface_forms), Path(args.tagme) if args.tagme else None)
    if args.model is not None:
        _check_model(Path(args.model), Path(index), Path(surface_forms))
        os.environ[_ENV["model"]] = str(Path(args.model).resolve())
    else:
        os.environ.pop(_ENV["model"], None)
    os.environ[_ENV["warm_up"]] = repr(args.warm_up)
    os.environ[_ENV["max_query_tokens"]] = str(args.max_query_tokens)
    os.environ[_ENV["time_limit"]] = repr(args.time_limit)
    from elquery.linking.ltr.threads import share_cores

    args.workers = workers_of(args)
    share_cores(args.workers)  # a bad ELQUERY_LTR_THREADS is one line here, not an error in every worker
    print(f"elquery serve: http://{args.host}:{args.port}/ ({args.workers} worker(s))", file=sys.stderr)
    config = uvicorn.Config("elquery.serve.cli:app_from_environment", factory=True, host=args.host, port=args.port,
                            workers=args.workers, log_level="warning")
    if args.workers == 1:
        uvicorn.Server(config).run()
    else:
        from elquery.serve import workers

        workers.run(config, _listening_socket(args.host, args.port))
    return 0


def check_served_arguments(args: argparse.Namespace) -> None:
    """The artefact options (``--artefacts`` resolved; ``--index`` and ``--surface-forms``
    together or neither) and ``--port`` of a command that serves (``serve``, ``mcp``): one line
    for a mistake."""
    resolve_artefact_args(args, index=REQUIRED, surface_forms=REQUIRED, tagme=IF_BUILT)
    if (args.index is None) != (args.surface_forms is None):
        raise ElqueryError("give --index and --surface-forms together (or neither, for the demo knowledge base)")
    if not 0 < args.port < 65536:
        raise ElqueryError(f"--port must be between 1 and 65535, got {args.port}")


def _listening_socket(host: str, port: int) -> socket.socket:
    """The address the worker processes serve, bound (:func:`elquery.serve.workers.bound_socket`:
    protocol TCP, so accepted connections get TCP_NODELAY; ``SO_REUSEPORT``, so each worker binds
    a socket of its own to it); a bad host or an address in use is one line."""
    from elquery.serve.workers import bound_socket

    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)[0]
    except socket.gaierror as exc:
        raise ElqueryError(f"--host {host}: {exc.strerror}") from None
    try:
        bound_socket(family, address, reuse_port=False).close()  # in use, even by another reuse-port group: refused
        sock = bound_socket(family, address)
    except OSError as exc:
        raise ElqueryError(f"{host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def _check_artefacts(index: Path, surface_forms: Path, tagme: Path | None) -> None:
    """A missing or wrong artefact is one line before serving. Nothing here starts Java: a JVM in
    the parent of uvicorn's worker processes slows every response of theirs by a TCP round trip."""
    from elquery.kb.artefacts import check_artefact

    for kind, path in (("entity index", index), ("surface-form store", surface_forms), ("TAGME artefact", tagme)):
        if path is not None:
            check_artefact(path, kind)


def _check_model(model: Path, index: Path, surface_forms: Path) -> None:
    """The model file loads for the served artefacts, as each method reading a model checks it
    (an elquery LTR model for elquery's features, trained on features of this index and store):
    one line otherwise. No Java: the metadata and the artefacts' provenance records only."""
    from elquery.linking.methods import METHODS

    for method in METHODS:
        if "model" in method.artefacts and method.check is not None:
            method.check({"index": index, "surface_forms": surface_forms}, {"model": model})


def positive_seconds(text: str) -> float:
    """``--time-limit``'s argparse type: a number of seconds above 0."""
    seconds = non_negative_seconds(text)
    if seconds == 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return seconds


def non_negative_seconds(text: str) -> float:
    """``--warm-up``'s argparse type: a number of seconds, 0 or more."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return seconds


def app_from_environment() -> Any:
    """The application over the artefacts named in the environment (one per worker process),
    warming up at start-up, before it serves (:mod:`elquery.serve.warm_up`)."""
    from elquery.linking.params import load_params
    from elquery.serve.app import Artefacts, create_app
    from elquery.serve.service import Limits, stop_work_on_signals
    from elquery.serve.warm_up import warm_up_at_start

    stop_work_on_signals()  # SIGTERM (uvicorn's handler holds it now) stops the requests' work too
    tagme, params, model = (os.environ.get(_ENV[name]) for name in ("tagme", "params", "model"))
    artefacts = Artefacts(Path(os.environ[_ENV["index"]]), Path(os.environ[_ENV["surface_forms"]]),
                          Path(tagme) if tagme else None, demo_thresholds=bool(os.environ.get(_ENV["demo"])),
                          params=load_params(params) if params else None, model=Path(model) if model else None)
    limits = Limits(max_query_tokens=int(os.environ.get(_ENV["max_query_tokens"], DEFAULT_MAX_QUERY_TOKENS)),
                    seconds=float(os.environ.get(_ENV["time_limit"], TIME_LIMIT)))
    app = create_app(artefacts, limits)
    warm_up_at_start(app, artefacts, float(os.environ.get(_ENV["warm_up"], WARM_UP_SECONDS)))
    return app
