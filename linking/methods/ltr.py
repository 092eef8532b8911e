"""LTR (methods.md §9; Hasibi, Balog and Bratsberg, ECIR 2017): a (mention, entity) pair scores the
random-forest model's score of its 28 features (:mod:`elquery.linking.ltr`), computed in one batch
per query. Its candidates are the pairs with commonness >= c (0.1) whose entity is in the index.

Semantic mapping ranks entities by the model's score, each keeping its best mention (LTR);
interpretation finding is GIF on the model's scores with s = 0.3 (LTR-greedy), or TopRanked. The
scores estimate the probability that the entity is meant, whatever the size of the knowledge base,
so the demo knowledge base has no threshold of its own.

The model file (``elquery ltr train``) is read only if it was trained on the features elquery
computes, extracted from these artefacts (the provenance ids it keeps); otherwise one line says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from elquery.linking.methods.method import (FINDERS, LinkingMethod, OwnedArtefacts, RankingInputs,
                                            commonness_threshold, gif_threshold, pipeline)
from elquery.linking.types import ScoredMention
from elquery.registry import Parameter

MODEL = Parameter("model", Path, None, "the model file of `elquery ltr train` (methods.md §9)", required=True)
COMMONNESS = commonness_threshold(0.1)
"""c of the candidate pairs, which the features of ``elquery ltr features`` take too."""


def _scored_artefacts(artefacts: Mapping[str, object]) -> dict[str, object]:
    """The artefacts a model's features come from, as :meth:`LtrModel.load` checks them."""
    return {"index": artefacts["index"], "surface_forms": artefacts["surface_forms"]}


def check_model(artefacts: Mapping[str, object], values: Mapping[str, Any]) -> None:
    """The model file is an elquery LTR model for these features and artefacts (one line if not)."""
    from elquery.linking.ltr.model import LtrModel

    LtrModel.read_info(values["model"], artefacts=_scored_artefacts(artefacts))


class LtrRanking:
    """Candidate ranking by the model (:class:`~elquery.linking.ltr.model.LtrModel`) over the
    features of every candidate pair (:class:`~elquery.linking.ltr.features.FeatureExtractor`;
    the index and surface-form store as paths or open objects)."""

    def __init__(self, inputs: RankingInputs) -> None:
        from elquery.kb.entity_index import EntityIndex
        from elquery.kb.surface_forms.store import SurfaceFormStore
        from elquery.linking.ltr.features import FeatureExtractor
        from elquery.linking.ltr.model import LtrModel
        from elquery.linking.mlm_scores import IndexScorer

        self.model = LtrModel.load(inputs.values["model"], artefacts=_scored_artefacts(inputs.artefacts))
        self.owned = OwnedArtefacts()
        try:
            index = self.owned.open(inputs.artefacts["index"], EntityIndex)
            index = index.index if isinstance(index, IndexScorer) else index  # the MLM methods' open index
            store = self.owned.open(inputs.artefacts["surface_forms"], SurfaceFormStore)
            self.extractor = FeatureExtractor(index, store, inputs.values["commonness_threshold"],
                                              inputs.max_query_tokens)
        except BaseException:
            self.close()
            raise
        self.whitelist = inputs.whitelist

    def scored(self, query: str, tokens: Sequence[str]) -> list[ScoredMention]:
        """score(m, e) = the model's score of the pair's features, for every candidate pair."""
        pairs, matrix = self.extractor.extract(query)
        scores = self.model.score(matrix)
        return [ScoredMention(pair.mention, pair.entity, float(score), pair.commonness)
                for pair, score in zip(pairs, scores) if self.whitelist is None or pair.entity in self.whitelist]

    def close(self) -> None:
        self.owned.close()


LTR = LinkingMethod(
    name="ltr", display="LTR", summary="learning to rank: a random forest's score of each candidate pair's 28 "
    "features (methods.md §9); needs a model",
    parameters=(MODEL, COMMONNESS, gif_threshold(0.3)),
    artefacts=("index", "surface_forms", "model"), finders=FINDERS, factory=pipeline, ranking=LtrRanking,
    check=check_model)
