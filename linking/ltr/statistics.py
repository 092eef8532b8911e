"""The one Java call per query behind the LTR features (methods.md §9): the query's texts analyzed,
their terms' per-field counts for the candidate entities, and stored titles and short abstracts.

``org.elquery.retrieval.FeatureStatistics`` (``indexing/java``) does in one static call what a
feature-by-feature extraction would do in hundreds of pyjnius crossings: it analyzes the query and
its mentions with the index's analyzer, and reads, for every field asked for, |C_f|, cf(t, f) and
n(t, e_f) of each distinct term for each candidate docid, and the stored fields of the documents
whose titles the string tests need. :mod:`elquery.linking.ltr.language_models` computes every
language-model feature from these counts with numpy.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from elquery.indexing.entity_index import EntityIndex
from elquery.indexing.index_format import analyzer
from elquery.indexing.jvm import java_class

ENTRY_CLASS = "org.elquery.retrieval.FeatureStatistics"


@functools.cache
def _helper() -> Any:
    return java_class(ENTRY_CLASS)


@functools.cache
def _analyzer() -> Any:
    """The index's analyzer (methods.md §2); Lucene analyzers are safe to share between threads."""
    return analyzer()


def _base64(docids: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(docids, dtype="<i4").tobytes()).decode("ascii")


def _line_safe(text: str) -> str:
    """``text`` for one request line: tabs and line breaks become spaces (the analyzer splits on
    them alike, so the terms are the same)."""
    return text.translate({ord("\t"): " ", ord("\n"): " ", ord("\r"): " "})


@dataclass(frozen=True)
class QueryStatistics:
    """What :func:`query_statistics` read: ``texts[x]`` are the analyzed tokens of text x as
    indexes into the distinct terms; per field f (request order) ``collection_lengths[f]`` = |C_f|,
    ``collection_frequencies[f, t]`` = cf(t, f), ``term_frequencies[f, t, d]`` = n(t, e_f) of the
    d-th docid; ``stored[s][g]`` the g-th stored field of the s-th stored docid ("" when absent)."""

    texts: tuple[np.ndarray, ...]
    collection_lengths: np.ndarray
    collection_frequencies: np.ndarray
    term_frequencies: np.ndarray
    stored: tuple[tuple[str, ...], ...]


def query_statistics(index: EntityIndex, fields: Sequence[str], texts: Sequence[str], docids: np.ndarray,
                     stored_fields: Sequence[str] = (), stored_docids: np.ndarray | None = None) -> QueryStatistics:
    """One Java call: the statistics of ``texts`` in ``fields`` for ``docids`` (ascending), and the
    ``stored_fields`` of ``stored_docids``."""
    lines = [f"field\t{f}" for f in fields] + [f"text\t{_line_safe(t)}" for t in texts]
    lines.append(f"docids\t{_base64(docids)}")
    lines += [f"stored\t{f}" for f in stored_fields]
    if stored_docids is not None and len(stored_docids):
        lines.append(f"storeddocs\t{_base64(stored_docids)}")
    raw = _helper().statistics(index.leaf, _analyzer(), "\n".join(lines)).tostring()
    return _decode(raw)


def _decode(raw: bytes) -> QueryStatistics:
    at = 0

    def ints(count: int, dtype: str = "<i4") -> np.ndarray:
        nonlocal at
        values = np.frombuffer(raw, dtype=dtype, count=count, offset=at)
        at += values.nbytes
        return values

    n_terms, n_texts = ints(2).tolist()
    texts = []
    for _ in range(n_texts):
        texts.append(ints(int(ints(1)[0])))
    n_fields, n_docs = ints(2).tolist()
    collection_lengths = ints(n_fields, "<i8")
    collection_frequencies = ints(n_fields * n_terms, "<i8").reshape(n_fields, n_terms)
    term_frequencies = ints(n_fields * n_terms * n_docs).reshape(n_fields, n_terms, n_docs)
    n_stored, n_stored_fields = ints(2).tolist()
    stored = []
    for _ in range(n_stored):
        values = []
        for _ in range(n_stored_fields):
            length = int(ints(1)[0])
            values.append(raw[at : at + length].decode("utf-8"))
            at += length
        stored.append(tuple(values))
    return QueryStatistics(tuple(texts), collection_lengths, collection_frequencies, term_frequencies, tuple(stored))
