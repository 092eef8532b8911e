"""``RUN.meta.json``: the metadata of a file in a format without room for it (a ``trec`` or
``elq`` run, an LTR features file), written beside it as one JSON object (docs/formats.md,
"Provenance")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import atomic_output

SIDECAR_SUFFIX = ".meta.json"


def sidecar_path(run: Path | str) -> Path:
    """Where the metadata of a run file in a format without room for it (TREC, elq) goes."""
    run = Path(run)
    return run.with_name(run.name + SIDECAR_SUFFIX)


def write_sidecar(run: Path | str, metadata: Mapping[str, Any]) -> None:
    """``RUN.meta.json`` beside a run file written to a path: ``metadata`` as JSON."""
    with atomic_output(sidecar_path(run)) as stream:
        stream.write(json.dumps(metadata, indent=1, sort_keys=True) + "\n")


def read_sidecar(run: Path | str) -> dict[str, Any]:
    """The metadata beside ``run``, or {} when there is none (a file made elsewhere)."""
    path = sidecar_path(run)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ElqueryError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ElqueryError(f"{path}: expected a JSON object")
    return data
