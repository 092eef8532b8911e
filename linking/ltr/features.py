"""The 28 features of a (mention, entity) pair of learning to rank for ELQ (methods.md §9).

Candidates are the (mention, entity) pairs with commonness(m, e) >= c (default 0.1), the mentions
being the query n-grams that match a surface form (§3, :func:`elquery.linking.mentions.detect`
over the store's matches); a KB-only match (commonness 0) is a candidate only at c = 0. Pairs whose
entity is not in the index are left out, as the linker leaves them out.

Per query, :meth:`FeatureExtractor.extract` makes one SQLite lookup (the surface forms of every
query span, :meth:`SurfaceFormStore.match_spans`, with each span's candidate total) and one Java call
(``org.elquery.retrieval.PairFeatures.features``) for everything but the counts and commonness:
every language-model score of the query for every candidate and of each mention for its own
candidates (the retrieval layer's Eq. 16 as ``ScoreGrid`` computes it, the numbers of
:func:`elquery.retrieval.scoring.score_each`: each text analyzed once and each (field, term)
pair's postings over the candidates read once, there), and every string test, over the
normalized titles and short abstracts of the index's ``ltr_texts.bin`` (memory-mapped in Java; in
an index built before that copy, the stored fields, normalized by
:class:`~elquery.linking.ltr.stored.NormalizedTexts` and passed to the call). Python gathers the
answer into the matrix (features of a mention, an entity or a query computed once, then gathered
per pair). On two threads (:func:`~elquery.linking.ltr.threads.default_threads`: two on a machine
of two cores or more, unless ``ELQUERY_LTR_THREADS`` or ``elquery serve``'s workers say one), the
call's work is done in two halves at once (``PairFeaturesJob``: the query's and mentions' scores
under four of the seven models on the calling thread; the other three and the string tests on a
:class:`~elquery.linking.ltr.threads.HelperThread`), with the same answer to the bit.

The features, in :data:`FEATURES` order (m the mention, e the entity, q the query):

* mention: ``len`` (tokens of m), ``ntem`` (entities whose title equals m), ``smil`` (entities
  whose title equals some n-gram of m, m itself included), ``matches`` (entities with m as a
  surface form, any source, before the commonness threshold), ``len_ratio`` (|m| / |q| in tokens);
* entity: ``redirects`` (distinct redirect pages to e), ``links`` (distinct wiki page links of e),
  both counted by the index build (:meth:`EntityIndex.entity_counts`);
* mention-entity: ``commonness``; ``mct`` (m contains e's title), ``tcm`` (e's title contains m),
  ``tem`` (e's title equals m), each 0 or 1; ``pos1`` (character offset of m in e's short
  abstract, 1000 if absent); ``mtitle``, ``msAbs``, ``mlAbs``, ``mlinks``, ``mcats``, ``mcatchall``:
  exp(Eq. 16) of m against one field each (title, short_abstract, long_abstract, wiki_links,
  categories, content), Jelinek-Mercer lambda 0.1 (:func:`elquery.retrieval.lm`; 0 for a text with
  no term in the field's collection);
* entity-query: ``qct``, ``tcq``, ``teq`` (the title tests with q in place of m), ``mlm-tc`` (Eq. 16
  under MLM: names 0.2 / content 0.8, the linker's MLM score), and ``qtitle`` ... ``qcatchall``.

String tests compare normalized text (§3: NFKC, casefolded, every character that is not a letter
or digit a separator, as the surface forms are): the mention's text is already normalized, a
title or short abstract is normalized here. "Contains" means contains as a run of whole tokens (so
"york" is not in "new yorker", as GIF works on token spans, §5), and ``pos1`` is the character
offset of the first such run in the normalized short abstract. An entity's title is its label
(the index's stored ``title``; an entity with several labels passes a test if one of them does).
The language-model features read the mention's own characters in the query (``query[start:end]``)
and the query as typed, analyzed with the index's analyzer (so "obama's" stays one term, §2).

Title lookup (``ntem``, ``smil``): every label is a KB alias in the surface-form store (§3), so the
entities whose title equals an n-gram g are among g's KB matches, which the one lookup of the query's
spans has already fetched; their stored titles come with the candidates', and a match counts when a
normalized title equals g. No table of all titles is loaded, and the cost per query is the few KB
matches of its spans. This needs a store built with KB aliases (``--kb-aliases``, the default),
from the same dumps as the index; a store without them is refused. Titles ending in
"(disambiguation)", which are not KB aliases, are never counted (such pages are not entities).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from elquery.base import ElqueryError
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import analyzer
from elquery.kb.jvm import java_class
from elquery.kb.normalize import tokenize
from elquery.kb.surface_forms.layout import KB
from elquery.kb.surface_forms.store import SurfaceFormStore
from elquery.linking.ltr.stored import NormalizedTexts
from elquery.linking.ltr.threads import threads_of
from elquery.linking.methods.ltr import COMMONNESS, LTR
from elquery.linking.mentions import (DEFAULT_MAX_QUERY_TOKENS, FormEntityLike, check_query_length,
                                      check_query_limit)
from elquery.linking.types import Mention
from elquery.retrieval import lm, lucene, mlm
from elquery.retrieval.models import model_fields

FEATURES = (
    "len", "ntem", "smil", "matches", "len_ratio",
    "redirects", "links",
    "commonness", "mct", "tcm", "tem", "pos1", "mtitle", "msAbs", "mlAbs", "mlinks", "mcats", "mcatchall",
    "qct", "tcq", "teq", "mlm-tc", "qtitle", "qsAbs", "qlAbs", "qlinks", "qcats", "qcatchall",
)  # fmt: skip
"""The 28 feature names of methods.md §9, in the order of a feature matrix's columns."""

