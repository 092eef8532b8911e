"""Whole-index entity ranking (methods.md §4, entity retrieval) and the Python API for experiments.

``Searcher(index).rank(query, model, k)`` returns the exact top k entities:

* language models (LM, Dirichlet LM, MLM; Eq. 12-13 ranked by Eq. 16): the entities holding a
  query term in a field the model reads (weight mu_f > 0), scored in Java from the terms'
  postings; the others are not ranked (methods.md §4), with or without an entity prior (then
  every such entity is scored and its log prior added). A query with no term in the collection
  ranks nothing.
* BM25 / BM25F: Lucene's IndexSearcher with BM25Similarity; docids map to entity ids through the
  index's id list (or Lucene's stored ids, see :meth:`Searcher._names`), and tied scores are
  not rounded.
* PRMS: a language model whose field weights are each term's P(f|t), ranked as above (a field
  holding the term has P(f|t) > 0).
* SDM / FSDM: every entity holding a query term in a weighted field is scored exactly (term and
  window counts from the positions, windows within one value of a field); the others are not
  ranked (methods.md §4).
* Rerank: BM25 top ``depth``, re-scored exactly by the language model or SDM/FSDM.
* ELR (SDM+ELR, FSDM+ELR, MLM+ELR; :mod:`elquery.retrieval.elr`): the entities the term model
  ranks and every entity whose relations hold a linked entity. The entity part is the same for
  all entities holding no linked entity, so their top k is the term ranking's top k once those
  holding one are set aside: the term ranking is read to depth 2k, doubled until it holds k
  entities holding none (or is complete); the linked ones are scored exactly.

Ties are ordered by entity id, always.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import numpy as np

from elquery.kb.entity_index import EntityIndex, id_rank
from elquery.kb.index_format import ID_FIELD, ID_RANK_FILE
from elquery.base import ElqueryError
from elquery.formats.queries import check_unicode
from elquery.retrieval import lucene
from elquery.retrieval.models import (
    BM25,
    BM25F,
    EntityLinkingRetrieval,
    ExactModel,
    LanguageModel,
    DEFAULT_K,
    Model,
    Rerank,
    SequentialDependence,
    check_k,
    links_refused,
    mlm,
    model_fields,
)
from elquery.retrieval.scoring import AnalyzedQuery, EntityPrior, EntityScorer, LinkedQuery, Query, analyze


STORED_NAME_COST = 150
"""What naming one entity from Lucene's stored id costs, in entities of the id list read: over
1M entities on a busy machine a stored id took 65-200 us (1000 random docids in one call), the
list 0.53 us an id."""


class RankedEntity(NamedTuple):
    """One line of a ranking. ``score`` is the log score of Eq. 16 for language models (plus the
    log prior, if any), the SDM/FSDM score, and Lucene's score for BM25. A named tuple: a ranking
    of 1000 is built in a fraction of the time frozen dataclasses take."""

    rank: int
    entity: str
    score: float


@dataclass(frozen=True, slots=True)
class EntityScore:
    """An entity's normalized query likelihood (Eq. 16): ``log_score`` and ``score`` = exp of it."""

    entity: str
    log_score: float
    score: float


