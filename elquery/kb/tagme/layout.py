"""File names and metadata of the TAGME artefact directory (methods.md §6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError

FORMAT = "elquery-tagme-1"
DICTIONARY_FILE = "dictionary.db"
INDPTR_FILE = "inlinks.indptr.npy"
INDICES_FILE = "inlinks.indices.npy"
META_FILE = "meta.json"


def write_meta(directory: Path, meta: dict[str, Any]) -> None:
    (directory / META_FILE).write_text(json.dumps({"format": FORMAT, **meta}, indent=1) + "\n", encoding="utf-8")


def read_meta(directory: Path) -> dict[str, Any]:
    """The metadata of a TAGME artefact directory; a one-line error if it is not one."""
    path = directory / META_FILE
    if not path.is_file():
        raise ElqueryError(f"{directory}: not a TAGME artefact (no {META_FILE}); build one with `elquery index tagme`")
    meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise ElqueryError(f"{directory}: TAGME artefact format {meta.get('format')} is not {FORMAT}; rebuild it")
    return meta
