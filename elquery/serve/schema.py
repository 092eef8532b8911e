"""The request parameters of ``/link``, ``/rank`` and ``/nif`` and their OpenAPI description,
generated from the registries (:data:`elquery.linking.methods.METHODS`,
:data:`elquery.retrieval.models.MODELS`): each method's and model's names as enums, the
parameters' types, ranges, defaults and help, as ``elquery link --help`` and ``elquery rank --help``
give them. The routes read their parameters from the query string or the body themselves (a form
or JSON), so this is the operations' documentation; the registries validate the values, and
:func:`check_request` the shape every route reads them in (any JSON value in any field is a 4xx,
never a crash of the worker)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elquery.formats.queries import lone_surrogate
from elquery.linking.methods import DEFAULT_METHOD, METHODS, LinkingMethod
from elquery.registry import Parameter
from elquery.retrieval.models import DEFAULT_K, DEFAULT_MODEL, MODELS
from elquery.retrieval.models.describe import help_line

if TYPE_CHECKING:
    from elquery.serve.service import Service

LINKING_PARAMETERS = tuple(dict.fromkeys(p.name for m in METHODS for p in m.parameters if p.kind is not Path))
"""The request parameters that are a linking method's (a file a method reads, such as LTR's model,
is the service's artefact, never a request's)."""
TOP_RANKED = Parameter("top_ranked", bool, False, "TopRanked instead of GIF: one interpretation, the top entity")
TYPES = {float: "number", int: "integer", str: "string", bool: "boolean"}


@dataclass(frozen=True)
class Field:
    """One request parameter: its JSON schema and help; ``in_query``: also in a query string (a
    list or an object is a JSON body's only)."""

    name: str
    schema: dict[str, Any]
    description: str
    in_query: bool = True


def _bounds(parameter: Parameter) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": TYPES[parameter.kind]}
    if parameter.choices is not None:
        schema["enum"] = list(parameter.choices)
    if parameter.minimum is not None:
        schema["exclusiveMinimum" if parameter.open_minimum else "minimum"] = parameter.minimum
    if parameter.maximum is not None:
        schema["maximum"] = parameter.maximum
    return schema


def method_parameter(name: str, methods: Sequence[LinkingMethod]) -> Field:
    """A parameter of some of ``methods``: the type and range they share, the default if they
    share it, and per method its default (and the demo knowledge base's)."""
    owners = [(m, p) for m in methods for p in m.parameters if p.name == name]
    schemas = [_bounds(p) for _, p in owners]
    shared = all(schema == schemas[0] for schema in schemas)
    schema = schemas[0] if shared else {"type": schemas[0]["type"]}
    defaults = {p.default for _, p in owners} | {p.default_for(True) for _, p in owners}
    if len(defaults) == 1 and None not in defaults:
        schema = {**schema, "default": next(iter(defaults))}
    per_method = "; ".join(f"{m.name}: " + ", ".join(part for part in p.describe().split("; ")
                                                      if not shared or part.startswith(("default", "demo KB")))
                           for m, p in owners)
    return Field(name, schema, f"{owners[0][1].help}, of method {', '.join(m.name for m, _ in owners)} (not given: "
                 f"the params file's where the service has one, else the default; {per_method})")


def linking_fields(methods: Sequence[LinkingMethod], top_ranked: bool) -> list[Field]:
    """``method`` (one of ``methods``, those the service serves), their parameters and (where the
    route takes it) ``top_ranked``."""
    names = [m.name for m in methods]
    method = Field("method", {"type": "string", "enum": names, "default": DEFAULT_METHOD},
                   "linking method: " + "; ".join(f"{m.name}: {m.summary}" for m in methods))
    finder = [Field(TOP_RANKED.name, {**_bounds(TOP_RANKED), "default": TOP_RANKED.default},
                    TOP_RANKED.help)] if top_ranked else []
    parameters = [name for name in LINKING_PARAMETERS if any(m.parameter(name) for m in methods)]
    return [method, *(method_parameter(name, methods) for name in parameters), *finder]


def query_fields() -> list[Field]:
    """The queries of a request: ``q`` (and ``qid``), or ``queries``."""
    return [Field("q", {"type": "string"}, "one query"),
            Field("qid", {"type": "string", "default": "q1"}, "the query id of q"),
            Field("queries", {"oneOf": [{"type": "array", "items": {"type": "string"}},
                                        {"type": "object", "additionalProperties": {"type": "string"}}]},
                  "several queries: a list (q1, q2, ...) or an object {qid: query}", in_query=False)]


def rank_fields(service: Service) -> list[Field]:
    """``model``, ``k``, ``params``, ``links``, and the linking of the models that take links."""
    takers, most = ", ".join(m.name for m in MODELS if m.needs_links), service.limits.max_k
    link = {"type": "object", "properties": {"entity": {"type": "string"}, "score": {"type": "number"}}}
    return [
        Field("model", {"type": "string", "enum": list(MODELS.names()), "default": DEFAULT_MODEL},
              "retrieval model: " + "; ".join(f"{m.name}: {m.summary}" for m in MODELS)),
        Field("k", {"type": "integer", "minimum": 1, "maximum": most, "default": min(DEFAULT_K, most)},
              "entities per query"),
        Field("params", {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
              "model parameters NAME=VALUE, as elquery rank --param (repeatable): "
              + "; ".join(help_line(m) for m in MODELS)),
        Field("links", {"oneOf": [{"type": "array", "items": link},
                                  {"type": "object", "additionalProperties": {"type": "array", "items": link}}]},
              f"the queries' linked entities, for {takers}: a list (one query) or an object of lists by qid "
              "(not given: the service links them with method)", in_query=False),
        *linking_fields(service.artefacts.methods(), top_ranked=False),
    ]


def link_fields(service: Service) -> list[Field]:
    return [*query_fields(), *linking_fields(service.artefacts.methods(), top_ranked=True)]


def nif_fields(service: Service) -> list[Field]:
    return linking_fields(service.artefacts.methods(), top_ranked=False)


FieldsOf = Callable[["Service"], list[Field]]
"""The fields of a route of a service (its methods and limits)."""


def operation(fields: list[Field], http_method: str, body: str | None = None) -> dict[str, Any]:
    """The OpenAPI operation fragment of ``fields``: query parameters (GET, or beside a ``body``
    of that media type that holds no parameters), or a JSON or form body (POST)."""
    if http_method == "GET" or body is not None:
        parameters = [{"name": f.name, "in": "query", "required": False, "schema": f.schema,
                       "description": f.description} for f in fields if f.in_query]
        return {"parameters": parameters,
                **({} if body is None else {"requestBody": {"content": {body: {"schema": {"type": "string"}}}}})}
    def content(chosen: list[Field]) -> dict[str, Any]:
        return {"schema": {"type": "object", "properties": {f.name: {**f.schema, "description": f.description}
                                                             for f in chosen}}}
    return {"requestBody": {"content": {"application/json": content(fields),
                                        "application/x-www-form-urlencoded": content([f for f in fields if f.in_query])}}}


ONE_STRING = ("qid", "lang")
"""Fields that are one string (a query id, TAGME's ``lang``, which its answer echoes); ``q`` and
``text`` are the queries' (:meth:`~elquery.serve.service.Service.queries`), the names of methods
and models the registries'."""
WHOLE_NUMBERS = ("k",)


def check_request(values: dict[str, Any]) -> dict[str, Any]:
    """``values``, the parameters of a request, if every route can read them: no text anywhere in
    them (names, values, nested at any depth) holds a lone surrogate (a JSON escape such as
    ``\\ud800`` that is not Unicode text: 400, it could not even be written back); the fields of
    :data:`ONE_STRING` are a string, ``k`` is a number or its text (not ``true``), ``params`` a
    ``NAME=VALUE`` text or a list of them (422). The ranges and the names of methods and models are
    the registries' to check. A field given as JSON ``null`` is left out: as if not given."""
    values = {name: value for name, value in values.items() if value is not None}
    for name, value in values.items():
        found = lone_surrogate(name) or surrogate_within(value)
        if found:
            shown = name.encode("utf-8", "backslashreplace").decode("utf-8")  # the message must be text itself
            raise _refused(400, f"{shown} holds a lone surrogate (U+{ord(found):04X}), which is not Unicode text")
    for name in ONE_STRING:
        if name in values and not isinstance(values[name], str):
            raise _refused(422, f"{name}: expected a string, got {values[name]!r}")
    for name in WHOLE_NUMBERS:
        if isinstance(values.get(name), bool):
            raise _refused(422, f"{name} must be a whole number, got {values[name]!r}")
    params = values.get("params")
    if params is not None and not (isinstance(params, str)
                                   or isinstance(params, list) and all(isinstance(p, str) for p in params)):
        raise _refused(422, f"params: expected NAME=VALUE or a list of them, got {params!r}")
    return values


def surrogate_within(value: Any) -> str | None:
    """The first lone surrogate (:func:`~elquery.formats.queries.lone_surrogate`) in the texts of
    a JSON value, names included (walked without recursion, so any depth the JSON parser took
    passes), else None."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if found := lone_surrogate(item):
                return found
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None


def _refused(status: int, message: str) -> Exception:
    from elquery.serve.service import RequestError

    return RequestError(status, message)
