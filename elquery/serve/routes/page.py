"""The page at ``/``: a form that links a query, starting with one that links on the served
knowledge base and showing where each threshold comes from (:mod:`elquery.serve.example`)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from elquery.serve.service import Routes, service_of

PAGE = Path(__file__).parents[1] / "page.html"
routes = Routes()


@routes.route("/", "GET", response_class=HTMLResponse)
async def page(request: Request) -> str:
    """The page, starting with a query that links on the served knowledge base and showing
    where each threshold comes from (:mod:`elquery.serve.example`)."""
    artefacts = service_of(request).artefacts
    example = await run_in_threadpool(artefacts.example)
    settings = {"query": example.query, "method": example.method, "links": example.links,
                "thresholds": artefacts.thresholds()}
    return (PAGE.read_text(encoding="utf-8").replace("{{QUERY}}", html.escape(example.query))
            .replace("{{SETTINGS}}", json.dumps(settings).replace("<", "\\u003c")))
