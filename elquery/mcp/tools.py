"""The tools of the MCP server, each the answer of a door of the service or of a command, built by
the functions those build it with, within the same :class:`~elquery.serve.service.Limits`
(query length, batch size, ``k``, time, concurrency; :meth:`Service.bounded`):

* ``link``: ``/link`` (``elquery link --format jsonl`` records), one query or a batch;
* ``rank``: ``/rank`` (``elquery rank``'s rankings);
* ``entity``: ``/entity/ID`` (names, aliases with count and commonness, ``ids``: every identifier
  the artefacts know, docs/identifiers.md), with the short abstract;
* ``surface_form``: ``elquery surface-forms lookup`` (the entities a text may name, by commonness);
* ``artefacts``: ``/stats`` without its request counters (the served artefacts, their provenance,
  the LTR model, limits, thresholds and where each comes from), with the methods and models served;
* ``evaluate``: ``elquery evaluate elq|rank --format json`` of a run against qrels, both given as
  the files' text; with ``--index`` the served index when it has an identifiers table (ids in any
  scheme of docs/identifiers.md resolved to DBpedia ids, :mod:`elquery.experiments.evaluate_ids`).

A refused call raises :class:`~elquery.base.ElqueryError` or
:class:`~elquery.serve.service.RequestError` with the message the service answers in ``error``."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.evaluation.cli import AS_WRITTEN, Readers
from elquery.formats.lines import FormatError
from elquery.mcp.arguments import ToolBody, Values
from elquery.retrieval.models import MODELS
from elquery.serve.routes.entity import entity_answer
from elquery.serve.routes.link import link_answer
from elquery.serve.routes.rank import rank_answer
from elquery.serve.schema import Field, link_fields, query_fields, rank_fields
from elquery.serve.service import MAX_BODY, RequestError, Service

EVALUATIONS = ("elq", "rank")
DEFAULT_RANK_METRICS = "map@100,p@10,ndcg@10,mrr"
"""``elquery evaluate rank``'s default ``--metrics``."""


@dataclass(frozen=True)
class Tool:
    """One tool: its name, title, description, arguments (the service's request fields) and body."""

    name: str
    title: str
    description: str
    fields: Callable[[Service], list[Field]]
    body: Callable[[Service], ToolBody]


# --- link and rank: /link and /rank ------------------------------------------------------------

def link(service: Service) -> ToolBody:
    async def answer(values: Values) -> dict[str, Any]:
        return await link_answer(service, values)
    return answer


def rank(service: Service) -> ToolBody:
    async def answer(values: Values) -> dict[str, Any]:
        return await rank_answer(service, values)
    return answer


def rank_tool_fields(service: Service) -> list[Field]:
    """``/rank``'s queries and fields."""
    return [*query_fields(), *rank_fields(service)]


# --- entity and surface_form ---------------------------------------------------------------------

def entity(service: Service) -> ToolBody:
    async def answer(values: Values) -> dict[str, Any]:
        return await service.bounded(entity_record, service, _text(values, "entity"))
    return answer


def entity_record(service: Service, given: str) -> dict[str, Any]:
    """``/entity/ID``'s answer for ``given`` (any spelling of docs/identifiers.md: its ``ids``
    too), with ``abstract`` (the short abstract, where the index stores it: an index with the LTR
    fields)."""
    artefacts = service.artefacts
    answer = entity_answer(artefacts, given)
    document = artefacts.entity_index.document(answer["entity"]) or {}
    abstract = document.get("short_abstract") if "short_abstract" in artefacts.entity_index.text_fields else None
    return {**answer, "abstract": abstract or None}


def surface_form(service: Service) -> ToolBody:
    async def answer(values: Values) -> dict[str, Any]:
        text = _text(values, "text")
        limit = _whole(values, "limit", 1, service.limits.max_k)
        return await service.bounded(surface_form_record, service, text, limit)
    return answer


