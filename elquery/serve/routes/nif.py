"""``/nif``: GERBIL's NIF interface, a Turtle NIF document in, annotated (:mod:`elquery.serve.nif`)."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import Response

from elquery.linking.deadline import check_deadline
from elquery.linking.types import LinkResult
from elquery.serve.schema import nif_fields
from elquery.serve.service import RequestError, Routes, body_of, gathered, service_of

routes = Routes()


@routes.route("/nif", "POST", nif_fields, body="text/turtle")
async def nif(request: Request) -> Response:
    """GERBIL's NIF interface: a Turtle NIF document in, annotated (docs/serve.md)."""
    from elquery.serve.nif import NifError, annotate

    service = service_of(request)
    body = await body_of(request)
    _, linker = service.linker(gathered(request.query_params.multi_items()))
    def link(text: str) -> LinkResult:
        check_deadline()  # between contexts: the work stops at the request's deadline
        return linker.result(text, "nif")
    try:
        turtle = await service.bounded(annotate, body, link)
    except NifError as exc:
        raise RequestError(400, str(exc)) from None
    return Response(turtle, media_type="text/turtle")