FIELD_FEATURES = (("title", "title"), ("sAbs", "short_abstract"), ("lAbs", "long_abstract"),
                  ("links", "wiki_links"), ("cats", "categories"), ("catchall", "content"))
"""(feature suffix, index field) of the single-field language-model features: ``m<suffix>``, ``q<suffix>``."""
SINGLE_FIELD_MODELS = tuple(lm(field) for _, field in FIELD_FEATURES)
"""Jelinek-Mercer lambda 0.1 on one field: ``mtitle`` ... ``mcatchall`` and ``qtitle`` ... ``qcatchall``."""
MLM_TC = mlm()
"""``mlm-tc``: MLM, names 0.2 / content 0.8, lambda 0.1 (the linker's MLM score)."""
GRID_MODELS = (*SINGLE_FIELD_MODELS, MLM_TC)
"""The models of a query's scoring grid: the query is scored under each, a mention under the single-field ones."""
REQUIRED_FIELDS = ("title", "short_abstract", "long_abstract", "wiki_links", "categories", "redirects", "links")
"""What the features read from the index besides ``names`` and ``content``."""
NOT_FOUND_POSITION = 1000
"""``pos1`` of a mention absent from the short abstract."""
DEFAULT_COMMONNESS_THRESHOLD: float = COMMONNESS.default
"""c of the candidate pairs: LTR's parameter in the registry (its default, range and message)."""
_REDIRECTS, _LINKS, _COMMONNESS = FEATURES.index("redirects"), FEATURES.index("links"), FEATURES.index("commonness")
_MENTION_SCORES, _QUERY_TITLE = FEATURES.index("mtitle"), FEATURES.index("qct")
_MLM_TC, _QUERY_SCORES = FEATURES.index("mlm-tc"), FEATURES.index("qtitle")


@dataclass(frozen=True)
class CandidatePair:
    """A (mention, entity) candidate: the mention's token span, its characters
    ``query[start:end]``, and commonness(m, e)."""

    mention: Mention
    entity: str
    start: int
    end: int
    commonness: float


ENTRY_CLASS = "org.elquery.retrieval.PairFeatures"
JOB_CLASS = "org.elquery.retrieval.PairFeaturesJob"
_AS_SPACES = str.maketrans("\t\n\r", "   ")
_ENTITY = operator.attrgetter("entity")


@functools.cache
def _helper() -> Any:
    return java_class(ENTRY_CLASS)


@functools.cache
def _job() -> Any:
    return java_class(JOB_CLASS)


@functools.cache
def _analyzer() -> Any:
    """The index's analyzer (methods.md §2), one for every thread."""
    return analyzer()


_Artefact = TypeVar("_Artefact", EntityIndex, SurfaceFormStore)


