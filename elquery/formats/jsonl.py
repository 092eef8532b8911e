"""JSON Lines: one JSON object per line (``elquery link --format jsonl`` runs, elquery's caches).

Read with the one line reader's rules, except its line limit: a record holds one query's whole
output (all its candidates at c = 0, in an experiment's cache), which has no bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from elquery.files import atomic_output
from elquery.formats.lines import FormatError, input_name, record_lines

WHAT = "JSON Lines file"


def jsonl_line(record: Mapping[str, Any]) -> str:
    """One record as its line (without the line end): compact JSON, non-ASCII text as is."""
    return json.dumps(record, ensure_ascii=False)


def write_jsonl(path: Path | str, records: Iterable[Mapping[str, Any]]) -> int:
    """Write ``records``, one line each, that :func:`read_jsonl` reads back (``-``: standard
    output); returns the number of records."""
    count = 0
    with atomic_output(path) as out:
        for record in records:
            out.write(jsonl_line(record) + "\n")
            count += 1
    return count


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """Read JSON Lines: one JSON object per non-blank line."""
    name = input_name(path)
    records: list[dict[str, Any]] = []
    for line, text in record_lines(path, WHAT, max_line_bytes=None):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(name, line, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(record, dict):
            raise FormatError(name, line, f"expected a JSON object, got {type(record).__name__}")
        records.append(record)
    return records
