"""The page at ``/``: a form that links a query with a method of its menu (the methods of the
registry the service serves), starting with a query that links on the served knowledge base and
showing where each threshold comes from (:mod:`elquery.serve.example`)."""

from __future__ import annotations

import html
import json
import re
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
    menu = artefacts.menu()
    settings = {"query": example.query, "method": example.method, "links": example.links,
                "labels": {method.name: method.label(next(iter(method.finders), None)) for method in menu},
                "thresholds": artefacts.thresholds()}
    options = "".join(f'<option value="{html.escape(method.name)}">{html.escape(method.display)}</option>'
                      for method in menu)
    fill = {"QUERY": html.escape(example.query), "METHODS": options,
            "SETTINGS": json.dumps(settings).replace("<", "\\u003c")}
    return re.sub(r"\{\{(\w+)\}\}", lambda slot: fill[slot.group(1)], PAGE.read_text(encoding="utf-8"))
