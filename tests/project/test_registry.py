"""The generic registry and its typed parameters: one validation, one message, at every door."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from elquery.base import ElqueryError
from elquery.registry import Parameter, Registry, validate_parameters

THRESHOLD = Parameter("gif_threshold", float, 20.0, "GIF threshold s", demo_default=0.25, minimum=0.0)
DEPTH = Parameter("depth", int, 1000, "re-ranking depth", minimum=0, open_minimum=True)
FIELD = Parameter("field", str, "content", "field", choices=("names", "content"))


@dataclass(frozen=True)
class Thing:
    name: str
    parameters: tuple[Parameter, ...]


def test_a_text_from_a_command_line_or_query_string_is_parsed() -> None:
    assert THRESHOLD.validate("0.5") == 0.5
    assert DEPTH.validate("10") == 10 and DEPTH.validate(10.0) == 10
    assert FIELD.validate("names") == "names"


@pytest.mark.parametrize(("parameter", "value", "message"), [
    (THRESHOLD, -1, "m: gif_threshold must be 0 <= gif_threshold, got -1"),
    (THRESHOLD, "nan", "m: gif_threshold must be a number, got 'nan'"),
    (THRESHOLD, float("inf"), "m: gif_threshold must be a number, got inf"),
    (THRESHOLD, [1], "m: gif_threshold must be a number, got [1]"),
    (THRESHOLD, True, "m: gif_threshold must be a number, got True"),
    (DEPTH, 0, "m: depth must be 0 < depth, got 0"),
    (DEPTH, 2.5, "m: depth must be a whole number, got 2.5"),
    (FIELD, "title", "m: field must be one of names, content, got 'title'"),
    (FIELD, ["names"], "m: field must be a text, got ['names']"),
])
def test_bad_values_are_one_line_naming_owner_and_parameter(parameter: Parameter, value: object, message: str) -> None:
    with pytest.raises(ElqueryError) as refused:
        parameter.validate(value, "m")
    assert str(refused.value) == message


def test_defaults_and_descriptions() -> None:
    assert THRESHOLD.default_for(demo=True) == 0.25 and THRESHOLD.default_for(demo=False) == 20.0
    assert FIELD.default_for(demo=True) == "content"
    assert THRESHOLD.flag == "--gif-threshold"
    assert THRESHOLD.describe() == "0 <= gif_threshold; default 20; demo KB 0.25"


def test_registry_lookup_and_unknown_names() -> None:
    registry: Registry[Thing] = Registry("method")
    registry.register(Thing("mlm", (THRESHOLD,)))
    registry.register(Thing("cmns", ()))
    assert registry.names() == ("mlm", "cmns") and "mlm" in registry
    assert [t.name for t in registry] == ["mlm", "cmns"]
    with pytest.raises(ElqueryError, match=r"^unknown method 'x'; methods are mlm, cmns$"):
        registry.get("x")
    with pytest.raises(ElqueryError, match=r"^unknown method \['mlm'\]"):
        registry.get(["mlm"])
    with pytest.raises(ValueError):
        registry.register(Thing("mlm", ()))


def test_validate_parameters() -> None:
    thing = Thing("mlm", (THRESHOLD, DEPTH))
    assert validate_parameters(thing, {"gif_threshold": "1", "depth": None}) == {"gif_threshold": 1.0}
    with pytest.raises(ElqueryError, match=r"^mlm has no parameter k1; its parameters are gif_threshold, depth$"):
        validate_parameters(thing, {"k1": 1})
