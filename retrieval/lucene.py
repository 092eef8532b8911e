"""The bridge to the Java helper ``org.elquery.retrieval.EntityScores`` (``retrieval/java``).

Reading postings through pyjnius costs about 0.5 us per posting and a Python -> Java call per
step, so scoring runs in Java, one call per query: the request goes over as text, the answer comes
back as one little-endian byte array. The helper is on the JVM's class path
(:func:`elquery.kb.jvm.helper_jars`) and only its static methods are called: pyjnius shares
the receiver of instance method calls between all objects of a class, so static calls are what
makes scoring safe from several Python threads at once (the Java side keeps per-thread scratch
space and synchronizes its per-index caches).
"""

from __future__ import annotations

import base64
import functools
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from elquery.base import ElqueryError
from elquery.kb.index_format import ID_FIELD, analyzer
from elquery.kb.jvm import java_class, jnius

if TYPE_CHECKING:
    from elquery.kb.entity_index import EntityIndex

ENTRY_CLASS = "org.elquery.retrieval.EntityScores"


@functools.cache
def _helper() -> Any:
    return java_class(ENTRY_CLASS)


@functools.cache
def _analyzer() -> Any:
    """The index's analyzer (methods.md §2; Lucene analyzers are safe to share between threads)."""
    return analyzer()


def _call(name: str, *args: Any) -> bytes:
    result = getattr(_helper(), name)(*args)
    return result.tostring() if result is not None else b""  # tostring() copies at once; bytes() goes byte by byte


def query_tokens(text: str) -> list[tuple[int, str]]:
    """(position step, term) of each token of ``text`` under the index's analyzer: the step is
    1, or more where stop words were removed before the term."""
    lines = _helper().tokens(_analyzer(), text).splitlines() if text else []
    return [(int(step), term) for step, term in (line.split("\t", 1) for line in lines)]


GAP_KEY = "value_position_gap"
"""The commit user data key of the position gap the index writer leaves between a field's values
(``org.elquery.index.ValueGap``); an index written without one has no such key."""
_gaps: weakref.WeakKeyDictionary[EntityIndex, int] = weakref.WeakKeyDictionary()
_gaps_lock = threading.Lock()


def value_gap(index: EntityIndex) -> int:
    """The index's position gap between the values of a field (0: none), read once per index."""
    with _gaps_lock:
        if index not in _gaps:
            value = index.reader.getIndexCommit().getUserData().get(GAP_KEY)
            _gaps[index] = int(value) if value is not None else 0
        return _gaps[index]


def dependence(index: EntityIndex, request: str, *, ranking: bool) -> Scores | TopDocs:
    """SDM / FSDM (``org.elquery.retrieval.DependenceModel``): a ranking, or the scores of the
    request's docids. Windows stay within a value of a field: by the index's position gap, or
    else by value boundaries read from the stored text."""
    request = f"{request}\ngap\t{value_gap(index)}"
    try:
        raw = _call("dependence", index.leaf, _analyzer(), request)
    except jnius().JavaException as error:
        if "IllegalStateException" in str(error):
            raise ElqueryError(str(error).split("Exception: ", 1)[-1].strip()) from None
        raise
    return _top(raw) if ranking else _scores(raw)


def encode_docids(docids: np.ndarray) -> str:
    """Docids for a request line: base64 of little-endian int32."""
    return base64.b64encode(np.ascontiguousarray(docids, dtype="<i4").tobytes()).decode("ascii")


def install(leaf: Any, docids_by_entity_id: np.ndarray) -> None:
    """Give the helper the index's docids in entity-id order (its tie order)."""
    _call("install", leaf, encode_docids(docids_by_entity_id))


def stored(leaf: Any, field: str, docids: np.ndarray) -> list[str]:
    """The stored value of ``field`` of each docid, in order (one Java call)."""
    return str(_helper().stored(leaf, field, encode_docids(docids))).split("\n")[:-1] if len(docids) else []


