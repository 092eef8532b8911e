"""MLMcg (methods.md §4, Eq. 17): a (mention, entity) pair scores commonness(m, e) x
exp(log score(e, q)); a KB-only match (commonness 0) uses :data:`COMMONNESS_FLOOR` instead.

Over all of DBpedia the published MLMcg runs used the GIF threshold s = 20, elquery's default. The
bundled demo KB (54 entities) gives scores two orders of magnitude smaller (see
:mod:`elquery.linking.methods.mlm`): its default s = 0.25 lies below the weakest intended pair of
the demo queries (Barack_Obama for "obama's mother" at 0.31) and above the wrong senses that
survive containment pruning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from elquery.linking.methods.method import (FINDERS, LinkingMethod, RankingInputs, commonness_threshold, gif_threshold,
                                            pipeline)
from elquery.linking.methods.mlm import MlmRanking
from elquery.linking.types import Candidate, ScoredMention

COMMONNESS_FLOOR = 1e-5
"""methods.md §4, Eq. 17: the commonness used for a KB-only match (commonness 0)."""


def score(candidates: Iterable[Candidate], mlm_scores: Mapping[str, float]) -> list[ScoredMention]:
    """MLMcg (Eq. 17): score(m, e) = commonness(m, e) x exp(log score(e, q)), with the floor."""
    return [ScoredMention(c.mention, c.entity, (c.commonness or COMMONNESS_FLOOR) * mlm_scores[c.entity], c.commonness)
            for c in candidates]


def ranking(inputs: RankingInputs) -> MlmRanking:
    return MlmRanking(inputs, score)


MLMCG = LinkingMethod(
    name="mlmcg", display="MLMcg", summary="commonness x the entity's MLM score (Eq. 17)",
    parameters=(commonness_threshold(0.1), gif_threshold(20.0, demo=0.25)),
    artefacts=("index", "surface_forms"), finders=FINDERS, factory=pipeline, ranking=ranking)
