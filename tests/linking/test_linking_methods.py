"""Candidate ranking (methods.md §4): CMNS (Eq. 11), MLM, MLMc, MLMcg (Eq. 17), each the score
function of its module, and the semantic-mapping ranking of its registry entry."""

from __future__ import annotations

import pytest

from elquery.base import ElqueryError
from elquery.linking.methods import METHODS, cmns, mlm, mlmcg
from elquery.linking.methods.mlmcg import COMMONNESS_FLOOR
from elquery.linking.types import Candidate, Mention, MappedEntity, ScoredMention

TOKENS = "new york pizza manhattan".split()


def candidate(start: int, end: int, entity: str, commonness: float, in_kb: bool = False) -> Candidate:
    return Candidate(Mention(" ".join(TOKENS[start:end]), start, end), entity, commonness, in_kb)


CANDIDATES = [
    candidate(0, 2, "NYC", 0.6),
    candidate(0, 2, "NYS", 0.3, in_kb=True),
    candidate(0, 3, "Pizza", 0.9, in_kb=True),
    candidate(3, 4, "Manhattan", 0.0, in_kb=True),  # KB-only match
    candidate(3, 4, "NYC", 0.05),
]
MLM = {"NYC": 40.0, "NYS": 10.0, "Pizza": 2.0, "Manhattan": 30.0}


def rank_entities(method: str, triples: list[ScoredMention]) -> list[MappedEntity]:
    return METHODS.get(method).rank(triples)


def test_cmns_scores_pairs_by_commonness() -> None:
    triples = cmns.score(CANDIDATES)
    assert [t.score for t in triples] == [0.6, 0.3, 0.9, 0.0, 0.05]


def test_cmns_ranking_uses_only_the_longest_matched_span() -> None:
    ranked = rank_entities("cmns", cmns.score(CANDIDATES))
    assert [(r.entity, r.score, r.mention.text) for r in ranked] == [("Pizza", 0.9, "new york pizza")]
    shorter = [c for c in CANDIDATES if c.mention.length < 3]
    ranked = rank_entities("cmns", cmns.score(shorter))
    # l = 2: "manhattan" (length 1) does not count, even for NYC's other mention
    assert [(r.entity, r.score) for r in ranked] == [("NYC", 0.6), ("NYS", 0.3)]
    assert rank_entities("cmns", []) == []


def test_mlm_score_is_the_entity_score_for_every_mention() -> None:
    triples = mlm.score(CANDIDATES, MLM)
    assert [t.score for t in triples] == [40.0, 10.0, 2.0, 30.0, 40.0]
    ranked = rank_entities("mlm", triples)
    assert [(r.entity, r.score) for r in ranked] == [("NYC", 40.0), ("Manhattan", 30.0), ("NYS", 10.0), ("Pizza", 2.0)]
    assert ranked[0].mention == Mention("new york", 0, 2)  # ties between mentions: earlier span


def test_mlmcg_is_commonness_times_exp_score_with_floor() -> None:
    triples = mlmcg.score(CANDIDATES, MLM)
    assert [t.score for t in triples] == pytest.approx([24.0, 3.0, 1.8, COMMONNESS_FLOOR * 30.0, 2.0])
    assert COMMONNESS_FLOOR == 1e-5
    ranked = rank_entities("mlmcg", triples)
    # an entity keeps its best mention: NYC's "new york" (24) beats "manhattan" (2)
    assert [(r.entity, r.mention.text) for r in ranked] == [
        ("NYC", "new york"), ("NYS", "new york"), ("Pizza", "new york pizza"), ("Manhattan", "manhattan")]
    assert [t.commonness for t in triples] == [0.6, 0.3, 0.9, 0.0, 0.05]


def test_ranking_ties_by_entity_id() -> None:
    triples = mlm.score([candidate(0, 1, "B", 0.1), candidate(0, 1, "A", 0.1)], {"A": 1.0, "B": 1.0})
    assert [r.entity for r in rank_entities("mlm", triples)] == ["A", "B"]


def test_unknown_method() -> None:
    with pytest.raises(ElqueryError, match=r"^unknown method 'bm25'; methods are cmns, mlm, mlmc, mlmcg, tagme, ltr$"):
        METHODS.get("bm25")
