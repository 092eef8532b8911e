"""``/entity/ID``: an entity's names, aliases and identifiers; ID in any spelling of
docs/identifiers.md (a DBpedia id, URI or title, a Wikipedia title or URL, a Wikidata QID, a
Freebase mid, a Wikipedia page id)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.kb.identifiers import identifiers_without_table, resolve
from elquery.serve.service import RequestError, Routes, service_of

routes = Routes()
MAX_ALIASES = 1000


def entity_of(artefacts: Any, given: str) -> tuple[str, dict[str, Any]]:
    """The DBpedia id of ``given`` (any spelling) and its index document; 404 when no entity of
    the index has it."""
    canonical = resolve(given, artefacts.identifiers)
    document = artefacts.entity_index.document(canonical) if canonical else None
    if canonical is None or document is None:
        raise RequestError(404, f"entity {given!r} is not in the index")
    return canonical, document


def entity_ids(artefacts: Any, entity: str) -> dict[str, Any]:
    """The ``ids`` of ``entity``: from the index's identifiers table; without one, the Wikipedia
    title and URL, the page id where the served TAGME artefact holds it (``page_ids``), the
    other ids null."""
    table = artefacts.identifiers
    if table is not None:
        return table.of(entity).as_dict()
    ids = identifiers_without_table(entity).as_dict()
    if artefacts.tagme is not None:
        from elquery.linking.methods.tagme import TAGME

        dictionary = artefacts.linker(TAGME).artefact.dictionary
        node = dictionary.node(entity)
        ids["wikipedia_page_id"] = None if node is None else dictionary.page_id(node)
    return ids


def entity_answer(artefacts: Any, given: str) -> dict[str, Any]:
    """``/entity/ID``'s answer: the entity ``given`` names (any spelling), its names (as
    indexed), aliases with commonness and ``ids``; 404 when the index lacks it."""
    canonical, document = entity_of(artefacts, given)
    aliases = [{"form": a.form, "count": a.count, "commonness": a.commonness, "sources": list(a.sources)}
               for a in artefacts.store.aliases(canonical)[:MAX_ALIASES]]
    return {"entity": canonical, "names": document["names"].split("\n"), "aliases": aliases,
            "ids": entity_ids(artefacts, canonical)}


@routes.route("/entity/{entity:path}", "GET")
async def entity(entity: str, request: Request) -> JSONResponse:
    """An entity's names (as indexed), aliases with commonness and identifiers; any entity spelling."""
    return JSONResponse(entity_answer(service_of(request).artefacts, entity))
