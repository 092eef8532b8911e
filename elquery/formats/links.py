"""Links files: the linked entities of each query and their scores, the input of the ELR models
(``elquery rank --links FILE``; docs/formats.md, "links").

Two forms, told apart line by line (read by :mod:`elquery.formats.lines`; blank lines skipped):

* TSV ``qid<TAB>entity<TAB>score``, one line per linked entity;
* JSON Lines, one object per query: ``{"qid": Q, "links": [{"entity": E, "score": S}, ...]}`` (the
  form :func:`write_links` writes), or a record of ``elquery link --format jsonl`` (``{"qid": Q,
  "interpretations": [...], ...}``), whose links are the entities of all its interpretations,
  each with its highest annotation score (annotations scored 0 are left out).

An entity is named in any form the reader's ``canonical`` function takes (the retrieval layer
passes :func:`~elquery.kb.entities.canonical_entity_id`); a score is a positive finite
number; an entity given twice for one qid or a line of neither form is a one-line error naming the
file and line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.formats.jsonl import jsonl_line
from elquery.formats.lines import content_lines, input_name, is_qid

WHAT = "links file"
Links = dict[str, tuple["Link", ...]]


@dataclass(frozen=True)
class Link:
    """One linked entity of a query, with its score and where the file gave it."""

    entity: str
    score: float
    where: str


def read_links(path: Path | str, canonical: Callable[[str], str | None]) -> Links:
    """The links of every qid of a links file, in file order per qid; each entity as
    ``canonical`` names it (None: not an entity id)."""
    name = input_name(path)
    links: dict[str, dict[str, Link]] = {}
    for number, line in content_lines(path, WHAT):
        where = f"{name}:{number}"
        for qid, entity, score in _parse(where, line):
            _check_qid(where, qid)
            known = canonical(entity) if isinstance(entity, str) else None
            if known is None:
                raise ElqueryError(f"{where}: {entity!r} is not a DBpedia entity id")
            if not _is_score(score):
                raise ElqueryError(f"{where}: the score of {known} must be a positive number, got {score!r}")
            query = links.setdefault(qid, {})
            if known in query:
                raise ElqueryError(f"{where}: {known} linked twice for query {qid!r} (first at {query[known].where})")
            query[known] = Link(known, float(score), where)
    return {qid: tuple(query.values()) for qid, query in links.items()}


def write_links(path: Path | str, links: Mapping[str, Iterable[tuple[str, float]]]) -> int:
    """Write ``{qid: [(entity, score), ...]}`` as JSON Lines, one ``{"qid", "links"}`` record per
    query (``-``: standard output), that :func:`read_links` reads back; returns the number of
    queries."""
    count = 0
    with atomic_output(path) as out:
        for qid, linked in links.items():
            _check_qid(f"query {count + 1}", qid)
            pairs = list(linked)
            for entity, score in pairs:
                if not _is_score(score):
                    raise ElqueryError(f"query {qid!r}: the score of {entity} must be a positive number, got {score!r}")
            record = {"qid": qid, "links": [{"entity": entity, "score": score} for entity, score in pairs]}
            out.write(jsonl_line(record) + "\n")
            count += 1
    return count


def _is_score(score: object) -> bool:
    """A link's score: a positive finite number."""
    return isinstance(score, int | float) and not isinstance(score, bool) and score > 0 and math.isfinite(score)


def _check_qid(where: str, qid: object) -> str:
    if is_qid(qid):
        return qid
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
    qid = _check_qid(where, record.get("qid"))
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
