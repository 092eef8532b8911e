"""MLM and MLMc (methods.md §4, Eq. 12-16): a (mention, entity) pair scores exp(log score(e, q))
of Eq. 16, the entity's MLM score against the whole query, the same for all of its mentions.
MLM scores every candidate (c = 0), MLMc those with commonness >= c (0.1).

The scores are likelihood ratios against the collection model, so their scale grows with the
collection: a query term the entity matches scores about P(t|theta_e) / P(t|C), and P(t|C)
shrinks as the collection grows. The default GIF threshold s = 20 is that of the published runs
over all of DBpedia; the bundled demo KB (54 entities) gives ratios two orders of magnitude
smaller, so its default is s = 1. On any other knowledge base choose s by cross-validation
(methods.md §7, ``elquery experiment``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from elquery.linking.methods.detection import Detection
from elquery.linking.methods.method import (FINDERS, LinkingMethod, RankingInputs, commonness_threshold, gif_threshold,
                                            pipeline)
from elquery.linking.types import Candidate, ScoredMention

Combine = Callable[[Iterable[Candidate], Mapping[str, float]], list[ScoredMention]]


class CandidateScorer(Protocol):
    """What the MLM methods need from the retrieval scorer
    (:class:`elquery.linking.mlm_scores.IndexScorer`): exp(log score(e, q)) of Eq. 16 for each
    candidate entity of a query; an entity outside the index gets none."""

    def exp_scores(self, query: str, entities: Sequence[str]) -> Mapping[str, float]: ...


def score(candidates: Iterable[Candidate], mlm_scores: Mapping[str, float]) -> list[ScoredMention]:
    """MLM and MLMc (Eq. 16): score(m, e) = exp(log score(e, q)), the same for all mentions of e."""
    return [ScoredMention(c.mention, c.entity, mlm_scores[c.entity], c.commonness) for c in candidates]


def open_scorer(path: Path | str) -> CandidateScorer:
    from elquery.linking.mlm_scores import IndexScorer

    return IndexScorer(path)


class MlmRanking(Detection):
    """Candidate ranking by the MLM score of each candidate entity (once per entity and query;
    entities outside the index drop out), combined with the pair by ``combine``."""

    def __init__(self, inputs: RankingInputs, combine: Combine = score) -> None:
        super().__init__(inputs)
        try:
            self.scorer: CandidateScorer = self.owned.open(inputs.artefacts["index"], open_scorer)
        except BaseException:
            self.close()
            raise
        self.combine = combine

    def scored(self, query: str, tokens: Sequence[str]) -> list[ScoredMention]:
        candidates = self.candidates(tokens)
        if not candidates:
            return []
        mlm_scores = self.scorer.exp_scores(query, sorted({c.entity for c in candidates}))
        return self.combine([c for c in candidates if c.entity in mlm_scores], mlm_scores)


MLM = LinkingMethod(
    name="mlm", display="MLM", summary="the entity's MLM score against the query (Eq. 16), every candidate (c = 0)",
    parameters=(commonness_threshold(0.0), gif_threshold(20.0, demo=1.0)),
    artefacts=("index", "surface_forms"), finders=FINDERS, factory=pipeline, ranking=MlmRanking)

MLMC = LinkingMethod(
    name="mlmc", display="MLMc", summary="MLM over the candidates with commonness >= c",
    parameters=(commonness_threshold(0.1), gif_threshold(20.0, demo=1.0)),
    artefacts=("index", "surface_forms"), finders=FINDERS, factory=pipeline, ranking=MlmRanking)
