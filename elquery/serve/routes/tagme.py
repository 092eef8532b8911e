"""TAGME's REST interface: ``/tag`` (annotations) and ``/spot`` (mentions), in TAGME's envelope,
by the service's linker of the TAGME method with its defaults (or the params file's rho_NA)."""

from __future__ import annotations

import datetime
import time
from typing import Any
from urllib.parse import unquote

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.kb.normalize import tokenize
from elquery.kb.query_length import check_query_length
from elquery.linking.methods.tagme import TAGME
from elquery.formats.queries import check_query_text
from elquery.serve.service import RequestError, Routes, parameters, service_of

routes = Routes()


async def tagme_request(request: Request) -> tuple[Any, str, dict[str, Any]]:
    """The TAGME linker, the ``text`` and the parameters of a TAGME-style request; a blank text or
    one longer than the service's query limit is refused, as by every door."""
    values = await parameters(request)
    service = service_of(request)
    limit = service.limits.max_query_tokens
    linker = service.artefacts.linker(TAGME, max_query_tokens=limit)
    text = values.get("text")
    if not isinstance(text, str):
        raise RequestError(422, "text: expected a string")
    check_query_length(check_query_text(text), limit)
    return linker, text, values


def tagme_answer(key: str, items: list[dict[str, Any]], values: dict[str, Any], started: float) -> JSONResponse:
    """TAGME's answer envelope: the items, lang, time (ms) and timestamp."""
    return JSONResponse({key: items, "lang": values.get("lang", "en"),
                         "time": round(1000 * (time.perf_counter() - started)),
                         "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat()})


@routes.get_and_post("/tag")
async def tag(request: Request) -> JSONResponse:
    """TAGME's REST answer: annotations with spot, start, end (character offsets), rho, title,
    id (the Wikipedia page id, where the artefact knows it from DBpedia's page_ids); with the
    index's identifiers table, each annotation's ``ids`` too (docs/identifiers.md)."""
    tagme, text, values = await tagme_request(request)
    started = time.perf_counter()
    service = service_of(request)
    result = await service.bounded(tagme.result, text, "tag")
    ids = service.artefacts.entity_ids
    found = None if ids is None else ids([triple.entity for triple in result.scored])
    dictionary = tagme.artefact.dictionary
    annotations = []
    for triple in result.scored:
        start, end = result.char_span(triple.mention)
        title = unquote(triple.entity[len("<dbpedia:"):-1]).replace("_", " ")
        node = dictionary.node(triple.entity)
        page_id = None if node is None else dictionary.page_id(node)
        annotations.append({"spot": text[start:end], "start": start, "end": end, "rho": triple.score,
                            "title": title, "dbpedia_id": triple.entity,
                            **({} if page_id is None else {"id": page_id}),
                            **({} if found is None else {"ids": found[triple.entity].as_dict()})})
    return tagme_answer("annotations", annotations, values, started)


@routes.get_and_post("/spot")
async def spot(request: Request) -> JSONResponse:
    """TAGME's spotting: the mentions of ``text`` (character offsets) with their link probability."""
    tagme, text, values = await tagme_request(request)
    started = time.perf_counter()

    def spots() -> list[dict[str, Any]]:
        tokens = tokenize(text)
        found = tagme.spots([t.text for t in tokens])
        return [{"spot": text[tokens[s.mention.start].start:tokens[s.mention.end - 1].end],
                 "start": tokens[s.mention.start].start, "end": tokens[s.mention.end - 1].end,
                 "lp": s.link_probability} for s in found]
    return tagme_answer("spots", await service_of(request).bounded(spots), values, started)
