"""Query files: TSV (``qid<TAB>query`` per line) or JSON (``{"qid": "query", ...}``, by the
``.json`` suffix). Blank TSV lines are skipped; a malformed line or a repeated qid is an error
naming the file and line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from elquery.base import ElqueryError


@dataclass(frozen=True)
class QueryRecord:
    qid: str
    text: str


def read_queries(path: Path | str) -> list[QueryRecord]:
    """The queries of a TSV or JSON query file, in file order; a file with none is an error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ElqueryError(f"{path}: no such query file") from None
    except IsADirectoryError:
        raise ElqueryError(f"{path}: is a directory, not a query file") from None
    except UnicodeDecodeError as exc:
        raise ElqueryError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    queries = _read_json(path, text) if path.suffix.lower() == ".json" else _read_tsv(path, text)
    if not queries:
        raise ElqueryError(f"{path}: no queries in this file")
    return queries


def _read_tsv(path: Path, text: str) -> list[QueryRecord]:
    queries: list[QueryRecord] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        qid, tab, query = line.partition("\t")
        qid = qid.strip()
        if not tab or not qid:
            raise ElqueryError(f"{path}:{number}: expected 'qid<TAB>query', got {line[:60]!r}")
        if qid in seen:
            raise ElqueryError(f"{path}:{number}: query id {qid!r} repeats line {seen[qid]}")
        seen[qid] = number
        queries.append(QueryRecord(qid, query.strip()))
    return queries


def _read_json(path: Path, text: str) -> list[QueryRecord]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ElqueryError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ElqueryError(f"{path}: expected a JSON object {{qid: query}}, got {type(data).__name__}")
    queries = []
    for qid, query in data.items():
        if not isinstance(query, str) or not qid.strip() or any(c.isspace() for c in qid):
            raise ElqueryError(f"{path}: query {qid!r}: expected a non-empty qid without spaces and a string query")
        queries.append(QueryRecord(qid, query.strip()))
    return queries
