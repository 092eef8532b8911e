"""The outputs of ``elquery link``: ``elq`` (interpretations), ``trec`` (semantic mapping) and
``jsonl`` (everything). A file is written beside its name and renamed on success
(:func:`elquery.files.atomic_output`; ``-`` or None is standard output).

* ``elq``: one line per interpretation ``qid<TAB>score<TAB>entity<TAB>...`` (entities in mention
  order) and a bare ``qid`` line for a query with none, the format of ``qrels-elq.txt``
  (:mod:`elquery.formats.elq`);
* ``trec``: ``qid Q0 entity rank score tag`` lines of the semantic-mapping ranking (methods.md §1;
  :mod:`elquery.formats.trec_run`);
* ``jsonl``: one JSON object per query with its tokens (and their character offsets), scored
  mentions, interpretations and ranking; a mention gives its token span (``start``, ``end``) and
  its character span in the query (``char_start``, ``char_end``) (:mod:`elquery.formats.jsonl`).

With ``ids`` (an entity index holding the identifiers table, docs/identifiers.md), every entity of
a ``jsonl`` record gets an ``ids`` object (DBpedia id, Wikipedia title, URL and page id, Freebase
mid, Wikidata QID; null where the table has none), and ``entity_ids`` names the scheme the ``elq``
and ``trec`` formats write entities in (``dbpedia`` by default; an entity without an id in that
scheme keeps its DBpedia id, which :func:`unmapped` counts).

With ``metadata`` (``elquery link`` over given artefacts: their provenance, docs/formats.md), every
``jsonl`` record holds it under ``provenance``; an ``elq`` or ``trec`` file gets it beside it as
``RUN.meta.json`` (those formats have no room for it; :mod:`elquery.formats.run_metadata`).

A result is any object shaped as :class:`~elquery.linking.types.LinkResult` (:class:`LinkOutput`):
this layer knows the shape, not the linking layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from elquery.base import ElqueryError
from elquery.files import atomic_output, is_stdio
from elquery.formats.elq import elq_lines as elq_query_lines
from elquery.formats.jsonl import jsonl_line
from elquery.formats.run_metadata import write_sidecar
from elquery.formats.trec_run import run_lines

FORMATS = ("elq", "trec", "jsonl")
ENTITY_SCHEMES = ("dbpedia", "wikipedia", "wikidata", "freebase", "pageid")
"""The schemes ``--entity-ids`` writes ``elq`` and ``trec`` entities in (docs/identifiers.md)."""


class EntityIdentifiers(Protocol):
    """Every identifier of one entity (:class:`elquery.kb.identifiers.Identifiers`)."""

    def as_dict(self) -> dict[str, Any]: ...
    def scheme(self, name: str) -> str | None: ...


EntityIds = Callable[[Sequence[str]], Mapping[str, EntityIdentifiers]]
"""Entities -> their identifiers (:class:`elquery.kb.identifiers.EntityIds`, picklable)."""


class Span(Protocol):
    """A mention: the token span ``[start, end)`` of ``text``."""

    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class Annotation(Protocol):
    """A scored (mention, entity) pair."""

    @property
    def mention(self) -> Span: ...
    @property
    def entity(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def commonness(self) -> float: ...


class Interpreted(Protocol):
    """An interpretation: its annotations in mention order and its score."""

    @property
    def annotations(self) -> Sequence[Annotation]: ...
    @property
    def score(self) -> float: ...


class Mapped(Protocol):
    """An entry of the semantic-mapping ranking."""

    @property
    def entity(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def mention(self) -> Span: ...


class LinkOutput(Protocol):
    """What linking computed for one query, as the formats write it."""

    @property
    def qid(self) -> str: ...
    @property
    def query(self) -> str: ...
    @property
    def tokens(self) -> Sequence[str]: ...
    @property
    def offsets(self) -> Sequence[tuple[int, int]]: ...
    @property
    def scored(self) -> Sequence[Annotation]: ...
    @property
    def interpretations(self) -> Sequence[Interpreted]: ...
    @property
    def ranking(self) -> Sequence[Mapped]: ...
    def char_span(self, mention: Any) -> tuple[int, int]: ...


def _written(entities: Sequence[str], ids: EntityIds | None, scheme: str) -> dict[str, str]:
    """Each entity as ``scheme`` writes it; its DBpedia id where it has no id in the scheme."""
    if scheme == "dbpedia" or not entities:
        return {e: e for e in entities}
    if ids is None:
        raise ElqueryError(f"--entity-ids {scheme}: the entity index has no identifiers table (build it with "
                           "`elquery build`, stage identifiers)")
    found = ids(entities)
    return {e: found[e].scheme(scheme) or e for e in entities}


def unmapped(text: str, fmt: str, scheme: str) -> int:
    """How many entities of a run's ``text`` in format ``fmt`` kept their DBpedia id for want of
    one in ``scheme``."""
    if scheme == "dbpedia" or fmt == "jsonl":
        return 0
    count = 0
    for line in text.splitlines():
        fields = line.split(" ")[2:3] if fmt == "trec" else line.split("\t")[2:]
        count += sum(f.startswith("<dbpedia:") for f in fields)
    return count


def elq_lines(result: LinkOutput, ids: EntityIds | None = None, scheme: str = "dbpedia") -> Iterator[str]:
    written = _written([a.entity for i in result.interpretations for a in i.annotations], ids, scheme)
    return elq_query_lines(result.qid, ((i.score, [written[a.entity] for a in i.annotations])
                                        for i in result.interpretations))


def trec_lines(result: LinkOutput, tag: str, ids: EntityIds | None = None, scheme: str = "dbpedia") -> Iterator[str]:
    written = _written([r.entity for r in result.ranking], ids, scheme)
    ranking = [(rank, written[r.entity], r.score) for rank, r in enumerate(result.ranking, start=1)]
    for line in run_lines(result.qid, ranking, tag):
        yield line.rstrip("\n")


def _mention(result: LinkOutput, mention: Span) -> dict[str, Any]:
    """Token span ``[start, end)`` and character span ``[char_start, char_end)`` in the query."""
    char_start, char_end = result.char_span(mention)
    return {"text": mention.text, "start": mention.start, "end": mention.end,
            "char_start": char_start, "char_end": char_end}


Found = Mapping[str, dict[str, Any]]
"""Each entity's ``ids`` object, made once per record however often the entity appears in it."""


