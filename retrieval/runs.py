"""TREC run files: ``qid Q0 entity rank score tag`` per line, queries in the given order."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from elquery.base import ElqueryError
from elquery.retrieval.searcher import RankedEntity


def run_lines(qid: str, ranking: Iterable[RankedEntity], tag: str) -> list[str]:
    """The run lines of one query; scores are written exactly (shortest round-trip form)."""
    lines = []
    for hit in ranking:
        if any(c.isspace() for c in hit.entity):
            raise ElqueryError(f"entity id {hit.entity!r} holds whitespace and cannot go into a TREC run")
        lines.append(f"{qid} Q0 {hit.entity} {hit.rank} {hit.score!r} {tag}\n")
    return lines


def write_run(path: Path | str, rankings: Iterable[tuple[str, Iterable[RankedEntity]]], tag: str) -> int:
    """Write a TREC run (to a temporary file, renamed on success); returns the number of lines."""
    path = Path(path)
    if not tag or any(c.isspace() for c in tag):
        raise ElqueryError(f"run tag {tag!r} must be non-empty and hold no whitespace")
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    count = 0
    try:
        with partial.open("w", encoding="utf-8") as out:
            for qid, ranking in rankings:
                lines = run_lines(qid, ranking, tag)
                out.writelines(lines)
                count += len(lines)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return count
