"""The service: a FastAPI application over one set of artefacts, opened once per worker process.

Answers are the Python API's (and so the command line's): ``/link`` returns the records of
``elquery link --format jsonl`` (:func:`elquery.formats.link_output.jsonl_record`), ``/rank`` the ranking
of ``elquery rank``. Linkers and the searcher are shared between the server's threads (they are
thread-safe). Every request is bounded: query length (the linker's ``max_query_tokens``), batch
size, ``k``, and a time limit; a request over a limit gets a JSON error (413, 422 or 503), never a
crash of the worker. Each door is a router of :mod:`elquery.serve.routes`; what they share is
:mod:`elquery.serve.service`.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

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
    for routes in DOORS:
        routes.add_to(app, service)
    return app
