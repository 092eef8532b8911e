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

With ``metadata`` (``elquery link`` over given artefacts: their provenance, docs/formats.md), every
``jsonl`` record holds it under ``provenance``; an ``elq`` or ``trec`` file gets it beside it as
``RUN.meta.json`` (those formats have no room for it; :mod:`elquery.formats.run_metadata`).

A result is any object shaped as :class:`~elquery.linking.types.LinkResult` (:class:`LinkOutput`):
this layer knows the shape, not the linking layer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
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


def elq_lines(result: LinkOutput) -> Iterator[str]:
    return elq_query_lines(result.qid, ((i.score, [a.entity for a in i.annotations]) for i in result.interpretations))


def trec_lines(result: LinkOutput, tag: str) -> Iterator[str]:
    ranking = [(rank, r.entity, r.score) for rank, r in enumerate(result.ranking, start=1)]
    for line in run_lines(result.qid, ranking, tag):
        yield line.rstrip("\n")


def _mention(result: LinkOutput, mention: Span) -> dict[str, Any]:
    """Token span ``[start, end)`` and character span ``[char_start, char_end)`` in the query."""
    char_start, char_end = result.char_span(mention)
    return {"text": mention.text, "start": mention.start, "end": mention.end,
            "char_start": char_start, "char_end": char_end}


def _annotation(result: LinkOutput, triple: Annotation) -> dict[str, Any]:
    return {"mention": _mention(result, triple.mention), "entity": triple.entity, "score": triple.score,
            "commonness": triple.commonness}


def _interpretation(result: LinkOutput, interpretation: Interpreted) -> dict[str, Any]:
    return {"score": interpretation.score,
            "annotations": [_annotation(result, a) for a in interpretation.annotations]}


def _ranked(result: LinkOutput, ranked: Mapped) -> dict[str, Any]:
    return {"entity": ranked.entity, "score": ranked.score, "mention": _mention(result, ranked.mention)}


def jsonl_record(result: LinkOutput) -> dict[str, Any]:
    """The JSONL record of one query (docs/formats.md), also the service's answer."""
    return {
        "qid": result.qid,
        "query": result.query,
        "tokens": list(result.tokens),
        "offsets": [list(span) for span in result.offsets],
        "mentions": [_annotation(result, t) for t in result.scored],
        "interpretations": [_interpretation(result, i) for i in result.interpretations],
        "ranking": [_ranked(result, r) for r in result.ranking],
    }


def jsonl_lines(result: LinkOutput, metadata: dict[str, Any] | None = None) -> Iterator[str]:
    record = jsonl_record(result)
    if metadata is not None:
        record["provenance"] = metadata
    yield jsonl_line(record)


def formatter(fmt: str, tag: str, metadata: dict[str, Any] | None = None) -> Callable[[LinkOutput], Iterator[str]]:
    """The line generator of format ``fmt`` (one of :data:`FORMATS`); ``metadata`` goes into each
    ``jsonl`` record."""
    if fmt == "elq":
        return elq_lines
    if fmt == "trec":
        return lambda result: trec_lines(result, tag)
    if fmt == "jsonl":
        return lambda result: jsonl_lines(result, metadata)
    raise ElqueryError(f"unknown format {fmt!r}; formats are {', '.join(FORMATS)}")


@dataclass(frozen=True)
class RunFormat:
    """A run format as a picklable function of one result to its text (every line, each ended by a
    newline), so that worker processes and Spark executors format what they link and send text."""

    fmt: str
    tag: str
    metadata: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        formatter(self.fmt, self.tag)  # an unknown format fails here, before any linking

    def __call__(self, result: LinkOutput) -> str:
        return "".join(line + "\n" for line in formatter(self.fmt, self.tag, self.metadata)(result))


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
