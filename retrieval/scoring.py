"""Candidate scoring (methods.md §4): score a given set of entities for a query.

The score of entity e for query q is the normalized query likelihood of Eq. 16,

    log score(e, q) = sum_{t in q} P(t|q) [log P(t|theta_e) - log P(t|C)],

with P(t|theta_e) the model's mixture of smoothed field language models (MLM, Eq. 12-13), plus
log P(e) when an :class:`EntityPrior` is given (uniform by default: nothing added). Query text is
analyzed with the index's own analyzer; terms absent from the collection are skipped, but count in
|q|. The reported score is exp(log score), a likelihood ratio comparable across queries. A query
with no term in the collection (|q| = 0 after analysis: empty or stop words only; or unknown
terms only) is no evidence for any entity: its log score is -inf and its score 0, so it never
outranks a query with content (docs/methods.md §4).

This is the linking hot path: the candidates' term frequencies are read in Java by advancing
each query term's postings over the sorted candidate docids (``retrieval/java``). :func:`score_each`
scores several (language model, text, candidates) at once, in one Java call; :func:`score_grid`
several (language model, text) over one candidate list in one pass (:class:`GridScorer`: the LTR
features' scores of a query and its mentions, methods.md §9).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from elquery.kb.entity_index import EntityIndex
from elquery.kb.entities import canonical_entity_id
from elquery.base import ElqueryError
from elquery.retrieval import lucene
from elquery.retrieval.models import (
    DEFAULT_FIELD_WEIGHTS,
    DEFAULT_LAMBDA,
    EntityLinkingRetrieval,
    ExactModel,
    LanguageModel,
    SequentialDependence,
    Smoothing,
    links_refused,
    mlm,
    model_fields,
)


@dataclass(frozen=True)
class AnalyzedQuery:
    """The analyzed terms of a query, in order; |q| = len(terms). ``steps`` are the position
    steps from each term to the next one's (1 unless stop words were removed between them; all 1
    for a query given as terms), what the ordered windows of SDM/FSDM follow."""

    terms: tuple[str, ...]
    steps: tuple[int, ...] | None = None

    def token_lines(self) -> list[str]:
        """The ``token STEP TERM`` lines of an SDM/FSDM request."""
        steps = self.steps or (1,) * len(self.terms)
        return [f"token\t{step}\t{term}" for step, term in zip(steps, self.terms)]

    def counts(self) -> list[tuple[str, int]]:
        """Distinct terms with n(t, q), in order of first occurrence."""
        return list(Counter(self.terms).items())

    def request_lines(self) -> list[str]:
        return [f"length\t{len(self.terms)}", *(f"term\t{n}\t{t}" for t, n in self.counts())]


@dataclass(frozen=True)
class LinkedQuery:
    """A query with its linked entities E(q) and their scores s(e_i) > 0 (the linker's
    confidence), the input of the ELR models (:class:`~elquery.retrieval.models.EntityLinkingRetrieval`).
    Entities are taken in any form :func:`canonical_entity_id` takes and kept as ``<dbpedia:Title>``;
    one entity may be linked once."""

    text: str | tuple[str, ...] | AnalyzedQuery
    links: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        links = []
        for entity, score in self.links:
            canonical = canonical_entity_id(entity) if isinstance(entity, str) else None
            if canonical is None:
                raise ElqueryError(f"linked entity {entity!r} is not a DBpedia entity id")
            if isinstance(score, bool) or not (isinstance(score, int | float) and score > 0 and math.isfinite(score)):
                raise ElqueryError(f"linked entity {canonical}: score must be positive, got {score!r}")
            links.append((canonical, float(score)))
        if len({e for e, _ in links}) != len(links):
            raise ElqueryError(f"an entity is linked twice in {[e for e, _ in links]}")
        object.__setattr__(self, "links", tuple(links))


Query = str | Sequence[str] | AnalyzedQuery | LinkedQuery
"""Query text (analyzed with the index's analyzer), a sequence of already analyzed terms, or
either with its linked entities (:class:`LinkedQuery`, for ELR)."""


def analyze(index: EntityIndex, query: Query) -> AnalyzedQuery:
    """Analyze query text with the index's analyzer (methods.md §2); a sequence of terms is
    taken as analyzed; a :class:`LinkedQuery` gives its text's."""
    if isinstance(query, LinkedQuery):
        return analyze(index, query.text)
    if isinstance(query, AnalyzedQuery):
        return query
    if isinstance(query, str):
        tokens = lucene.query_tokens(query)
        return AnalyzedQuery(tuple(t for _, t in tokens), tuple(s for s, _ in tokens))
    terms = tuple(query)
    if any(not t or any(c in t for c in "\t\n\r") for t in terms):
        raise ElqueryError(f"query terms must be non-empty and hold no tab or newline: {terms!r}")
    return AnalyzedQuery(terms)


@dataclass(frozen=True)
class QueryLikelihood:
    """Eq. 16 for one entity: ``log_score`` and ``score`` = exp(log_score)."""

    log_score: float

    @property
    def score(self) -> float:
        return math.exp(self.log_score)


@dataclass(frozen=True, eq=False)
class EntityPrior:
    """An entity prior: log P(e) for every docid, added to the log score."""

    log_weights: np.ndarray

    @classmethod
    def from_probabilities(cls, index: EntityIndex, probabilities: Mapping[str, float], default: float) -> EntityPrior:
        """P(e) for the listed entities, ``default`` for the others; all must be positive."""
        weights = np.full(len(index.entity_ids), default, dtype=np.float64)
        for entity, p in probabilities.items():
            docid = index.find_docid(entity)
            if docid is not None:
                weights[docid] = p
        if not np.all(weights > 0):
            raise ElqueryError("prior probabilities must be positive")
        return cls(np.log(weights))

    def check(self, index: EntityIndex) -> None:
        """A prior must have one weight per entity of the index it is used with."""
        if len(self.log_weights) != len(index.entity_ids):
            raise ElqueryError(f"the prior has {len(self.log_weights)} weights for {len(index.entity_ids)} entities")


class EntityScorer:
    """Scores candidate entities under an exact model: a language model (Eq. 12-13, 16; PRMS)
    or SDM/FSDM; safe to share between threads (see
    :class:`elquery.retrieval.searcher.Searcher`)."""

    def __init__(self, index: EntityIndex, model: ExactModel | None = None, prior: EntityPrior | None = None) -> None:
        self.index = index
        self.model = model or mlm()
        self.prior = prior
        index.require_fields(model_fields(self.model), f"the model {self.model.name}")
        if prior is not None:
            prior.check(index)
        self._model_lines = "\n".join(self.model.request_lines()) if isinstance(self.model, LanguageModel) else ""

    def log_scores(self, query: Query, docids: np.ndarray | None) -> lucene.Scores:
        """Log scores of the given docids (any order, no repeats; None: every entity), aligned
        with them, and the number of query terms known to the collection (ELR: the number of
        components that tell entities apart)."""
        if isinstance(self.model, EntityLinkingRetrieval):
            from elquery.retrieval.elr import elr_scores

            if self.prior is not None:
                raise ElqueryError("an entity prior applies to language models only")
            if docids is None:
                docids = np.arange(len(self.index.entity_ids), dtype=np.int32)
            return elr_scores(self.index, self.model, query, np.asarray(docids, dtype=np.int32))
        if isinstance(query, LinkedQuery) and query.links:
            raise links_refused(self.model.name)
        analyzed = analyze(self.index, query)
        if isinstance(self.model, SequentialDependence):
            request = [*self.model.request_lines(), *analyzed.token_lines()]
        else:
            request = [*self.model.request_lines(), *analyzed.request_lines()]
        if docids is None:
            if isinstance(self.model, SequentialDependence):  # scores every entity, as candidates
                docids = np.arange(len(self.index.entity_ids), dtype=np.int32)
                request.append(f"docids\t{lucene.encode_docids(docids)}")
            result = self._score("\n".join(request))
            scores = result.scores.copy()
            docids = np.arange(len(scores))
        else:
            docids = np.asarray(docids, dtype=np.int32)
            order, line = _candidates(docids)
            request.append(line)
            result = self._score("\n".join(request))
            scores = _in_request_order(result.scores, order)
        if result.known_terms == 0:
            _no_evidence(scores)
        elif self.prior is not None:
            scores += self.prior.log_weights[docids]
        return lucene.Scores(result.known_terms, scores)

    def _score(self, request: str) -> lucene.Scores:
        if isinstance(self.model, SequentialDependence):
            result = lucene.dependence(self.index, request, ranking=False)
            assert isinstance(result, lucene.Scores)
            return result
        return lucene.score(self.index.leaf, request)

    def score_candidates(self, query: Query, entity_ids: Iterable[str]) -> dict[str, float]:
        """Log score (Eq. 16) of every given entity that is in the index (others are left out),
        in the order given. Query text under a language model takes one Java call
        (:meth:`_scores_by_id`: the linker's hot path), else the docids are looked up here first."""
        if isinstance(query, str) and isinstance(self.model, LanguageModel):
            entities = list(dict.fromkeys(entity_ids))
            by_id = self._scores_by_id(query, entities)
            if by_id is not None:
                return by_id
            entity_ids = entities
        docids: dict[str, int] = {}
        for entity in entity_ids:
            docid = self.index.find_docid(entity)
            if docid is not None:
                docids.setdefault(entity, docid)
        scores = self.log_scores(query, np.fromiter(docids.values(), dtype=np.int32, count=len(docids))).scores
        return dict(zip(docids, scores.tolist()))

    def _scores_by_id(self, text: str, entities: list[str]) -> dict[str, float] | None:
        """:meth:`score_candidates` of query text under a language model in one Java call
        (:func:`lucene.score_entities`: the text analyzed and the ids looked up there, not one call
        each), the same numbers; None (look them up here) when an id holds a line end or is empty,
        or one not in the index may name an indexed entity in another spelling
        (:meth:`EntityIndex.find_docid` tries its :func:`canonical_entity_id`)."""
        if not entities:
            return {}
        if not all(entity and "\n" not in entity for entity in entities):
            return None
        result = lucene.score_entities(self.index.leaf, self._model_lines, _LINE_ENDS.sub(" ", text), entities)
        docids = result.docids.tolist()
        if -1 in docids and any(docid < 0 and canonical_entity_id(entity) not in (None, entity)
                                for entity, docid in zip(entities, docids)):
            return None
        scores = result.scores
        if result.known_terms == 0:
            scores = np.full(len(scores), -math.inf)  # as _no_evidence
        elif self.prior is not None:
            scores = scores + np.where(result.docids < 0, 0.0, self.prior.log_weights[result.docids])
        return {entity: score for entity, score, docid in zip(entities, scores.tolist(), docids) if docid >= 0}

    def normalized_query_likelihood(self, query: Query, entity_ids: Iterable[str]) -> dict[str, QueryLikelihood]:
        """Eq. 16 as (log score, exp score) for every given entity that is in the index."""
        return {e: QueryLikelihood(s) for e, s in self.score_candidates(query, entity_ids).items()}


def _candidates(docids: np.ndarray) -> tuple[np.ndarray, str]:
    """The order that sorts the docids, and the ``docids`` line of a request (ascending)."""
    order = np.argsort(docids, kind="stable")
    return order, f"docids\t{lucene.encode_docids(docids[order])}"


def _in_request_order(sorted_scores: np.ndarray, order: np.ndarray) -> np.ndarray:
    scores = np.empty(len(order), dtype=np.float64)
    scores[order] = sorted_scores
    return scores


def _no_evidence(scores: np.ndarray) -> None:
    """No query term is in the collection (an empty, stopword-only or unknown query): the query
    is no evidence for any entity, so Eq. 16 is defined as log score -inf, score 0."""
    scores[:] = -math.inf


@dataclass(frozen=True, eq=False)
class CandidateScoring:
    """One scoring of :func:`score_each`: candidates (docids, any order, no repeats) for a query
    (text, analyzed with the index's analyzer, or analyzed terms) under a language model."""

    model: LanguageModel
    query: str | Sequence[str] | AnalyzedQuery
    docids: np.ndarray


_LINE_ENDS = re.compile(r"[\r\n]")


def score_each(index: EntityIndex, scorings: Sequence[CandidateScoring]) -> list[lucene.Scores]:
    """Log scores (Eq. 16) of each scoring's docids under its language model, aligned with them,
    the same numbers :meth:`EntityScorer.log_scores` gives (a query with no term in the collection:
    -inf), all in ONE Java call, texts analyzed in it: the LTR features' single-field scores
    (``lm(field)``, Jelinek-Mercer lambda 0.1) and ``mlm()`` of a query and its mentions. Every
    field the models read must be in the index (``EntityIndex.require_fields``)."""
    names = {name for s in scorings for name in model_fields(s.model)}
    index.require_fields(sorted(names), "the language models scored")
    requests, orders = [], []
    for scoring in scorings:
        lines = scoring.model.request_lines()
        if isinstance(scoring.query, str):
            lines.append("text\t" + _LINE_ENDS.sub(" ", scoring.query))  # line ends separate tokens as spaces do
        else:
            lines += analyze(index, scoring.query).request_lines()
        order, line = _candidates(np.asarray(scoring.docids, dtype=np.int32))
        requests.append("\n".join([*lines, line]))
        orders.append(order)
    results = []
    for result, order in zip(lucene.score_each(index.leaf, requests) if requests else [], orders):
        scores = _in_request_order(result.scores, order)
        if result.known_terms == 0:
            _no_evidence(scores)
        results.append(lucene.Scores(result.known_terms, scores))
    return results


class GridScorer:
    """Log scores (Eq. 16) of texts under fixed language models over one candidate list, in ONE
    Java call a grid (``EntityScores.scoreGrid``): each text analyzed once there, each (field,
    term) pair's statistics and postings over the candidates read once; the model lines are made
    and the models' fields checked once, here. The LTR features' language-model scores of a query
    and its mentions (methods.md §9)."""

    def __init__(self, index: EntityIndex, models: Sequence[LanguageModel]) -> None:
        index.require_fields(sorted({name for model in models for name in model_fields(model)}),
                             "the language models scored")
        self.index = index
        self.models = tuple(models)
        self._lines = ["\n".join(model.request_lines()) for model in self.models]

    def scores(self, texts: Sequence[str], scorings: np.ndarray, docids: np.ndarray) -> np.ndarray:
        """A float64 matrix of one row per (model number m, text number t) row of ``scorings``
        (int32, n x 2) and one column per docid of ``docids`` (any order, no repeats): the scores
        :func:`score_each` gives to ``texts[t]`` under ``models[m]`` (a text with no term in the
        collection: -inf)."""
        docids = np.asarray(docids, dtype=np.int32)
        order = np.argsort(docids, kind="stable")
        known, sorted_scores = lucene.score_grid(self.index.leaf, self._lines,
                                                 [_LINE_ENDS.sub(" ", text) for text in texts], scorings, docids[order])
        scores = np.empty(sorted_scores.shape, dtype=np.float64)
        scores[:, order] = sorted_scores
        scores[known == 0] = -math.inf  # no evidence, as _no_evidence
        return scores


def score_grid(index: EntityIndex, scorings: Sequence[tuple[LanguageModel, str]], docids: np.ndarray) -> np.ndarray:
    """Log scores (Eq. 16) of the same candidates ``docids`` (any order, no repeats) for each
    (language model, query text) of ``scorings``: a float64 matrix of one row per scoring and one
    column per docid, the rows :func:`score_each` gives for those scorings (a text with no term in
    the collection: -inf), in ONE Java call (:class:`GridScorer`, each model and distinct text sent once)."""
    models = {id(model): model for model, _ in scorings}
    model_number = {key: number for number, key in enumerate(models)}
    text_number: dict[str, int] = {}
    for _, text in scorings:
        text_number.setdefault(text, len(text_number))
    pairs = np.array([(model_number[id(model)], text_number[text]) for model, text in scorings],
                     dtype=np.int32).reshape(-1, 2)
    return GridScorer(index, list(models.values())).scores(list(text_number), pairs, docids)


class MLMScorer(EntityScorer):
    """:class:`EntityScorer` for MLM (Eq. 12-13): field weights and Jelinek-Mercer lambda (one for
    all fields, or per field; a :class:`~elquery.retrieval.models.Dirichlet` value smooths that field
    with Dirichlet instead)."""

    def __init__(
        self,
        index: EntityIndex,
        field_weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
        smoothing: float | Smoothing | Mapping[str, float | Smoothing] = DEFAULT_LAMBDA,
        prior: EntityPrior | None = None,
    ) -> None:
        super().__init__(index, mlm(field_weights, smoothing), prior)
