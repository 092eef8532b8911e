"""TREC run files: ``qid Q0 entity rank score tag`` per line, queries in the given order.

trec_eval (and ir_measures) ignore the rank column and order a query's lines by score, breaking
ties by docid *descending*, while elquery breaks ties by entity id ascending. So that a written
run is evaluated in elquery's own order, the scores written for one query strictly decrease: a
score that does not fall below the one written before it is lowered to the next representable
float below that one (``math.nextafter``). Distinct scores are written exactly as computed; tied
ones differ from the computed value by a few units in the last place. See docs/formats.md.

Read back (:func:`read_trec_run`) as trec_eval reads it: whitespace-separated fields, the rank
checked but ignored, a score a decimal number as C's strtod reads it whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.formats.lines import (FormatError, check_qid, decimal, input_name, integer, record_lines,
                                   whitespace_fields)

WHAT = "TREC run file"
TrecRun = dict[str, dict[str, float]]
Ranked = tuple[int, str, float]
"""One ranked entity, ``(rank, entity, score)``: a :class:`~elquery.retrieval.RankedEntity` is one."""


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


def run_lines(qid: str, ranking: Iterable[Ranked], tag: str) -> list[str]:
    """The run lines of one query, in ranking order; scores in shortest round-trip form, strictly
    decreasing (:func:`run_scores`)."""
    check_qid(qid)
    hits = list(ranking)
    lines = []
    for (rank, entity, _), score in zip(hits, run_scores(hit[2] for hit in hits)):
        if any(c.isspace() for c in entity):
            raise ElqueryError(f"entity id {entity!r} holds whitespace and cannot go into a TREC run")
        lines.append(f"{qid} Q0 {entity} {rank} {score!r} {tag}\n")
    return lines


def in_scheme(rankings: Iterable[tuple[str, Iterable[Ranked]]],
              written: Callable[[Sequence[str]], Mapping[str, str | None]],
              missing: list[int]) -> Iterator[tuple[str, list[Ranked]]]:
    """``rankings`` with each entity as ``written`` gives it (``--entity-ids``, docs/identifiers.md);
    an entity it gives None keeps its DBpedia id and is counted in ``missing[0]``."""
    for qid, ranking in rankings:
        hits = list(ranking)
        found = written([entity for _, entity, _ in hits])
        mapped = []
        for rank, entity, score in hits:
            other = found.get(entity)
            missing[0] += other is None
            mapped.append((rank, other or entity, score))
        yield qid, mapped


def write_run(path: Path | str, rankings: Iterable[tuple[str, Iterable[Ranked]]], tag: str) -> int:
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


def read_trec_run(path: Path | str) -> TrecRun:
    """Read a TREC run, ``qid Q0 docid rank score tag`` (whitespace-separated). The rank column
    is checked but ignored: as in trec_eval, documents are ordered by score descending, ties by
    docid descending. A docid retrieved twice for a query is an error."""
    name = input_name(path)
    run: TrecRun = {}
    for line, text in record_lines(path, WHAT):
        qid, _, doc, rank, score, _ = whitespace_fields(name, line, text, "qid Q0 docid rank score tag")
        integer(name, line, rank, "rank")
        ranking = run.setdefault(qid, {})
        if doc in ranking:
            raise FormatError(name, line, f"{doc!r} retrieved twice for query {qid!r}")
        ranking[doc] = decimal(name, line, score, "score")
    return run
