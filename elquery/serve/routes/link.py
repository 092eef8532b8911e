"""``/link``: the records of ``elquery link --format jsonl`` for one query or a batch."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.formats.link_output import EntityIds, jsonl_record
from elquery.linking.deadline import check_deadline
from elquery.serve.schema import link_fields
from elquery.serve.service import Routes, Service, parameters, service_of

routes = Routes()


def link_batch(linker: Any, pairs: list[tuple[str, str]], ids: EntityIds | None = None) -> list[dict[str, Any]]:
    """The records of a batch; the work stops at the request's deadline (checked between queries)."""
    records = []
    for qid, text in pairs:
        check_deadline()
        records.append(jsonl_record(linker.result(text, qid), ids))
    return records


async def link_answer(service: Service, values: dict[str, Any]) -> dict[str, Any]:
    """The answer to a link request's ``values`` (also the MCP server's ``link`` tool)."""
    pairs = service.queries(values)
    method, linker = service.linker(values, top_ranked=True)
    if len(pairs) == 1 and method.finders:
        # The Linker pipeline's work on one query is bounded by its length (a few ms at the limit):
        # doing it here costs less than the hand-off to a thread, which took most of a request's CPU.
        return {"results": link_batch(linker, pairs, service.artefacts.entity_ids)}
    return {"results": await service.bounded(link_batch, linker, pairs, service.artefacts.entity_ids)}


@routes.get_and_post("/link", link_fields)
async def link(request: Request) -> JSONResponse:
    """Link one query (``q``) or several (``queries``): method, the method's parameters and
    top_ranked as ``elquery link``; answers as its jsonl format."""
    return JSONResponse(await link_answer(service_of(request), await parameters(request)))