@dataclass(frozen=True)
class Scores:
    """Log scores of the requested docids, in request order."""

    known_terms: int
    scores: np.ndarray


@dataclass(frozen=True)
class TopDocs:
    """A ranking: docids and scores, best first (ties by entity id)."""

    known_terms: int
    docids: np.ndarray
    scores: np.ndarray


def score(leaf: Any, request: str) -> Scores:
    return _scores(_call("score", leaf, request))


@dataclass(frozen=True)
class EntityScores:
    """Log scores of entities named by id, in request order, with each one's docid (-1 and a NaN
    score: no document has the id)."""

    known_terms: int
    scores: np.ndarray
    docids: np.ndarray


def score_entities(leaf: Any, model: str, text: str, entities: list[str]) -> EntityScores:
    """The log scores of ``entities`` (ids, none holding a line end) for query ``text`` (one line)
    under the language model of request lines ``model``, each id looked up in the index's id
    field, all in one call (``EntityScores.scoreEntities``): what looking the docids up and
    :func:`score` give, to the bit."""
    raw = _call("scoreEntities", leaf, _analyzer(), model, text, ID_FIELD, "\n".join(entities))
    known, n = np.frombuffer(raw, dtype="<i4", count=2)
    return EntityScores(int(known), np.frombuffer(raw, dtype="<f8", count=n, offset=8),
                        np.frombuffer(raw, dtype="<i4", count=n, offset=8 + 8 * int(n)))


def score_each(leaf: Any, requests: list[str]) -> list[Scores]:
    """The answers of :func:`score` to several requests, in one call (``EntityScores.scoreEach``);
    a request may give its query as a ``text`` line, analyzed there with the index's analyzer."""
    raw = _call("scoreEach", leaf, _analyzer(), requests)
    answers = []
    offset = 0
    for _ in requests:
        answers.append(_scores(raw, offset))
        offset += 8 + 8 * len(answers[-1].scores)
    return answers


def score_grid(leaf: Any, models: list[str], texts: list[str], scorings: np.ndarray,
               docids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The answers of :func:`score_each` to the requests of (model ``models[m]``, its request lines;
    text ``texts[t]``; the ascending ``docids``) for each (m, t) row of ``scorings`` (n x 2), in one pass
    (``EntityScores.scoreGrid``: each text analyzed once, each (field, term) pair read once): the
    known terms of each scoring (int32, one per scoring) and its log scores (float64, one row per
    scoring, one column per docid; read-only, a view of the answer): ``EntityScores.scoreGrid``
    answers the scores first, then the known terms."""
    count = len(docids)
    if not len(scorings):
        return np.zeros(0, dtype=np.int32), np.zeros((0, count))
    raw = _call("scoreGrid", leaf, _analyzer(), models, texts, encode_docids(scorings.reshape(-1)),
                encode_docids(docids))
    cells = len(scorings) * count
    if len(raw) != 8 * cells + 4 * len(scorings):
        raise ValueError(f"score_grid: an answer of {len(raw)} bytes for {len(scorings)} x {count} scores")
    scores = np.frombuffer(raw, dtype="<f8", count=cells).reshape(len(scorings), count)
    return np.frombuffer(raw, dtype="<i4", offset=8 * cells), scores


def _scores(raw: bytes, offset: int = 0) -> Scores:
    known, n = np.frombuffer(raw, dtype="<i4", count=2, offset=offset)
    return Scores(int(known), np.frombuffer(raw, dtype="<f8", count=n, offset=offset + 8))


def top(leaf: Any, request: str, *, bm25: bool = False) -> TopDocs:
    return _top(_call("bm25" if bm25 else "top", leaf, request))


def _top(raw: bytes) -> TopDocs:
    known, n = np.frombuffer(raw, dtype="<i4", count=2)
    scores = np.frombuffer(raw, dtype="<f8", count=n, offset=8)
    return TopDocs(int(known), np.frombuffer(raw, dtype="<i4", count=n, offset=8 + 8 * int(n)), scores)
