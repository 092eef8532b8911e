"""ELR (Hasibi, Balog and Bratsberg, ICTIR 2016): the query's linked entities as an extra
component of a term-based model (methods.md §4, :class:`~elquery.retrieval.models.EntityLinkingRetrieval`).

For a query q with linked entities E(q) and scores s(e_i), entity e scores

    lambda_T/|T| sum f_T + lambda_O/|O| sum f_O + lambda_U/|U| sum f_U
      + lambda_E sum_{e_i in E(q)} w(e_i) log sum_{f in F(e_i)} P(f|e_i) [(1 - alpha) 1(e_i in f(e)) + alpha df_f(e_i) / N_f],

w(e_i) = s(e_i) / sum_j s(e_j); F(e_i) the top predicates relating to e_i (or the one field of all
related entities), P(f|e_i) their mapping probabilities (:class:`EntityLinkingRetrieval`). The
term part is SDM/FSDM with its lambdas divided by the number of cliques (or lambda_T times Eq. 16
for a language model), computed by the exact scorers; the entity part needs, per linked entity
and field, the entities relating to it (one postings list each).
A linked entity no entity relates to (df = 0) gives every entity the same log 0 and is left out,
like a term component with no collection frequency; so is the term part when no query term is
in the collection. With neither left, the query ranks nothing (its log scores are -inf).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from elquery.base import ElqueryError
from elquery.kb.entity_index import EntityIndex
from elquery.retrieval import lucene
from elquery.retrieval.models import EntityLinkingRetrieval, LanguageModel, SequentialDependence
from elquery.retrieval.scoring import AnalyzedQuery, EntityScorer, LinkedQuery, Query, analyze


@dataclass(frozen=True, eq=False)
class ElrPlan:
    """One query under an ELR model: the term model with its per-query lambdas (None: no term
    part) and its weight, and the entity part: its value for entities holding no linked entity
    (``constant``) and the docids holding at least one (``linked``, ascending) with theirs."""

    query: AnalyzedQuery
    text: LanguageModel | SequentialDependence | None
    text_weight: float
    constant: float
    linked: np.ndarray
    linked_part: np.ndarray
    entity_components: int

    def scores(self, index: EntityIndex, docids: np.ndarray) -> lucene.Scores:
        """The ELR log scores of ``docids`` (any order, no repeats), and the number of
        components that tell entities apart (0: every score is -inf)."""
        docids = np.asarray(docids, dtype=np.int32)
        scores = np.zeros(len(docids), dtype=np.float64)
        components = self.entity_components
        if self.text is not None:
            result = EntityScorer(index, self.text).log_scores(self.query, docids)
            if result.known_terms:
                scores = result.scores * self.text_weight
                components += 1
        entity_part = np.full(len(docids), self.constant)
        found = contains(self.linked, docids)
        entity_part[found] = self.linked_part[np.searchsorted(self.linked, docids[found])]
        scores = scores + entity_part
        if not components:
            scores[:] = -math.inf
        return lucene.Scores(components, scores)


def plan(index: EntityIndex, model: EntityLinkingRetrieval, query: Query) -> ElrPlan:
    """The per-query parts of ``model`` for ``query`` (a :class:`LinkedQuery`; plain text has
    no linked entities). A linked entity that is not in the index is an error."""
    links = query.links if isinstance(query, LinkedQuery) else ()
    analyzed = analyze(index, query)
    lambda_t, lambda_o, lambda_u, lambda_e = model.lambdas
    text: LanguageModel | SequentialDependence | None = None
    weight = 1.0
    n = len(analyzed.terms)
    if isinstance(model.text, LanguageModel):
        text, weight = (model.text, lambda_t) if n and lambda_t else (None, 1.0)
    elif n:
        lambdas = (lambda_t / n, lambda_o / (n - 1), lambda_u / (n - 1)) if n > 1 else (lambda_t, 0.0, 0.0)
        text = replace(model.text, lambdas=lambdas) if any(lambdas) else None
    total = sum(score for _, score in links)
    related: list[tuple[float, list[_Field]]] = []  # (w(e_i), its fields)
    if links and lambda_e:
        for entity, score in links:
            if index.find_docid(entity) is None:
                raise ElqueryError(f"linked entity {entity} is not in the index {index.path}")
            fields = _fields(index, entity, model)
            if fields:
                related.append((score / total, fields))
    linked = _union([f.docids for _, fields in related for f in fields])
    constant = 0.0
    part = np.zeros(len(linked))
    for w, fields in related:
        background = sum(f.weight * f.background for f in fields)
        constant += w * math.log(background)
        mixture = np.full(len(linked), background)
        for f in fields:  # f.docids are among the linked ones
            mixture[np.searchsorted(linked, f.docids)] += f.weight * (1 - model.alpha)
        part += w * np.log(mixture)
    return ElrPlan(analyzed, text, weight, lambda_e * constant, linked, lambda_e * part, len(related))


def _union(sorted_docids: list[np.ndarray]) -> np.ndarray:
    """The union of ascending docid arrays, ascending (sorting, not hashing: a few times faster)."""
    if len(sorted_docids) == 1:
        return sorted_docids[0]
    merged = np.sort(np.concatenate(sorted_docids)) if sorted_docids else np.empty(0, dtype=np.int32)
    return merged[np.concatenate(([True], merged[1:] != merged[:-1]))] if len(merged) else merged


def contains(sorted_docids: np.ndarray, docids: np.ndarray) -> np.ndarray:
    """Whether each of ``docids`` is in the ascending ``sorted_docids``."""
    where = np.searchsorted(sorted_docids, docids)
    found = where < len(sorted_docids)
    found[found] = sorted_docids[where[found]] == docids[found]
    return found


@dataclass(frozen=True, eq=False)
class _Field:
    """One field f of a linked entity e_i: P(f|e_i), alpha df_f(e_i) / N_f and the docids
    whose f holds e_i."""

    weight: float
    background: float
    docids: np.ndarray


def _fields(index: EntityIndex, entity: str, model: EntityLinkingRetrieval) -> list[_Field]:
    """The fields F(e_i) of a linked entity (none when no entity relates to it)."""
    if not model.predicates:
        docids = index.related_docids(entity)  # an index without relations: an error
        if not len(docids):
            return []
        return [_Field(1.0, model.alpha * len(docids) / index.relation_statistics().entities, docids)]
    statistics = index.predicate_statistics()
    found = [(p, index.related_docids(entity, p)) for p in index.relating_predicates(entity)]
    top = sorted(found, key=lambda item: (-len(item[1]), item[0]))[:model.predicates]
    mapping = [len(d) / statistics[p].links * statistics[p].entities for p, d in top]
    return [_Field(m / sum(mapping), model.alpha * len(d) / statistics[p].entities, d) for m, (p, d) in zip(mapping, top)]


def elr_scores(index: EntityIndex, model: EntityLinkingRetrieval, query: Query, docids: np.ndarray) -> lucene.Scores:
    """:meth:`ElrPlan.scores` of ``docids`` for ``query``."""
    return plan(index, model, query).scores(index, docids)
