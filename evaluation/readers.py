"""Readers for ELQ runs and qrels, TREC runs and qrels, and JSONL (parsing only; no scoring).

Every reader raises :class:`EvaluationInputError` naming the file and line for a malformed line,
a duplicate, an undecodable line or an empty file. Files are UTF-8 (a BOM is accepted); blank
lines are skipped; ``\\r\\n`` line ends are accepted.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from elquery.evaluation.errors import EvaluationInputError
from elquery.evaluation.interpretation import EntitySet

PathLike = str | os.PathLike[str]
ElqData = dict[str, frozenset[EntitySet]]
TrecQrels = dict[str, dict[str, int]]
TrecRun = dict[str, dict[str, float]]


def _lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) for the non-blank lines; an empty file is an error."""
    seen = False
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise EvaluationInputError(path, number, f"not valid UTF-8 ({exc.reason})") from None
            text = text.rstrip("\r\n")
            if text.strip():
                seen = True
                yield number, text
    if not seen:
        raise EvaluationInputError(path, 1, "empty file: no lines to read")


# A decimal number as C's strtod (trec_eval) reads it whole: no digit separators such as "1_000",
# which Python's float() would accept.
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def _number(path: PathLike, line: int, text: str, what: str) -> float:
    if not _NUMBER.fullmatch(text):
        raise EvaluationInputError(path, line, f"{what} {text!r} is not a number")
    value = float(text)
    if math.isnan(value):
        raise EvaluationInputError(path, line, f"{what} {text!r} is NaN, which has no order")
    return value


def _integer(path: PathLike, line: int, text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise EvaluationInputError(path, line, f"{what} {text!r} is not an integer") from None


def read_elq(path: PathLike) -> ElqData:
    """Read an ELQ run or qrels file: ``qid<TAB>score<TAB>entity<TAB>entity...``, one line per
    interpretation, and a bare ``qid`` line for a query with no interpretation.

    A bare qid marks the query as processed; it may also appear next to interpretation lines of
    the same query. A ``qid<TAB>score`` line with no entity counts like a bare qid (the published
    evaluation scripts read it so). Entity ids are opaque strings; an entity repeated inside one
    line counts once (an interpretation is a set), and so does an entity set given twice for a
    query: a query's interpretations are a set too (one warning line on stderr counts the
    repeats). An empty field, whitespace inside the qid, or a score that is not a number is an
    error.
    """
    data: dict[str, dict[EntitySet, int]] = {}
    repeated = 0
    for line, text in _lines(path):
        fields = text.strip().split("\t")
        qid = fields[0]
        if not qid or qid != qid.strip() or len(qid.split()) != 1:
            raise EvaluationInputError(
                path, line, f"bad query id {qid!r} (fields must be tab-separated, qid first)")
        if any(not field for field in fields[1:]):
            raise EvaluationInputError(path, line, "empty field (two tabs in a row)")
        interpretations = data.setdefault(qid, {})
        if len(fields) == 1:
            continue
        _number(path, line, fields[1], "score")
        if len(fields) == 2:
            continue
        interpretation = frozenset(fields[2:])
        if interpretation in interpretations:
            repeated += 1
            continue
        interpretations[interpretation] = line
    if repeated:
        print(f"warning: {os.fspath(path)}: {repeated} repeated interpretations (the same entity "
              "set again for a query) count once", file=sys.stderr)
    return {qid: frozenset(interpretations) for qid, interpretations in data.items()}


def read_trec_qrels(path: PathLike) -> TrecQrels:
    """Read TREC qrels, ``qid iteration docid relevance`` (whitespace-separated, graded integer
    relevance). A docid judged twice for a query is an error."""
    qrels: TrecQrels = {}
    for line, text in _lines(path):
        fields = text.split()
        if len(fields) != 4:
            raise EvaluationInputError(
                path, line, f"expected 4 fields 'qid iteration docid relevance', got {len(fields)}")
        qid, _, doc, rel = fields
        judged = qrels.setdefault(qid, {})
        if doc in judged:
            raise EvaluationInputError(path, line, f"{doc!r} judged twice for query {qid!r}")
        judged[doc] = _integer(path, line, rel, "relevance")
    return qrels


def read_trec_run(path: PathLike) -> TrecRun:
    """Read a TREC run, ``qid Q0 docid rank score tag`` (whitespace-separated). The rank column
    is checked but ignored: as in trec_eval, documents are ordered by score descending, ties by
    docid descending. A docid retrieved twice for a query is an error."""
    run: TrecRun = {}
    for line, text in _lines(path):
        fields = text.split()
        if len(fields) != 6:
            raise EvaluationInputError(
                path, line, f"expected 6 fields 'qid Q0 docid rank score tag', got {len(fields)}")
        qid, _, doc, rank, score, _ = fields
        _integer(path, line, rank, "rank")
        ranking = run.setdefault(qid, {})
        if doc in ranking:
            raise EvaluationInputError(path, line, f"{doc!r} retrieved twice for query {qid!r}")
        ranking[doc] = _number(path, line, score, "score")
    return run


def read_jsonl(path: PathLike) -> list[dict[str, Any]]:
    """Read JSON Lines: one JSON object per non-blank line."""
    records: list[dict[str, Any]] = []
    for line, text in _lines(path):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvaluationInputError(path, line, f"invalid JSON: {exc.msg} (column {exc.colno})"
                                       ) from None
        if not isinstance(record, dict):
            raise EvaluationInputError(
                path, line, f"expected a JSON object, got {type(record).__name__}")
        records.append(record)
    return records