class FeatureExtractor:
    """The LTR features (methods.md §9) of every candidate pair of a query, over one index and one
    surface-form store (paths, opened here and closed by :meth:`close`, or open objects).

    The index must hold the LTR fields and counts (:data:`REQUIRED_FIELDS`) and the store KB
    aliases; otherwise a one-line :class:`ElqueryError`. Safe to share between threads."""

    def __init__(self, index: EntityIndex | Path | str, surface_forms: SurfaceFormStore | Path | str,
                 commonness_threshold: float = DEFAULT_COMMONNESS_THRESHOLD,
                 max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS, threads: int | None = None) -> None:
        self.commonness_threshold: float = COMMONNESS.validate(commonness_threshold, LTR.name)
        self.max_query_tokens = check_query_limit(max_query_tokens)
        # 1, or 2: the Java call's second half on a HelperThread (default: threads.default_threads)
        self.threads, self._second = threads_of(self, threads, "elquery-features", "the LTR feature extraction")
        self._owned: list[EntityIndex | SurfaceFormStore] = []
        try:
            self.index = self._open(index, EntityIndex)
            self.store = self._open(surface_forms, SurfaceFormStore)
            self.index.require_fields(REQUIRED_FIELDS, "the LTR features")
            sources = self.store.meta.get("sources")
            if isinstance(sources, list) and KB not in sources:
                raise ElqueryError(f"{self.store.path}: the surface-form store has no KB aliases, which the LTR "
                                   "features ntem and smil look titles up through; rebuild it with --kb-aliases")
            self.index.require_fields(sorted({name for model in GRID_MODELS for name in model_fields(model)}),
                                      "the language models scored")
            self._model_lines = ["\n".join(model.request_lines()) for model in GRID_MODELS]
            self._texts = NormalizedTexts(self.index)  # checks the index's ltr_texts.bin, or reads stored fields
            self._mapped = bool(self.index.metadata.get("ltr_texts"))
            # plain views of the memory-mapped counts: a gather from np.memmap costs ~3 us more
            self._redirects = np.asarray(self.index.entity_counts("redirects"))
            self._links = np.asarray(self.index.entity_counts("links"))
        except BaseException:
            self.close()
            raise

    def _open(self, given: _Artefact | Path | str, kind: type[_Artefact]) -> _Artefact:
        if isinstance(given, str | Path):
            opened = kind(given)
            self._owned.append(opened)
            return opened
        return given

    def close(self) -> None:
        """Close the artefacts this extractor opened from paths, and end its second thread."""
        if self._second is not None:
            self._second.stop()
        for artefact in self._owned:
            artefact.close()
        self._owned = []

    def __enter__(self) -> FeatureExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def extract(self, query: str) -> tuple[list[CandidatePair], np.ndarray]:
        """The candidate pairs of ``query`` (in span order, then entity id) and their features: a
        float64 matrix of one row per pair and one column per name of :data:`FEATURES`."""
        tokens = tokenize(query)
        texts = [t.text for t in tokens]
        check_query_length(texts, self.max_query_tokens)
        threshold = self.commonness_threshold
        # the kept candidates (commonness >= c, and the KB aliases the title features read), not
        # every entity of a form: at full scale a form can have thousands, and making them (their
        # names) cost 50 ms a query; ``matches`` counts them all (the totals) without making them
        spans_found = self.store.match_spans(texts, min_commonness=threshold)
        matches = spans_found.candidates
        # the docids of every entity found (the candidates and the KB matches the title features
        # read: a few more than the pairs' entities), in one call
        entities = list(dict.fromkeys(map(_ENTITY, chain.from_iterable(matches.values()))))
        docids = dict(zip(entities, self.index.find_docids(entities)))
        # detect()'s candidates (Eq. 8-10, in span order, then entity id) with commonness >= c: all
        # of a span's matches that reach c (a KB alias below c, which detect keeps, is dropped again)
        pairs: list[CandidatePair] = []
        candidate_docids: list[int] = []
        numbers: list[int] = []  # per pair, its span's number
        spans: list[tuple[int, int]] = []
        char_spans: list[tuple[int, int]] = []
        for (start, end), found in matches.items():  # in span order
            mention = None
            for match in sorted(found, key=_ENTITY):
                if match.commonness >= threshold and (docid := docids[match.entity]) is not None:
                    if mention is None:
                        mention = Mention(" ".join(texts[start:end]), start, end)
                        spans.append((start, end))
                        char_start, char_end = tokens[start].start, tokens[end - 1].end
                        char_spans.append((char_start, char_end))
                    pairs.append(CandidatePair(mention, match.entity, char_start, char_end, match.commonness))
                    candidate_docids.append(docid)
                    numbers.append(len(spans) - 1)
        if not pairs:
            return [], np.zeros((0, len(FEATURES)))
        titled = self._title_matches(spans, matches, docids)
        columns = sorted(set(candidate_docids))
        number = {docid: n for n, docid in enumerate(columns)}
        others = sorted({d for found in titled.values() for d in found if d not in number})
        for docid in others:
            number[docid] = len(number)
        rows = [number[d] for d in candidate_docids]
        layout = [len(spans), len(columns), len(pairs), sum(map(len, titled.values())), len(number),
                  len(SINGLE_FIELD_MODELS)]
        for span in spans:
            layout += span
        layout += columns
        layout += others
        for row in zip(numbers, rows):
            layout += row
        for (start, end), titles in titled.items():
            for docid in titles:
                layout += (start, end, number[docid])
        query_scores, mlm_tc, mention_scores, per_row, per_column, per_span = self._java_features(
            query, " ".join(texts), char_spans, layout, None if self._mapped else [*columns, *others])
        mentions = np.array([[end - start, 0, 0, spans_found.totals[(start, end)], (end - start) / len(texts)]
                             for start, end in spans], dtype=np.float64)
        mentions[:, 1:3] = per_span
        span_rows, column_rows = np.array(numbers), np.array(rows)
        row_docids = np.array(columns)[column_rows]
        matrix = np.empty((len(pairs), len(FEATURES)), dtype=np.float64)
        matrix[:, :_REDIRECTS] = mentions[span_rows]
        matrix[:, _REDIRECTS] = self._redirects[row_docids]
        matrix[:, _LINKS] = self._links[row_docids]
        matrix[:, _COMMONNESS] = [pair.commonness for pair in pairs]
        matrix[:, _COMMONNESS + 1:_MENTION_SCORES] = per_row
        matrix[:, _MENTION_SCORES:_QUERY_TITLE] = mention_scores
        matrix[:, _QUERY_TITLE:_MLM_TC] = per_column[column_rows]
        matrix[:, _MLM_TC] = mlm_tc[column_rows]
        matrix[:, _QUERY_SCORES:] = query_scores[:, column_rows].T
        return pairs, matrix

    def _java_features(self, query: str, normalized: str, char_spans: Sequence[tuple[int, int]], layout: list[int],
                       stored: list[int] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                         np.ndarray, np.ndarray]:
        """One Java call (``PairFeatures.features``): exp(Eq. 16) for the candidates (the layout's
        columns) of the query per single field (6 x n), of the query under MLM (n) and of each
        row's mention per single field (rows x 6); and the string tests per row (mct, tcm, tem,
        pos1), per column (qct, tcq, teq) and per span (ntem, smil). ``stored``: the layout's
        docids, whose texts are read here (an index without ``ltr_texts.bin``), or None."""
        if "\t" in query or "\n" in query or "\r" in query:  # line ends and tabs separate tokens as spaces do
            query = query.translate(_AS_SPACES)
        spans, columns, rows = layout[0], layout[1], layout[2]
        texts = None
        if stored is not None:
            texts = [text for titles, abstract in self._texts.texts(stored) for text in ("\n".join(titles), abstract)]
        arguments = (self.index.leaf, _analyzer(), self._model_lines, [query, *(query[a:b] for a, b in char_spans)],
                     normalized, lucene.encode_docids(np.array(layout, dtype=np.int32)), texts)
        if self._second is None:
            raw = _helper().features(*arguments).tostring()
        else:  # the same answer, its two halves at once: PairFeaturesJob
            job = _job().of(*arguments)
            self._second.run_beside(functools.partial(job.run, 0), [functools.partial(job.run, 1)])
            raw = job.answer().tostring()
        models, single = len(GRID_MODELS), len(SINGLE_FIELD_MODELS)
        cells, mention_cells = models * columns, single * rows
        if len(raw) != 8 * (cells + mention_cells) + 4 * (models + 4 * rows + 3 * columns + 2 * spans):
            raise ValueError(f"pair features: an answer of {len(raw)} bytes for {rows} rows and {columns} columns")
        log_scores = np.frombuffer(raw, dtype="<f8", count=cells).reshape(models, columns)
        known = np.frombuffer(raw, dtype="<i4", count=models, offset=8 * cells)
        query_scores = np.exp(np.where((known == 0)[:, None], -np.inf, log_scores))  # no evidence: score 0
        at = 8 * cells + 4 * models
        mention_scores = np.exp(np.frombuffer(raw, dtype="<f8", count=mention_cells, offset=at).reshape(rows, single))
        strings = np.frombuffer(raw, dtype="<i4", offset=at + 8 * mention_cells)
        return (query_scores[:single], query_scores[single], mention_scores, strings[:4 * rows].reshape(rows, 4),
                strings[4 * rows:4 * rows + 3 * columns].reshape(columns, 3), strings[4 * rows + 3 * columns:].reshape(spans, 2))

    def _title_matches(self, spans: Sequence[tuple[int, int]], matches: Mapping[tuple[int, int], Sequence[FormEntityLike]],
                       docids: Mapping[str, int | None]) -> dict[tuple[int, int], set[int]]:
        """Per n-gram (i, j) of each mention span, the docids of its KB matches in the index: the
        entities whose title may equal it."""
        found: dict[tuple[int, int], set[int]] = {}
        for start, end in spans:
            for i in range(start, end):
                for j in range(i + 1, end + 1):
                    if (i, j) in found or (i, j) not in matches:
                        continue
                    entities = (docids[m.entity] for m in matches[(i, j)] if KB in m.sources)
                    found[(i, j)] = {d for d in entities if d is not None}
        return found