def surface_form_record(service: Service, text: str, limit: int) -> dict[str, Any]:
    """``elquery surface-forms lookup SF.db TEXT --limit LIMIT``'s answer: the normalized form and
    its candidates by commonness; a text longer than the service's query limit is refused."""
    from elquery.kb.normalize import normalize
    from elquery.linking.mentions import check_query_length

    form = normalize(text)
    check_query_length(form.split(), service.limits.max_query_tokens)
    candidates = service.artefacts.store.lookup(text)[:limit]
    return {"form": form, "candidates": [{**asdict(c), "sources": list(c.sources)} for c in candidates]}


def surface_form_fields(service: Service) -> list[Field]:
    most = service.limits.max_k
    return [Field("text", {"type": "string"}, "a surface form (normalized as the linker normalizes queries)"),
            Field("limit", {"type": "integer", "minimum": 1, "maximum": most, "default": most},
                  "candidates given at most")]


def entity_fields(service: Service) -> list[Field]:
    return [Field("entity", {"type": "string"}, "the entity: <dbpedia:Title>, Title, its DBpedia URI or Wikipedia "
                  "URL, wikipedia:Title, a Wikidata QID (Q42), a Freebase mid (/m/0abc) or curid:PAGEID")]


# --- artefacts: /stats ---------------------------------------------------------------------------

def artefacts(service: Service) -> ToolBody:
    async def answer(values: Values) -> dict[str, Any]:
        return served(service)
    return answer


def served(service: Service) -> dict[str, Any]:
    """``/stats`` without the worker and its request counters, with the linking methods and
    retrieval models served."""
    served = service.artefacts
    return {"index": {"path": str(served.index), "entities": served.entity_index.num_entities,
                      "metadata": served.entity_index.metadata},
            "surface_forms": {"path": str(served.surface_forms), "meta": served.store.meta},
            "tagme": None if served.tagme is None else str(served.tagme), "model": served.model_info,
            "provenance": served.provenance, "limits": service.limits.__dict__,
            "params": None if served.params is None else str(served.params.path),
            "thresholds": served.thresholds(),
            "methods": [m.name for m in served.menu()], "models": list(MODELS.names())}


# --- evaluate ------------------------------------------------------------------------------------

def evaluate(service: Service) -> ToolBody:
    async def answer(values: Values) -> dict[str, Any]:
        kind = values.get("kind")
        if kind not in EVALUATIONS:
            raise ElqueryError(f"kind must be one of {', '.join(EVALUATIONS)}, got {kind!r}")
        texts = {name: _text(values, name) for name in ("qrels", "run")}
        for name, text in texts.items():
            if len(text.encode("utf-8")) > MAX_BODY:
                raise RequestError(413, f"{name} larger than 1 MiB")
        per_query = _flag(values, "per_query")
        index = service.artefacts.index if service.artefacts.identifiers is not None else None
        if kind == "elq":
            return await service.bounded(evaluate_elq, texts["qrels"], texts["run"], per_query, index)
        metrics = _metrics(values.get("metrics", DEFAULT_RANK_METRICS))
        complete = not _flag(values, "skip_missing")
        return await service.bounded(evaluate_rank, texts["qrels"], texts["run"], metrics, complete, per_query, index)
    return answer


def evaluate_elq(qrels: str, run: str, per_query: bool, index: Path | None = None) -> dict[str, Any]:
    """``elquery evaluate elq --format json [--per-query] [--index INDEX]`` of the ``run`` text
    against the ``qrels`` text, and the warnings the command writes on stderr."""
    from elquery.evaluation.interpretation import evaluate_interpretations

    notes: list[str] = []
    with _files(qrels, run) as (qrels_path, run_path):
        read = _readers(index, notes)
        truth, found = read.elq(str(qrels_path)), read.elq(str(run_path))
    return {**evaluate_interpretations(truth, found).as_dict(per_query=per_query),
            "warnings": notes + _unmatched(found, truth)}


