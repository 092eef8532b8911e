"""``/rank``: entity retrieval over the whole index, the rankings of ``elquery rank``; the ELR
models with the request's links or the service's own linking."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.linking.output import jsonl_record
from elquery.retrieval.links import record_links
from elquery.retrieval.models import MODEL_HELP, EntityLinkingRetrieval, model_from_name, parse_params
from elquery.retrieval.scoring import LinkedQuery
from elquery.serve.service import RequestError, Routes, Service, number, parameters, service_of

routes = Routes()


@routes.get_and_post("/rank")
async def rank(request: Request) -> JSONResponse:
    """Entity retrieval over the whole index: ``q``, model, k, params as ``elquery rank``."""
    service = service_of(request)
    values = await parameters(request)
    pairs = service.queries(values)
    name = values.get("model", "mlm")
    if name not in MODEL_HELP:
        raise RequestError(422, f"unknown model {name!r}; models are {', '.join(MODEL_HELP)}")
    k = number(values, "k")
    k = 100 if k is None else int(k)
    if not 1 <= k <= service.limits.max_k:
        raise RequestError(422, f"k must be between 1 and {service.limits.max_k}, got {k}")
    params = values.get("params", [])
    model = model_from_name(name, parse_params(params if isinstance(params, list) else [params]))
    linked = isinstance(model, EntityLinkingRetrieval)
    if not linked and "links" in values:
        raise RequestError(422, f"links go with the ELR models (sdm-elr, fsdm-elr, mlm-elr), not {name}")

    def ranked() -> list[dict[str, Any]]:
        queries: list[Any] = [text for _, text in pairs]
        if linked:
            links = query_links(service, values, pairs)
            queries = [LinkedQuery(text, tuple(found)) for text, found in zip(queries, links)]
        return [{"qid": qid, "query": text, "ranking": [{"rank": r.rank, "entity": r.entity, "score": r.score}
                                                          for r in service.artefacts.searcher.rank(query, model, k)]}
                for (qid, text), query in zip(pairs, queries)]
    return JSONResponse({"results": await service.bounded(ranked)})


def query_links(service: Service, values: dict[str, Any], pairs: list[tuple[str, str]]) -> list[list[tuple[Any, Any]]]:
    """The linked entities of each query of an ELR ``/rank`` request: the request's ``links``
    (a list of ``{"entity", "score"}`` for one query, or an object of such lists by qid), else
    what the service's linker finds (``method``, as ``/link``), by the rules of ``elquery rank
    --links`` over ``elquery link --format jsonl`` output."""
    given = values.get("links")
    if given is None:
        _, linker = service.linker(values, tagme=False)
        return [record_links(jsonl_record(linker.result(text, qid)), f"query {qid!r}") for qid, text in pairs]
    if isinstance(given, list) and len(pairs) == 1:
        given = {pairs[0][0]: given}
    if not isinstance(given, dict):
        raise RequestError(422, "links: expected a list of {\"entity\", \"score\"} (one query) or an object of "
                           "such lists by qid")
    return [record_links({"links": given.get(qid, [])}, f"links of query {qid!r}") for qid, _ in pairs]
