"""TREC run files: ``qid Q0 entity rank score tag`` per line, queries in the given order.

trec_eval (and ir_measures) ignore the rank column and order a query's lines by score, breaking
ties by docid *descending*, while elquery breaks ties by entity id ascending. So that a written
run is evaluated in elquery's own order, the scores written for one query strictly decrease: a
score that does not fall below the one written before it is lowered to the next representable
float below that one (``math.nextafter``). Distinct scores are written exactly as computed; tied
ones differ from the computed value by a few units in the last place. See docs/formats.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from elquery.base import ElqueryError
from elquery.files import atomic_output

if TYPE_CHECKING:
    from elquery.retrieval.searcher import RankedEntity


def run_scores(scores: Iterable[float]) -> list[float]:
    """Scores in ranking order made strictly decreasing (see the module docstring): each is the
    computed score, or the next float below the previous written score when it would tie it."""
    written: list[float] = []
    for score in scores:
        score = float(score)
        if written and score >= written[-1]:
            score = math.nextafter(written[-1], -math.inf)
        written.append(score)
    return written


def run_lines(qid: str, ranking: Iterable[RankedEntity], tag: str) -> list[str]:
    """The run lines of one query, in ranking order; scores in shortest round-trip form, strictly
    decreasing (:func:`run_scores`)."""
    hits = list(ranking)
    lines = []
    for hit, score in zip(hits, run_scores(h.score for h in hits)):
        if any(c.isspace() for c in hit.entity):
            raise ElqueryError(f"entity id {hit.entity!r} holds whitespace and cannot go into a TREC run")
        lines.append(f"{qid} Q0 {hit.entity} {hit.rank} {score!r} {tag}\n")
    return lines


def write_run(path: Path | str, rankings: Iterable[tuple[str, Iterable[RankedEntity]]], tag: str) -> int:
    """Write a TREC run (:func:`elquery.files.atomic_output`: ``-`` is standard output); returns
    the number of lines."""
    if not tag or any(c.isspace() for c in tag):
        raise ElqueryError(f"run tag {tag!r} must be non-empty and hold no whitespace")
    count = 0
    with atomic_output(path) as out:
        for qid, ranking in rankings:
            lines = run_lines(qid, ranking, tag)
            out.writelines(lines)
            count += len(lines)
    return count