def _with_ids(entry: dict[str, Any], entity: str, found: Found | None) -> dict[str, Any]:
    if found is not None:
        entry["ids"] = dict(found[entity])
    return entry


def _annotation(result: LinkOutput, triple: Annotation, found: Found | None = None) -> dict[str, Any]:
    return _with_ids({"mention": _mention(result, triple.mention), "entity": triple.entity, "score": triple.score,
                      "commonness": triple.commonness}, triple.entity, found)


def _interpretation(result: LinkOutput, interpretation: Interpreted, found: Found | None = None) -> dict[str, Any]:
    return {"score": interpretation.score,
            "annotations": [_annotation(result, a, found) for a in interpretation.annotations]}


def _ranked(result: LinkOutput, ranked: Mapped, found: Found | None = None) -> dict[str, Any]:
    return _with_ids({"entity": ranked.entity, "score": ranked.score, "mention": _mention(result, ranked.mention)},
                     ranked.entity, found)


def jsonl_record(result: LinkOutput, ids: EntityIds | None = None) -> dict[str, Any]:
    """The JSONL record of one query (docs/formats.md), also the service's answer; with ``ids``,
    each entity's identifiers under ``ids``."""
    found = None
    if ids is not None:
        found = {entity: identifiers.as_dict() for entity, identifiers in
                 ids([t.entity for t in result.scored] + [r.entity for r in result.ranking]
                     + [a.entity for i in result.interpretations for a in i.annotations]).items()}
    return {
        "qid": result.qid,
        "query": result.query,
        "tokens": list(result.tokens),
        "offsets": [list(span) for span in result.offsets],
        "mentions": [_annotation(result, t, found) for t in result.scored],
        "interpretations": [_interpretation(result, i, found) for i in result.interpretations],
        "ranking": [_ranked(result, r, found) for r in result.ranking],
    }


