"""Registries of named things with typed parameters, in the manner of ir_measures' measures.

A :class:`Registry` holds one kind of thing (linking methods, retrieval models), each entry naming
itself and declaring its :class:`Parameter` s: a type, a default (and, where a small knowledge
base needs another, the demo's), a range or choices, and the help line. Every door (the command
line, the Python API, the service, the experiment configs) asks the registry, so a value is
checked in one place and accepted or refused with the same message everywhere; the command-line
flags, the service's schema and the documentation tables are generated from the same entries.

This module sits on the ground floor: it imports nothing of the layers.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from elquery.base import ElqueryError

_KINDS: dict[type, str] = {float: "a number", int: "a whole number", str: "a text", bool: "true or false",
                           Path: "a path"}


@dataclass(frozen=True)
class Parameter:
    """One typed parameter of a registered entry.

    ``name`` is its identifier in the Python API, configs and requests (``gif_threshold``); the
    command-line flag is derived from it (``--gif-threshold``). ``demo_default`` replaces
    ``default`` on the bundled demo knowledge base (``None``: the same). ``minimum``/``maximum``
    bound a number (inclusive; ``open_minimum`` makes the lower bound exclusive). A ``Path``
    parameter takes a text or path (a file an entry reads, e.g. a model). A ``required`` parameter
    has no default: :func:`require_parameters` refuses values without it.
    """

    name: str
    kind: type
    default: Any
    help: str
    demo_default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    choices: tuple[Any, ...] | None = None
    required: bool = False

    @property
    def flag(self) -> str:
        """The command-line flag of the parameter."""
        return "--" + self.name.replace("_", "-")

    def default_for(self, demo: bool) -> Any:
        """The default on the demo knowledge base (``demo``) or on any other."""
        return self.demo_default if demo and self.demo_default is not None else self.default

    def describe(self) -> str:
        """The range and default(s) as one phrase, for help texts and documentation tables."""
        parts = ["required"] if self.required else []
        if self.choices is not None:
            parts.append("one of " + ", ".join(map(str, self.choices)))
        elif self.minimum is not None or self.maximum is not None:
            low = "" if self.minimum is None else f"{self.minimum:g} {'<' if self.open_minimum else '<='} "
            high = "" if self.maximum is None else f" <= {self.maximum:g}"
            parts.append(f"{low}{self.name}{high}")
        if self.default is not None:
            parts.append(f"default {self.default:g}" if isinstance(self.default, float) else f"default {self.default}")
        if self.demo_default is not None:
            parts.append(f"demo KB {self.demo_default:g}" if isinstance(self.demo_default, float)
                         else f"demo KB {self.demo_default}")
        return "; ".join(parts)

    def validate(self, value: Any, owner: str = "") -> Any:
        """``value`` converted to the parameter's type and checked against its range; a text (from
        a command line or a query string) is parsed. Raises :class:`ElqueryError` with one line
        naming the owner and the parameter."""
        where = f"{owner}: " if owner else ""
        converted = self._convert(value, where)
        if self.choices is not None and converted not in self.choices:
            raise ElqueryError(f"{where}{self.name} must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        if isinstance(converted, (int, float)) and not isinstance(converted, bool):
            too_low = self.minimum is not None and (converted <= self.minimum if self.open_minimum
                                                    else converted < self.minimum)
            too_high = self.maximum is not None and converted > self.maximum
            if too_low or too_high:
                raise ElqueryError(f"{where}{self.name} must be {self.describe().split(';')[0]}, got {value}")
        return converted

    def _convert(self, value: Any, where: str) -> Any:
        wrong = ElqueryError(f"{where}{self.name} must be {_KINDS.get(self.kind, self.kind.__name__)}, got {value!r}")
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
                return value.lower() in ("true", "1", "yes")
            raise wrong
        if self.kind is Path:
            if isinstance(value, os.PathLike) or isinstance(value, str) and value.strip():
                return Path(value)
            raise wrong
        if self.kind in (int, float):
            if isinstance(value, bool):
                raise wrong
            if isinstance(value, str):
                try:
                    value = float(value.strip())
                except ValueError:
                    raise wrong from None
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise wrong
            if self.kind is int:
                if value != int(value):
                    raise wrong
                return int(value)
            return float(value)
        if not isinstance(value, self.kind):
            raise wrong
        return value


class Entry(Protocol):
    """What a registry holds: a name, a display name and parameters."""

    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> tuple[Parameter, ...]: ...


E = TypeVar("E", bound=Entry)


@dataclass
class Registry(Generic[E]):
    """Entries of one kind by name, in registration order. ``kind`` names them in messages
    ("method", "model")."""

    kind: str
    _entries: dict[str, E] = field(default_factory=dict)

    def register(self, entry: E) -> E:
        """Add ``entry`` (its name must be new); returns it, so it can decorate a definition."""
        if entry.name in self._entries:
            raise ValueError(f"{self.kind} {entry.name!r} is registered twice")
        self._entries[entry.name] = entry
        return entry

    def get(self, name: Any) -> E:
        """The entry called ``name``; an unknown (or non-text) name is one line listing the valid ones."""
        if not isinstance(name, str) or name not in self._entries:
            raise ElqueryError(f"unknown {self.kind} {name!r}; {self.kind}s are {', '.join(self._entries)}")
        return self._entries[name]

    def argument(self, name: str) -> str:
        """An argparse ``type=`` for a name of the registry: an unknown one is the registry's one
        line (:meth:`get`), the same message every other door gives."""
        import argparse

        try:
            return self.get(name).name
        except ElqueryError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __iter__(self) -> Iterator[E]:
        return iter(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def validate_parameters(entry: Entry, values: Mapping[str, Any], owner: str | None = None) -> dict[str, Any]:
    """The given ``values`` of ``entry``'s parameters, each validated (:meth:`Parameter.validate`);
    a name the entry does not declare is one line naming the ones it does. Values that are
    ``None`` are left out (the default applies)."""
    declared = {p.name: p for p in entry.parameters}
    owner = owner if owner is not None else entry.name
    unknown = sorted(set(values) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise ElqueryError(f"{owner} has no parameter {', '.join(unknown)}; its parameters are {known}")
    return {name: declared[name].validate(value, owner) for name, value in values.items() if value is not None}


def require_parameters(entry: Entry, values: Mapping[str, Any], owner: str | None = None) -> None:
    """Refuse ``values`` (as :func:`validate_parameters` returns them) that lack a required
    parameter of ``entry``, in one line naming it and its help."""
    for parameter in entry.parameters:
        if parameter.required and values.get(parameter.name) is None:
            raise ElqueryError(f"{owner if owner is not None else entry.name} needs {parameter.name}: {parameter.help}")