class Searcher:
    """Ranks and scores the entities of one index (opened here from a path, or given open).

    Safe to share between threads: every per-query Java call is a static call of elquery's helper
    (pyjnius shares the receiver of instance calls between objects, so those are kept out of the
    query path), and the Java side keeps its scratch space per thread. Results under any number of
    threads equal the single-threaded ones.
    """

    def __init__(self, index: EntityIndex | Path | str) -> None:
        self._owned = not isinstance(index, EntityIndex)
        self.index: EntityIndex = index if isinstance(index, EntityIndex) else EntityIndex(index)
        self._stored_names = 0
        """Entities named from Lucene's stored ids so far (:meth:`_names`)."""

    # --- tie order ----------------------------------------------------------------------------

    @cached_property
    def _id_rank(self) -> np.ndarray:
        """Position of every docid in entity-id order (the tie order): the index's
        ``entity_id_rank.npy``, memory-mapped (the Java scorer maps it too), so opening costs the
        same at any index size; an index built without it has it computed here from the ids
        (sorting them all) and given to the Java helper."""
        if self.index.metadata.get("entity_id_rank"):
            return self._mapped_id_rank()
        rank = id_rank(self.index.entity_ids)
        by_id = np.empty_like(rank)
        by_id[rank] = np.arange(len(rank), dtype=np.int32)
        lucene.install(self.index.leaf, by_id)
        return rank

    def _mapped_id_rank(self) -> np.ndarray:
        path = self.index.path / ID_RANK_FILE
        try:
            rank = np.load(path, mmap_mode="r")
        except (OSError, ValueError):
            rank = None
        if rank is None or rank.dtype != np.dtype("<i4") or rank.shape != (int(self.index.leaf.maxDoc()),):
            raise ElqueryError(f"{self.index.path}: {ID_RANK_FILE} does not match the Lucene index; rebuild it")
        return rank

    def prepare(self) -> None:
        """Do the one-time set-up (entity-id order, Java helper) now rather than on first use."""
        _ = self._id_rank

    # --- API ----------------------------------------------------------------------------------

    def rank(self, query: Query, model: Model | None = None, k: int = DEFAULT_K, prior: EntityPrior | None = None) -> list[RankedEntity]:
        """The top ``k`` entities for ``query`` (default model: MLM, names 0.2 / content 0.8,
        lambda 0.1), best first, ties by entity id. ``k`` is a whole number from 1 to ``MAX_K``
        (:func:`~elquery.retrieval.models.check_k`, as ``elquery rank --k``)."""
        k = check_k(k)
        text = query.text if isinstance(query, LinkedQuery) else query
        if isinstance(text, str):
            check_unicode(text)  # no lone surrogate: the text goes to Java's analyzer
        model = model or mlm()
        self.index.require_fields(model_fields(model), f"the model {model.name}")
        if isinstance(model, EntityLinkingRetrieval):
            if prior is not None:
                raise ElqueryError("an entity prior applies to language models only")
            docids, scores = self._rank_elr(query, model, k)
            return self._ranking(docids, scores)
        if isinstance(query, LinkedQuery) and query.links:
            raise links_refused(model.name)
        analyzed = analyze(self.index, query)
        if isinstance(model, LanguageModel):
            docids, scores = self._rank_language_model(analyzed, model, k, prior)
        elif isinstance(model, BM25 | BM25F):
            if prior is not None:
                raise ElqueryError("an entity prior applies to language models only")
            docids, scores = self._bm25(analyzed, model, k)
        elif isinstance(model, SequentialDependence):
            if prior is not None:
                raise ElqueryError("an entity prior applies to language models only")
            docids, scores = self._rank_dependence(analyzed, model, k)
        else:
            docids, scores = self._rerank(analyzed, model, k, prior)
        return self._ranking(docids, scores)

    def _ranking(self, docids: np.ndarray, scores: np.ndarray) -> list[RankedEntity]:
        names = self._names(docids)
        return list(map(RankedEntity._make, zip(range(1, len(names) + 1), names, scores.tolist())))

    def _names(self, docids: np.ndarray) -> list[str]:
        """The entity ids of ``docids``: from the index's id list once it is read, or else from
        Lucene's stored ids (one Java call), until this searcher has named as many entities that
        way as reading the list costs (the entity count / :data:`STORED_NAME_COST`, the rent rule
        of ``EntityIndex.find_docid``): a command ranking one query does not read all of DBpedia's
        ids, a batch reads them once."""
        entities = self.index.__dict__.get("entity_ids")  # the list, if read (a cached_property)
        if entities is None and self._stored_names + len(docids) <= int(self.index.leaf.maxDoc()) // STORED_NAME_COST:
            self._stored_names += len(docids)
            return lucene.stored(self.index.leaf, ID_FIELD, docids)
        entities = self.index.entity_ids
        return [entities[d] for d in docids.tolist()]

    def score(
        self, query: Query, entity_ids: Iterable[str], model: ExactModel | None = None, prior: EntityPrior | None = None
    ) -> list[EntityScore]:
        """The exact score (Eq. 16 for language models, the SDM/FSDM score otherwise) of each
        given entity that is in the index, in the order given."""
        scores = EntityScorer(self.index, model, prior).score_candidates(query, entity_ids)
        return [EntityScore(e, s, float(np.exp(s))) for e, s in scores.items()]

    # --- models -------------------------------------------------------------------------------

    def _rank_language_model(
        self, query: AnalyzedQuery, model: LanguageModel, k: int, prior: EntityPrior | None
    ) -> tuple[np.ndarray, np.ndarray]:
        if prior is not None:
            prior.check(self.index)
        depth = k if prior is None else len(self.index.entity_ids)  # with a prior: every entity ranked
        request = [*model.request_lines(), *query.request_lines(), f"k\t{depth}"]
        self.prepare()
        top = lucene.top(self.index.leaf, "\n".join(request))
        if prior is None:
            return top.docids, top.scores
        return self._best(top.docids, top.scores + prior.log_weights[top.docids], k)

    def _rank_dependence(self, query: AnalyzedQuery, model: SequentialDependence, k: int) -> tuple[np.ndarray, np.ndarray]:
        self.prepare()
        request = [*model.request_lines(), *query.token_lines(), f"k\t{k}"]
        top = lucene.dependence(self.index, "\n".join(request), ranking=True)
        assert isinstance(top, lucene.TopDocs)
        return top.docids, top.scores

    def _rank_elr(self, query: Query, model: EntityLinkingRetrieval, k: int) -> tuple[np.ndarray, np.ndarray]:
        from elquery.retrieval.elr import contains, plan

        parts = plan(self.index, model, query)
        linked = parts.scores(self.index, parts.linked)
        docids, scores = np.empty(0, dtype=np.int32), np.empty(0)
        depth = 2 * k
        while parts.text is not None and k:
            if isinstance(parts.text, LanguageModel):
                docids, scores = self._rank_language_model(parts.query, parts.text, depth, None)
            else:
                docids, scores = self._rank_dependence(parts.query, parts.text, depth)
            unlinked = ~contains(parts.linked, docids)
            if unlinked.sum() >= k or len(docids) < depth:
                docids, scores = docids[unlinked], scores[unlinked] * parts.text_weight + parts.constant
                break
            depth *= 2
        if linked.known_terms:
            docids, scores = np.concatenate([docids, parts.linked]), np.concatenate([scores, linked.scores])
        return self._best(docids, scores, k)

    def _bm25(self, query: AnalyzedQuery, model: BM25 | BM25F, k: int) -> tuple[np.ndarray, np.ndarray]:
        request = [model.request_line(), f"k\t{k}", *(f"term\t{n}\t{t}" for t, n in query.counts())]
        self.prepare()
        top = lucene.top(self.index.leaf, "\n".join(request), bm25=True)
        return top.docids, top.scores

    def _rerank(self, query: AnalyzedQuery, model: Rerank, k: int, prior: EntityPrior | None) -> tuple[np.ndarray, np.ndarray]:
        first, _ = self._bm25(query, model.first, model.depth)
        scores = EntityScorer(self.index, model.then, prior).log_scores(query, first).scores
        return self._best(first, scores, k)

    def _best(self, docids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The top k of (docids, scores) by score descending, then entity id."""
        if len(scores) > k:
            threshold = np.partition(scores, len(scores) - k)[len(scores) - k] if k else np.inf
            keep = scores >= threshold
            docids, scores = docids[keep], scores[keep]
        order = np.lexsort((self._id_rank[docids], -scores))[:k]
        return docids[order], scores[order]

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the index if this searcher opened it."""
        if self._owned:
            self.index.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
