"""A linking method defined outside elquery, as a user would add one (one definition and one
registration): the tests of its registration at every door import it from here (tests/ is on the
path as pytest loads them)."""

from __future__ import annotations

from collections.abc import Sequence

from elquery.linking.methods import FINDERS, LinkingMethod
from elquery.linking.methods.detection import Detection
from elquery.linking.methods.method import commonness_threshold, gif_threshold, pipeline
from elquery.linking.types import ScoredMention


class SquaredRanking(Detection):
    """A toy candidate ranking: score(m, e) = commonness(m, e)^2."""

    def scored(self, query: str, tokens: Sequence[str]) -> list[ScoredMention]:
        return [ScoredMention(c.mention, c.entity, c.commonness ** 2, c.commonness) for c in self.candidates(tokens)]


SQUARED = LinkingMethod(
    name="cmns2", display="CMNS²", summary="squared commonness", parameters=(commonness_threshold(0.2), gif_threshold(0.05)),
    artefacts=("surface_forms",), finders=FINDERS, factory=pipeline, ranking=SquaredRanking)
