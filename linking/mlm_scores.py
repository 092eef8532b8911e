"""The linker's MLM source: candidate entities scored against the entity index (methods.md §4,
Eq. 16, through :mod:`retrieval`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from elquery.kb.entity_index import EntityIndex
from elquery.retrieval import MLMScorer


class IndexScorer:
    """exp(log score(e, q)) of Eq. 16 under MLM (names 0.2 / content 0.8, lambda 0.1) for the
    candidate entities of a query; entities missing from the index get no score."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.index = EntityIndex(self.path)
        self._scorer = MLMScorer(self.index)

    def exp_scores(self, query: str, entities: Sequence[str]) -> Mapping[str, float]:
        return {e: math.exp(s) for e, s in self._scorer.score_candidates(query, entities).items()}

    def close(self) -> None:
        self.index.close()
