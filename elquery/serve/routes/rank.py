"""``/rank``: entity retrieval over the whole index, the rankings of ``elquery rank``, with a model
of the registry (:data:`elquery.retrieval.models.MODELS`); a model that takes links ranks with the
request's links or the service's own linking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from elquery.formats.link_output import EntityIds
from elquery.formats.links import record_links
from elquery.linking.batch import ResultLinker
from elquery.linking.deadline import check_deadline
from elquery.retrieval.models import DEFAULT_K, DEFAULT_MODEL, MODELS, check_k, links_refused, parse_params
from elquery.retrieval.scoring import LinkedQuery
from elquery.serve.routes.link import link_batch
from elquery.serve.schema import rank_fields
from elquery.serve.service import RequestError, Routes, Service, parameters, service_of

routes = Routes()


@routes.get_and_post("/rank", rank_fields)
async def rank(request: Request) -> JSONResponse:
    """Entity retrieval over the whole index: ``q``, model, k, params as ``elquery rank``."""
    return JSONResponse(await rank_answer(service_of(request), await parameters(request)))


async def rank_answer(service: Service, values: dict[str, Any]) -> dict[str, Any]:
    """The answer to a rank request's ``values`` (also the MCP server's ``rank`` tool)."""
    pairs = service.queries(values)
    entry = MODELS.get(values.get("model", DEFAULT_MODEL))
    params = values.get("params", [])
    model = entry.build(parse_params(params if isinstance(params, list) else [params]))
    if "links" in values and not entry.needs_links:
        raise links_refused(entry.name)
    k = k_of(values, service.limits.max_k)
    linker = service.linker(values)[1] if entry.needs_links and values.get("links") is None else None

    def ranked() -> list[dict[str, Any]]:
        queries: list[Any] = [text for _, text in pairs]
        if entry.needs_links:
            links = query_links(linker, values, pairs)
            queries = [LinkedQuery(text, tuple(found)) for text, found in zip(queries, links)]
        answers = []
        for (qid, text), query in zip(pairs, queries):
            check_deadline()  # the work stops at the request's deadline
            ranking = service.artefacts.searcher.rank(query, model, k)
            answers.append({"qid": qid, "query": text,
                            "ranking": ranked_entries(service.artefacts.entity_ids, ranking)})
        return answers
    return {"results": await service.bounded(ranked)}


def ranked_entries(ids: EntityIds | None, ranking: Sequence[Any]) -> list[dict[str, Any]]:
    """A ranking's ``{"rank", "entity", "score"}`` entries, each with its entity's ``ids`` given
    ``ids`` (an index with the identifiers table, docs/identifiers.md)."""
    entries = [{"rank": r.rank, "entity": r.entity, "score": r.score} for r in ranking]
    if ids is not None:
        found = ids([r.entity for r in ranking])
        for entry in entries:
            entry["ids"] = found[entry["entity"]].as_dict()
    return entries


def k_of(values: dict[str, Any], most: int) -> int:
    """The request's ``k``, checked as ``elquery rank --k`` checks it, within the service's bound
    ``most`` (:func:`~elquery.retrieval.models.check_k`); by default :data:`DEFAULT_K` (at most ``most``)."""
    given = values.get("k")
    return min(DEFAULT_K, most) if given in (None, "") else check_k(given, most)


def query_links(linker: ResultLinker | None, values: dict[str, Any],
                pairs: list[tuple[str, str]]) -> list[list[tuple[Any, Any]]]:
    """The linked entities of each query of a ``/rank`` request whose model takes links: the
    request's ``links`` (a list of ``{"entity", "score"}`` for one query, or an object of such
    lists by qid), else what ``linker`` finds (the service's linker of the request's ``method``, as
    ``/link``), by the rules of ``elquery rank --links`` over ``elquery link --format jsonl`` output."""
    given = values.get("links")
    if given is None:
        assert linker is not None
        return [record_links(record, f"query {qid!r}") for record, (qid, _) in zip(link_batch(linker, pairs), pairs)]
    if isinstance(given, list) and len(pairs) == 1:
        given = {pairs[0][0]: given}
    if not isinstance(given, dict):
        raise RequestError(422, "links: expected a list of {\"entity\", \"score\"} (one query) or an object of "
                           "such lists by qid")
    return [record_links({"links": given.get(qid, [])}, f"links of query {qid!r}") for qid, _ in pairs]
