"""``/entity/ID``: an entity's names and aliases."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.kb.entities import canonical_entity_id
from elquery.serve.service import RequestError, Routes, service_of

routes = Routes()
MAX_ALIASES = 1000


@routes.route("/entity/{entity:path}", "GET")
async def entity(entity: str, request: Request) -> JSONResponse:
    """An entity's names (as indexed) and aliases with commonness; any entity form."""
    artefacts = service_of(request).artefacts
    canonical = canonical_entity_id(entity)
    document = artefacts.entity_index.document(canonical) if canonical else None
    if canonical is None or document is None:
        raise RequestError(404, f"entity {entity!r} is not in the index")
    aliases = [{"form": a.form, "count": a.count, "commonness": a.commonness, "sources": list(a.sources)}
               for a in artefacts.store.aliases(canonical)[:MAX_ALIASES]]
    return JSONResponse({"entity": canonical, "names": document["names"].split("\n"), "aliases": aliases})
