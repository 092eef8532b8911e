"""Tuned linking thresholds: the params file ``elquery experiment`` writes into its output folder
(``params.json``; docs/formats.md, "Params files") and ``elquery link --params``, ``elquery serve
--params`` and ``Linker(..., params=...)`` read.

A params file holds, per method, the thresholds an experiment chose, the method's ``tuned``
parameters in the registry (:data:`elquery.linking.methods.METHODS`): the commonness threshold c
(methods.md §3) and GIF's score threshold s (§5) of CMNS, MLM, MLMc, MLMcg and LTR, TAGME's
rho_NA (§6)::

    {"format": "elquery-linking-params/1",
     "experiment": {"config": "...", "name": "...", "task": "interpretation_finding", "metric": "strict.F"},
     "methods": {"mlmcg": {"commonness_threshold": 0.1, "gif_threshold": 0.25,
                           "tuned": {"label": "GIF-MLMcg", "metric": "strict.F", "value": 0.6667, "queries": 10}},
                 "tagme": {"rho_na": 0.1, "tuned": {...}}}}

A threshold a linker is not given comes from its method's entry, else from the defaults. Every
mistake (no such file, not JSON, another format, an unknown method or key, a value out of range)
is one :class:`~elquery.base.ElqueryError` line naming the file and the key; a value is checked by
the method's registry entry, with the message of every other door.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.linking.methods import METHODS, LinkingMethod

FORMAT = "elquery-linking-params/1"
PARAMS_FILE = "params.json"
"""The name of the params file in an experiment's output folder."""
THRESHOLDS = ("commonness_threshold", "gif_threshold", "rho_na")
"""Every tuned parameter of a method of the registry (:attr:`LinkingMethod.tuned`)."""


@dataclass(frozen=True)
class MethodParams:
    """The tuned thresholds of one method (None: not tuned) and, informally, how they were tuned
    (``tuned``: the experiment's method label, metric, its value and the number of queries)."""

    commonness_threshold: float | None = None
    gif_threshold: float | None = None
    rho_na: float | None = None
    tuned: Mapping[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> float | None:
        """The tuned value of parameter ``name`` (None: not tuned)."""
        return getattr(self, name) if name in THRESHOLDS else None

    def as_dict(self) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in THRESHOLDS}
        return {**{k: v for k, v in values.items() if v is not None}, **({"tuned": dict(self.tuned)} if self.tuned else {})}


@dataclass(frozen=True)
class LinkingParams:
    """The thresholds of a params file, per method of the registry."""

    methods: Mapping[str, MethodParams]
    path: Path | None = None
    """The file they were read from (None: made in memory)."""
    experiment: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = str(self.path) if self.path is not None else "params"
        for method, params in self.methods.items():
            entry = _method_entry(where, method)
            for name in THRESHOLDS:
                value = getattr(params, name)
                if value is not None:
                    if name not in entry.tuned:
                        raise ElqueryError(f"{where}: methods.{method}.{name}: not a threshold of {method} "
                                           f"(its thresholds: {', '.join(entry.tuned)})")
                    _check_value(where, entry, name, value)

    def of(self, method: str) -> MethodParams | None:
        """The tuned thresholds of ``method``, if the file has them."""
        return self.methods.get(method)

    @property
    def origin(self) -> str:
        """Where these thresholds come from, for messages: ``params file PATH``."""
        return f"params file {self.path}" if self.path is not None else "params"


def _method_entry(where: str, method: str) -> LinkingMethod:
    try:
        return METHODS.get(method)
    except ElqueryError as exc:
        raise ElqueryError(f"{where}: methods.{method}: {exc}") from None


def _check_value(where: str, entry: LinkingMethod, name: str, value: object) -> float:
    """``value`` checked by the method's parameter ``name`` (e.g. c in [0, 1]; s, rho_NA >= 0)."""
    parameter = entry.parameter(name)
    assert parameter is not None  # name is one of entry.tuned
    return parameter.validate(value, f"{where}: methods.{entry.name}")


def load_params(path: str | os.PathLike[str]) -> LinkingParams:
    """Read and check a params file (see the module docstring)."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ElqueryError(f"{file}: no such params file (`elquery experiment` writes OUT/{PARAMS_FILE})") from None
    except IsADirectoryError:
        raise ElqueryError(f"{file}: is a folder, not a params file (`elquery experiment` writes OUT/{PARAMS_FILE})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ElqueryError(f"{file}: not a params file: invalid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ElqueryError(f"{file}: not a params file (format {found!r}, expected {FORMAT!r})")
    unknown = sorted(set(data) - {"format", "experiment", "methods"})
    if unknown:
        raise ElqueryError(f"{file}: {unknown[0]}: unknown key")
    methods = data.get("methods")
    if not isinstance(methods, dict) or not methods:
        raise ElqueryError(f"{file}: methods: expected an object of thresholds per method, got {methods!r}")
    experiment = data.get("experiment", {})
    if not isinstance(experiment, dict):
        raise ElqueryError(f"{file}: experiment: expected an object, got {experiment!r}")
    return LinkingParams({method: _method(file, method, entry) for method, entry in methods.items()}, file, experiment)


def _method(file: Path, method: str, entry: object) -> MethodParams:
    registered = _method_entry(str(file), method)
    keys = registered.tuned
    if not isinstance(entry, dict):
        raise ElqueryError(f"{file}: methods.{method}: expected an object of thresholds, got {entry!r}")
    for key in entry:
        if key not in (*keys, "tuned"):
            raise ElqueryError(f"{file}: methods.{method}.{key}: unknown key (the thresholds of {method}: "
                               f"{', '.join(keys)})")
    tuned = entry.get("tuned", {})
    if not isinstance(tuned, dict):
        raise ElqueryError(f"{file}: methods.{method}.tuned: expected an object, got {tuned!r}")
    values = {key: _check_value(str(file), registered, key, entry[key]) for key in keys if key in entry}
    if not values:
        raise ElqueryError(f"{file}: methods.{method}: no threshold given ({', '.join(keys)})")
    return MethodParams(**values, tuned=tuned)


def write_params(path: Path, params: LinkingParams) -> None:
    """Write ``params`` as a params file (beside its name, renamed when complete)."""
    record = {"format": FORMAT, "experiment": dict(params.experiment),
              "methods": {method: entry.as_dict() for method, entry in params.methods.items()}}
    with atomic_output(path) as stream:
        stream.write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
