"""Links files: the linked entities of each query and their scores, the input of the ELR models
(``elquery rank --links FILE``; docs/formats.md, "links").

Two forms, told apart line by line (UTF-8, lines end at ``\\n``, blank lines skipped):

* TSV ``qid<TAB>entity<TAB>score``, one line per linked entity;
* JSON Lines, one object per query: ``{"qid": Q, "links": [{"entity": E, "score": S}, ...]}``, or a
  record of ``elquery link --format jsonl`` (``{"qid": Q, "interpretations": [...], ...}``), whose
  links are the entities of all its interpretations, each with its highest annotation score
  (annotations scored 0 are left out).

An entity is named in any form :func:`~elquery.indexing.ntriples.canonical_entity_id` takes; a
score is a positive finite number; an entity given twice for one qid, a line of neither form, or
(:func:`check_links`) an entity that is not in the index is a one-line error naming the file and
line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import is_stdio, text_lines
from elquery.indexing.index_format import IDS_FILE
from elquery.indexing.ntriples import canonical_entity_id
from elquery.retrieval.queries import QueryRecord

WHAT = "links file"


@dataclass(frozen=True)
class Link:
    """One linked entity of a query, with its score and where the file gave it."""

    entity: str
    score: float
    where: str


def read_links(path: Path | str) -> dict[str, tuple[Link, ...]]:
    """The links of every qid of a links file, in file order per qid."""
    name = "<stdin>" if is_stdio(path) else str(path)
    links: dict[str, dict[str, Link]] = {}
    for number, line in text_lines(path, WHAT):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        for qid, entity, score in _parse(where, line):
            _check_qid(where, qid)
            canonical = canonical_entity_id(entity) if isinstance(entity, str) else None
            if canonical is None:
                raise ElqueryError(f"{where}: {entity!r} is not a DBpedia entity id")
            if isinstance(score, bool) or not isinstance(score, int | float) or not (score > 0 and math.isfinite(score)):
                raise ElqueryError(f"{where}: the score of {canonical} must be a positive number, got {score!r}")
            query = links.setdefault(qid, {})
            if canonical in query:
                raise ElqueryError(f"{where}: {canonical} linked twice for query {qid!r} (first at {query[canonical].where})")
            query[canonical] = Link(canonical, float(score), where)
    return {qid: tuple(query.values()) for qid, query in links.items()}


def _check_qid(where: str, qid: object) -> None:
    if not isinstance(qid, str) or not qid or any(c.isspace() for c in qid):
        raise ElqueryError(f"{where}: query id {qid!r} must be a non-empty string with no whitespace")


def _parse(where: str, line: str) -> list[tuple[str, Any, Any]]:
    """(qid, entity, score) of one line, values not yet checked."""
    if line.lstrip().startswith("{"):
        return _parse_json(where, line)
    fields = line.split("\t")
    if len(fields) != 3:
        raise ElqueryError(f"{where}: expected 'qid<TAB>entity<TAB>score' or a JSON object, got {line[:60]!r}")
    qid, entity, text = fields
    try:
        score = float(text)
    except ValueError:
        raise ElqueryError(f"{where}: score {text!r} is not a number") from None
    return [(qid, entity, score)]


def _parse_json(where: str, line: str) -> list[tuple[str, Any, Any]]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ElqueryError(f"{where}: invalid JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise ElqueryError(f"{where}: expected a JSON object")
    qid = record.get("qid")
    _check_qid(where, qid)
    return [(qid, entity, score) for entity, score in record_links(record, where)]


def record_links(record: dict[str, Any], where: str) -> list[tuple[Any, Any]]:
    """The ``(entity, score)`` links of one JSON record, by the module docstring's rules: its
    ``links`` list, or the entities of the interpretations of an ``elquery link --format jsonl``
    record (also the service's ``/link`` answer), each with its highest annotation score."""
    if "links" in record:
        items = record["links"]
        if not isinstance(items, list) or not all(isinstance(i, dict) and {"entity", "score"} <= i.keys() for i in items):
            raise ElqueryError(f"{where}: \"links\" must be a list of {{\"entity\": ..., \"score\": ...}}")
        return [(i["entity"], i["score"]) for i in items]
    if "interpretations" in record:
        best: dict[str, float] = {}
        try:
            for interpretation in record["interpretations"]:
                for annotation in interpretation["annotations"]:
                    entity, score = annotation["entity"], annotation["score"]
                    if isinstance(score, int | float) and score == 0:
                        continue
                    best[entity] = max(best.get(entity, score), score)
        except (TypeError, KeyError):
            raise ElqueryError(f"{where}: \"interpretations\" is not that of `elquery link --format jsonl`") from None
        return list(best.items())
    raise ElqueryError(f"{where}: a JSON line needs \"links\" (or \"interpretations\", from `elquery link --format jsonl`)")


def with_links(queries: list[QueryRecord], path: Path | str, index: Path | str) -> list[QueryRecord]:
    """``queries`` with their linked entities from the links file ``path`` (a query the file
    does not name has none), every entity checked against ``index``."""
    links = read_links(path)
    check_links(links, index)
    return [replace(q, links=tuple((link.entity, link.score) for link in links.get(q.qid, ()))) for q in queries]


def check_links(links: dict[str, tuple[Link, ...]], index: Path | str) -> None:
    """Every linked entity must be in the index (read from its id list, no JVM)."""
    known = set((Path(index) / IDS_FILE).read_text(encoding="utf-8").splitlines())
    for query in links.values():
        for link in query:
            if link.entity not in known:
                raise ElqueryError(f"{link.where}: linked entity {link.entity} is not in the index {index}")