def jsonl_lines(result: LinkOutput, metadata: dict[str, Any] | None = None, ids: EntityIds | None = None) -> Iterator[str]:
    record = jsonl_record(result, ids)
    if metadata is not None:
        record["provenance"] = metadata
    yield jsonl_line(record)


def formatter(fmt: str, tag: str, metadata: dict[str, Any] | None = None, ids: EntityIds | None = None,
              scheme: str = "dbpedia") -> Callable[[LinkOutput], Iterator[str]]:
    """The line generator of format ``fmt`` (one of :data:`FORMATS`); ``metadata`` goes into each
    ``jsonl`` record, with ``ids`` each entity's identifiers; ``elq`` and ``trec`` write entities
    in ``scheme`` (:data:`ENTITY_SCHEMES`)."""
    if scheme not in ENTITY_SCHEMES:
        raise ElqueryError(f"--entity-ids: no scheme {scheme!r} (choose from {', '.join(ENTITY_SCHEMES)})")
    if scheme != "dbpedia" and fmt == "jsonl":
        raise ElqueryError("--entity-ids goes with --format elq or trec (jsonl gives every id under \"ids\")")
    if scheme != "dbpedia" and ids is None:
        raise ElqueryError(f"--entity-ids {scheme}: the entity index has no identifiers table (build it with "
                           "`elquery build`, stage identifiers)")
    if fmt == "elq":
        return lambda result: elq_lines(result, ids, scheme)
    if fmt == "trec":
        return lambda result: trec_lines(result, tag, ids, scheme)
    if fmt == "jsonl":
        return lambda result: jsonl_lines(result, metadata, ids)
    raise ElqueryError(f"unknown format {fmt!r}; formats are {', '.join(FORMATS)}")


@dataclass(frozen=True)
class RunFormat:
    """A run format as a picklable function of one result to its text (every line, each ended by a
    newline), so that worker processes and Spark executors format what they link and send text."""

    fmt: str
    tag: str
    metadata: dict[str, Any] | None = None
    ids: EntityIds | None = None
    entity_ids: str = "dbpedia"

    def __post_init__(self) -> None:
        formatter(self.fmt, self.tag, None, self.ids, self.entity_ids)  # an unknown format fails here, before any linking

    def __call__(self, result: LinkOutput) -> str:
        lines = formatter(self.fmt, self.tag, self.metadata, self.ids, self.entity_ids)(result)
        return "".join(line + "\n" for line in lines)


def write_results(results: Iterable[LinkOutput], path: Path | str | None, fmt: str, tag: str,
                  metadata: dict[str, Any] | None = None) -> int:
    """Write ``results`` in format ``fmt`` to ``path`` (stdout if None), with ``metadata`` (see
    the module docstring); returns the number of queries written."""
    return write_texts(map(RunFormat(fmt, tag, metadata), results), path, fmt, metadata)


def write_texts(texts: Iterable[str], path: Path | str | None, fmt: str, metadata: dict[str, Any] | None = None) -> int:
    """Write the :class:`RunFormat` texts of a run's queries, in order, to ``path`` (stdout if
    None), with ``metadata`` beside a non-``jsonl`` file; returns the number of queries written."""
    count = 0
    with atomic_output(path) as stream:
        for text in texts:
            stream.write(text)
            count += 1
    if path is not None and metadata is not None and fmt != "jsonl" and not is_stdio(path):
        write_sidecar(path, metadata)
    return count