def evaluate_rank(qrels: str, run: str, metrics: Sequence[str], complete: bool, per_query: bool,
                  index: Path | None = None) -> dict[str, Any]:
    """``elquery evaluate rank --format json --metrics M [--skip-missing] [--per-query] [--index
    INDEX]`` of the ``run`` text against the ``qrels`` text, and the warnings the command writes on
    stderr."""
    from elquery.evaluation.rank import evaluate_rankings, relevant_entities

    notes: list[str] = []
    with _files(qrels, run) as (qrels_path, run_path):
        read = _readers(index, notes)
        truth, found = read.trec_qrels(str(qrels_path)), read.trec_run(str(run_path))
    judged = relevant_entities(truth)
    missing = sum(1 for q in judged if q not in found)
    warnings = notes + _unmatched(found, truth)
    if missing:
        outcome = "score 0" if complete else "are skipped (skip_missing)"
        warnings.append(f"run: {missing} of {len(judged)} judged queries are missing from the run and {outcome}")
    try:
        result = evaluate_rankings(truth, found, metrics, complete=complete)
    except ElqueryError as exc:
        raise FormatError("run", None, str(exc)) from None
    return {**result.as_dict(per_query=per_query), "warnings": warnings}


def _readers(index: Path | None, notes: list[str]) -> Readers:
    """The command's readers: as written without ``index``, else ``elquery evaluate --index``'s
    (:func:`elquery.experiments.evaluate_ids.readers`), their one-line notes on ids that name no
    entity appended to ``notes`` (a file named ``qrels`` or ``run``) instead of printed."""
    if index is None:
        return AS_WRITTEN
    from elquery.experiments.evaluate_ids import resolving_readers

    return resolving_readers(index, notes, named=lambda path: Path(path).name)


class _files:
    """The qrels and run texts as files ``qrels`` and ``run`` of a temporary folder, removed on
    leaving; a format error names them ``qrels`` and ``run`` (``run:3: reason``), not the folder."""

    def __init__(self, qrels: str, run: str) -> None:
        self._texts = {"qrels": qrels, "run": run}

    def __enter__(self) -> tuple[Path, Path]:
        self._folder = tempfile.TemporaryDirectory(prefix="elquery-mcp-")
        root = Path(self._folder.name)
        for name, text in self._texts.items():
            (root / name).write_text(text, encoding="utf-8")
        return root / "qrels", root / "run"

    def __exit__(self, kind: object, error: BaseException | None, traceback: object) -> None:
        self._folder.cleanup()
        if isinstance(error, FormatError):
            raise FormatError(Path(error.path).name, error.line, error.reason) from None


def _unmatched(run: Mapping[str, Any], qrels: Mapping[str, Any]) -> list[str]:
    unmatched = sum(1 for q in run if q not in qrels)
    return [f"run: {unmatched} of {len(run)} queries are not in the qrels and are ignored"] if unmatched else []


def _metrics(given: Any) -> list[str]:
    """The rank metrics of ``given`` (a comma-separated text or a list of names), as
    ``--metrics`` takes them: none empty, none twice, each one ``ir_measures`` parses."""
    from elquery.evaluation.rank import parse_metric

    names = [str(n).strip() for n in (given.split(",") if isinstance(given, str) else given)] \
        if isinstance(given, (str, list)) else None
    if not names or not all(names):
        raise ElqueryError(f"metrics: expected metric names (a list, or comma-separated), got {given!r}")
    if len(set(names)) != len(names):
        raise ElqueryError(f"metrics: a metric is named twice in {given!r}")
    for name in names:
        parse_metric(name)
    return names


