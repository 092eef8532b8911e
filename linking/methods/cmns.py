"""CMNS (methods.md §4, Eq. 11): a (mention, entity) pair scores commonness(m, e).

The longest-span rule of Eq. 11 applies to the semantic-mapping ranking only
(``longest_spans``), so interpretation finding with CMNS still sees every candidate span (GIF's
containment pruning then keeps the most common of nested spans). Its GIF threshold s = 0.1 is a
commonness, independent of the knowledge base's size: it keeps the senses that at least one web
annotation in ten gives the mention, on the demo KB as on DBpedia.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from elquery.linking.methods.detection import Detection
from elquery.linking.methods.method import FINDERS, LinkingMethod, commonness_threshold, gif_threshold, pipeline
from elquery.linking.types import Candidate, ScoredMention


def score(candidates: Iterable[Candidate]) -> list[ScoredMention]:
    """CMNS (Eq. 11) per pair: score(m, e) = commonness(m, e)."""
    return [ScoredMention(c.mention, c.entity, c.commonness, c.commonness) for c in candidates]


class CmnsRanking(Detection):
    """Candidate ranking by commonness over the surface-form store alone (no index)."""

    def scored(self, query: str, tokens: Sequence[str]) -> list[ScoredMention]:
        return score(self.candidates(tokens))


CMNS = LinkingMethod(
    name="cmns", display="CMNS", summary="commonness of the (mention, entity) pair (Eq. 11); needs no index",
    # c = 0.1 as the published CMNS code
    parameters=(commonness_threshold(0.1), gif_threshold(0.1, demo=0.1)),
    artefacts=("surface_forms",), finders=FINDERS, factory=pipeline, ranking=CmnsRanking, longest_spans=True)
