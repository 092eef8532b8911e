"""The arguments of a tool, declared from the service's request fields
(:class:`elquery.serve.schema.Field`: name, JSON schema, help), so a tool's input schema is the
OpenAPI description of the route it mirrors. The MCP SDK validates nothing of them: each value
reaches the tool as given and is checked by the code that checks the route's (the registries,
:class:`~elquery.serve.service.Service`), so a bad value gets elquery's one-line message."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from pydantic import Field as Described
from pydantic import PlainValidator, WithJsonSchema

from elquery.serve.schema import Field

Values = dict[str, Any]
ToolBody = Callable[[Values], Awaitable[dict[str, Any]]]


def _as_given(value: Any) -> Any:
    return value


def argument(field: Field) -> Any:
    """The annotation of ``field`` as a tool argument: documented by its schema and help, taken as
    given. A string field is annotated ``str`` so that the SDK leaves its text alone (it reads a
    text given for any other field as JSON when it can: a list given as a string)."""
    kind: Any = str if field.schema.get("type") == "string" else Any
    return Annotated[kind, PlainValidator(_as_given), WithJsonSchema(field.schema), Described(description=field.description)]


def tool_function(name: str, fields: Sequence[Field], body: ToolBody) -> Callable[..., Awaitable[dict[str, Any]]]:
    """A function whose keyword arguments are ``fields`` (each optional), calling ``body`` with
    the values given (those not None, as a request that leaves them out)."""
    async def tool(**values: Any) -> dict[str, Any]:
        return await body({key: value for key, value in values.items() if value is not None})

    parameters = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=argument(f))
                  for f in fields]
    # a function's __signature__ (read by inspect.signature, so the SDK sees the tool's arguments) is not in typeshed
    tool.__signature__ = inspect.Signature(parameters, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    tool.__name__ = tool.__qualname__ = name
    return tool