def evaluate_fields(service: Service) -> list[Field]:
    return [Field("kind", {"type": "string", "enum": list(EVALUATIONS)},
                  "elq: interpretations (ELQ run and qrels; strict, entity and lean P/R/F), as `elquery evaluate elq`; "
                  "rank: rankings (TREC run and qrels; trec_eval -c semantics), as `elquery evaluate rank`"),
            Field("qrels", {"type": "string"}, "the qrels file's text (ELQ format for elq, TREC for rank), at most 1 MiB"),
            Field("run", {"type": "string"}, "the run file's text (ELQ format for elq, TREC for rank), at most 1 MiB"),
            Field("metrics", {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                              "default": DEFAULT_RANK_METRICS},
                  "rank only: the metrics, as --metrics (ir_measures names or map, mrr, ndcg@k, p@k, r@k, success@k)"),
            Field("skip_missing", {"type": "boolean", "default": False},
                  "rank only: evaluate only the judged queries present in the run (else a missing one scores 0)"),
            Field("per_query", {"type": "boolean", "default": False}, "also every query's scores")]


# --- argument checks -----------------------------------------------------------------------------

def _text(values: Values, name: str) -> str:
    given = values.get(name)
    if not isinstance(given, str):
        raise RequestError(422, f"{name}: expected a string" if name in values else f"give {name}")
    return given


def _flag(values: Values, name: str) -> bool:
    from elquery.registry import Parameter

    given = values.get(name)
    return given is not None and bool(Parameter(name, bool, False, "").validate(given))


def _whole(values: Values, name: str, least: int, most: int) -> int:
    given = values.get(name)
    if given in (None, ""):
        return most
    try:
        number = float(given)
    except (TypeError, ValueError):
        raise RequestError(422, f"{name} must be a whole number, got {given!r}") from None
    if isinstance(given, bool) or not math.isfinite(number) or number != int(number):
        raise RequestError(422, f"{name} must be a whole number, got {given!r}")
    if not least <= number <= most:
        raise RequestError(422, f"{name} must be between {least} and {most}, got {int(number)}")
    return int(number)


TOOLS = (
    Tool("link", "Link the entities of queries",
         "Entity linking in queries, as the service's /link and `elquery link --format jsonl`: give q (one query) "
         "or queries (a list, or an object {qid: query}); method and its thresholds as `elquery link`. Each result: "
         "the query's mentions with their candidate entities and scores, and its interpretations (sets of "
         "annotations <dbpedia:Title>).", link_fields, link),
    Tool("rank", "Rank entities for queries",
         "Entity retrieval over the whole index, as the service's /rank and `elquery rank`: q or queries, model, k, "
         "params (NAME=VALUE); the models that take links use the given links or link the queries with method.",
         rank_tool_fields, rank),
    Tool("entity", "Look up an entity",
         "An entity of the index, as the service's /entity/ID: its names, its aliases (surface forms with count, "
         "commonness and sources), its ids (DBpedia id and URI, Wikipedia title, URL and page id, Freebase mid, "
         "Wikidata QID; null where the artefacts lack one) and its short abstract (where the index stores it).",
         entity_fields, entity),
    Tool("surface_form", "Look up a surface form",
         "The entities a surface form may name, by commonness, as `elquery surface-forms lookup`: the normalized "
         "form and its candidates (entity, count, commonness, sources).", surface_form_fields, surface_form),
    Tool("artefacts", "The served artefacts",
         "What this server serves, as the service's /stats: the index, the surface-form store, the TAGME artefact "
         "and LTR model (if any), their provenance, the limits per call, each method's thresholds and where they "
         "come from, and the linking methods and retrieval models it serves.", lambda service: [], artefacts),
    Tool("evaluate", "Evaluate a run against qrels",
         "Evaluate a run against qrels, both given as the files' text, as `elquery evaluate elq|rank --format json`: "
         "kind elq (ELQ files: strict, entity and lean P/R/F) or rank (TREC files: metrics); warnings lists what the "
         "command writes on stderr. When the served index has an identifiers table, entity ids may be Wikidata QIDs, "
         "Freebase mids, Wikipedia titles, URLs or page ids (curid:N) as well as DBpedia ids, resolved as "
         "`elquery evaluate --index` does.", evaluate_fields, evaluate),
)
