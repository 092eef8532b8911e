"""Tuned linking thresholds: the params file ``elquery experiment`` writes into its output folder
(``params.json``; docs/formats.md, "Params files") and ``elquery link --params``, ``elquery serve
--params`` and ``Linker(..., params=...)`` read.

A params file holds, per method, the thresholds an experiment chose: the commonness threshold c
(methods.md §3) and GIF's score threshold s (§5) of CMNS, MLM, MLMc and MLMcg, TAGME's rho_NA (§6)::

    {"format": "elquery-linking-params/1",
     "experiment": {"config": "...", "name": "...", "task": "interpretation_finding", "metric": "strict.F"},
     "methods": {"mlmcg": {"commonness_threshold": 0.1, "gif_threshold": 0.25,
                           "tuned": {"label": "GIF-MLMcg", "metric": "strict.F", "value": 0.6667, "queries": 10}},
                 "tagme": {"rho_na": 0.1, "tuned": {...}}}}

A threshold a linker is not given comes from its method's entry, else from the defaults. Every
mistake (no such file, not JSON, another format, an unknown method or key, a value out of range)
is one :class:`~elquery.base.ElqueryError` line naming the file and the key.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.linking.methods import METHODS

FORMAT = "elquery-linking-params/1"
PARAMS_FILE = "params.json"
"""The name of the params file in an experiment's output folder."""
TAGME = "tagme"
PARAMS_METHODS = (*METHODS, TAGME)
_KEYS = {**{method: ("commonness_threshold", "gif_threshold") for method in METHODS}, TAGME: ("rho_na",)}


@dataclass(frozen=True)
class MethodParams:
    """The tuned thresholds of one method (None: not tuned) and, informally, how they were tuned
    (``tuned``: the experiment's method label, metric, its value and the number of queries)."""

    commonness_threshold: float | None = None
    gif_threshold: float | None = None
    rho_na: float | None = None
    tuned: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in ("commonness_threshold", "gif_threshold", "rho_na")}
        return {**{k: v for k, v in values.items() if v is not None}, **({"tuned": dict(self.tuned)} if self.tuned else {})}


@dataclass(frozen=True)
class LinkingParams:
    """The thresholds of a params file, per method (:data:`PARAMS_METHODS`)."""

    methods: Mapping[str, MethodParams]
    path: Path | None = None
    """The file they were read from (None: made in memory)."""
    experiment: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = str(self.path) if self.path is not None else "params"
        for method, params in self.methods.items():
            _check_method(where, method)
            for name in ("commonness_threshold", "gif_threshold", "rho_na"):
                value = getattr(params, name)
                if value is not None:
                    if name not in _KEYS[method]:
                        raise ElqueryError(f"{where}: methods.{method}.{name}: not a threshold of {method} "
                                           f"(its thresholds: {', '.join(_KEYS[method])})")
                    _check_value(where, f"methods.{method}.{name}", value)

    def of(self, method: str) -> MethodParams | None:
        """The tuned thresholds of ``method``, if the file has them."""
        return self.methods.get(method)

    @property
    def origin(self) -> str:
        """Where these thresholds come from, for messages: ``params file PATH``."""
        return f"params file {self.path}" if self.path is not None else "params"


def _check_method(where: str, method: str) -> None:
    if method not in PARAMS_METHODS:
        raise ElqueryError(f"{where}: methods.{method}: unknown method {method!r}; methods are {', '.join(PARAMS_METHODS)}")


def _check_value(where: str, key: str, value: object) -> None:
    """c in [0, 1]; s and rho_NA finite and >= 0 (methods.md §3, §5, §6)."""
    top = 1.0 if key.endswith("commonness_threshold") else math.inf
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf or value > top:
        expected = "a number between 0 and 1" if top == 1.0 else "a finite number >= 0"
        raise ElqueryError(f"{where}: {key}: expected {expected}, got {value!r}")


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
    _check_method(str(file), method)
    if not isinstance(entry, dict):
        raise ElqueryError(f"{file}: methods.{method}: expected an object of thresholds, got {entry!r}")
    for key in entry:
        if key not in (*_KEYS[method], "tuned"):
            raise ElqueryError(f"{file}: methods.{method}.{key}: unknown key (the thresholds of {method}: "
                               f"{', '.join(_KEYS[method])})")
    tuned = entry.get("tuned", {})
    if not isinstance(tuned, dict):
        raise ElqueryError(f"{file}: methods.{method}.tuned: expected an object, got {tuned!r}")
    for key in _KEYS[method]:
        if key in entry:
            _check_value(str(file), f"methods.{method}.{key}", entry[key])
    values = {key: float(entry[key]) for key in _KEYS[method] if key in entry}
    if not values:
        raise ElqueryError(f"{file}: methods.{method}: no threshold given ({', '.join(_KEYS[method])})")
    return MethodParams(**values, tuned=tuned)


def write_params(path: Path, params: LinkingParams) -> None:
    """Write ``params`` as a params file (beside its name, renamed when complete)."""
    record = {"format": FORMAT, "experiment": dict(params.experiment),
              "methods": {method: entry.as_dict() for method, entry in params.methods.items()}}
    with atomic_output(path) as stream:
        stream.write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
