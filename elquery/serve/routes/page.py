"""The page at ``/``: a form that links a query with a method of its menu (the methods of the
registry the service serves), starting with a query that links on the served knowledge base and
showing where each threshold comes from (:mod:`elquery.serve.example`). When the thresholds come
from an experiment's ``params.json`` (``elquery serve --params DIR/params.json``), the page also
shows that run directory's figures of the tuned methods: their F against the threshold s (and c),
the cross-validated choices marked (:mod:`elquery.experiments.figures`); ``/figures/NAME.svg``
and ``/figures/NAME.png`` serve any figure of that directory."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from elquery.experiments.figures import FIGURES_DIR, FORMATS, SWEEP, read_index
from elquery.linking.params import LinkingParams
from elquery.serve.service import RequestError, Routes, service_of

PAGE = Path(__file__).parents[1] / "page.html"
MEDIA_TYPES = {"svg": "image/svg+xml", "png": "image/png"}
routes = Routes()


@routes.route("/", "GET", response_class=HTMLResponse)
async def page(request: Request) -> str:
    """The page, starting with a query that links on the served knowledge base and showing
    where each threshold comes from (:mod:`elquery.serve.example`), and the figures of the run
    directory the tuned thresholds come from."""
    artefacts = service_of(request).artefacts
    example = await run_in_threadpool(artefacts.example)
    figures = await run_in_threadpool(figures_section, artefacts.params)
    menu = artefacts.menu()
    settings = {"query": example.query, "method": example.method, "links": example.links,
                "labels": {method.name: method.label(next(iter(method.finders), None)) for method in menu},
                "thresholds": artefacts.thresholds()}
    options = "".join(f'<option value="{html.escape(method.name)}">{html.escape(method.display)}</option>'
                      for method in menu)
    fill = {"QUERY": html.escape(example.query), "METHODS": options,
            "SETTINGS": json.dumps(settings).replace("<", "\\u003c"), "FIGURES": figures}
    return re.sub(r"\{\{(\w+)\}\}", lambda slot: fill[slot.group(1)], PAGE.read_text(encoding="utf-8"))


def run_directory(params: LinkingParams | None) -> Path | None:
    """The experiment folder of the served params file (None: no params file)."""
    return None if params is None or params.path is None else params.path.parent


def tuned_figures(params: LinkingParams | None) -> list[dict[str, Any]]:
    """The sweep figures (interpretation finding) of the methods whose thresholds the params file
    holds, in the run directory's figure index."""
    folder = run_directory(params)
    if folder is None or params is None:
        return []
    labels = {tuned.tuned.get("label") for tuned in params.methods.values() if tuned.tuned}
    return [figure for figure in read_index(folder)
            if figure.get("kind") == SWEEP and figure.get("task") == "if" and figure.get("method") in labels]


def figures_section(params: LinkingParams | None) -> str:
    """The page's figures: each tuned method's sweep inline (its SVG) with links to its files."""
    folder = run_directory(params)
    if folder is None:
        return ""
    parts = []
    for figure in tuned_figures(params):
        name = str(figure["name"])
        try:
            svg = (folder / FIGURES_DIR / f"{name}.svg").read_text(encoding="utf-8")
        except OSError:
            continue
        links = " · ".join(f'<a href="/figures/{html.escape(name)}.{fmt}">{fmt.upper()}</a>' for fmt in FORMATS)
        parts.append(f'<figure class="sweep" data-figure="{html.escape(name)}">{svg[svg.index("<svg"):]}'
                     f"<figcaption>{html.escape(str(figure.get('title', name)))} ({links})</figcaption></figure>")
    if not parts:
        return ""
    return (f'<section id="figures"><h2>Tuned thresholds</h2><p>From the experiment in '
            f"<code>{html.escape(str(folder))}</code>: mean F over all queries against each threshold, "
            f"the settings cross-validation chose starred.</p>{''.join(parts)}</section>")


@routes.route("/figures/{name}", "GET")
async def figure(name: str, request: Request) -> Response:
    """A figure of the served run directory (the folder of ``--params``): ``NAME.svg`` or ``NAME.png``."""
    folder = run_directory(service_of(request).artefacts.params)
    stem, _, fmt = name.rpartition(".")
    if folder is None or fmt not in MEDIA_TYPES or stem not in {f.get("name") for f in read_index(folder)}:
        raise RequestError(404, f"no figure {name!r} (the figures of the experiment of --params, "
                                "listed in its figures/figures.json)")
    try:
        data = await run_in_threadpool((folder / FIGURES_DIR / f"{stem}.{fmt}").read_bytes)
    except OSError:
        raise RequestError(404, f"no figure {name!r}") from None
    return Response(data, media_type=MEDIA_TYPES[fmt])
