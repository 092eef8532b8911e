"""GIF (methods.md §5, Algorithm 1) and TopRanked, worked by hand."""

from __future__ import annotations

import pytest

from elquery.linking.gif import gif, top_ranked
from elquery.linking.methods import METHODS
from elquery.linking.types import Mention, ScoredMention

QUERY = "new york pizza manhattan new jersey".split()


def triple(start: int, end: int, entity: str, score: float, tokens: list[str] = QUERY) -> ScoredMention:
    return ScoredMention(Mention(" ".join(tokens[start:end]), start, end), entity, score, 0.0)


def entity_sets(interpretations) -> list[set[str]]:
    return [set(i.entities) for i in interpretations]


def test_mention_spans() -> None:
    new_york, york = Mention("new york", 0, 2), Mention("york", 1, 2)
    assert new_york.contains(york) and not york.contains(new_york)
    assert new_york.contains(new_york) and new_york.overlaps(york)
    assert not new_york.overlaps(Mention("pizza", 2, 3))
    assert new_york.length == 2
    with pytest.raises(ValueError):
        Mention("x", 2, 2)


def test_jacksonville_worked_example() -> None:
    tokens = ["jacksonville", "fl"]
    triples = [
        triple(0, 2, "<dbpedia:Jacksonville,_Florida>", 0.9, tokens),
        triple(0, 1, "<dbpedia:Jacksonville,_Florida>", 0.8, tokens),
        triple(0, 2, "<dbpedia:Naval_Air_Station_Jacksonville>", 0.2, tokens),
    ]
    [only] = gif(triples, 0.3)
    assert only.entities == {"<dbpedia:Jacksonville,_Florida>"}
    assert only.score == pytest.approx(0.9)
    assert only.annotations[0].mention == Mention("jacksonville fl", 0, 2)


def test_prune_at_threshold_inclusive() -> None:
    triples = [triple(3, 4, "M", 0.5), triple(0, 2, "NYC", 0.49)]
    assert entity_sets(gif(triples, 0.5)) == [{"M"}]
    assert gif(triples, 0.51) == []
    assert gif([], 0.0) == []


def test_containment_and_identical_spans_keep_one_entity_per_mention() -> None:
    triples = [
        triple(0, 3, "Pizza", 0.7),
        triple(0, 2, "NYC", 0.6),       # contained in "new york pizza"
        triple(0, 3, "PizzaBrand", 0.5),  # identical span
        triple(1, 2, "York", 0.4),     # contained
        triple(3, 4, "Manhattan", 0.3),
    ]
    [only] = gif(triples, 0.0)
    assert only.entities == {"Pizza", "Manhattan"}
    assert only.score == pytest.approx(0.5)
    assert [a.entity for a in only.annotations] == ["Pizza", "Manhattan"]


def test_containment_keeps_the_higher_score_whichever_is_longer() -> None:
    triples = [triple(0, 3, "Pizza", 0.4), triple(0, 2, "NYC", 0.6), triple(3, 4, "Manhattan", 0.3)]
    assert entity_sets(gif(triples, 0.0)) == [{"NYC", "Manhattan"}]


def test_partial_overlap_gives_two_interpretations() -> None:
    # "new york" [0,2) and "york pizza" [1,3) overlap without containment.
    triples = [triple(0, 2, "NYC", 0.8), triple(1, 3, "YorkPizza", 0.6), triple(3, 4, "Manhattan", 0.4)]
    result = gif(triples, 0.0)
    assert entity_sets(result) == [{"NYC", "Manhattan"}, {"YorkPizza", "Manhattan"}]
    assert [i.score for i in result] == pytest.approx([0.6, 0.5])


def test_new_interpretation_starts_with_the_triple_alone() -> None:
    # Algorithm 1: a triple overlapping every interpretation starts {triple}; earlier triples
    # are not copied into it.
    triples = [triple(0, 2, "NYC", 0.9), triple(4, 6, "NJ", 0.85), triple(1, 3, "YorkPizza", 0.8)]
    assert entity_sets(gif(triples, 0.0)) == [{"NYC", "NJ"}, {"YorkPizza"}]


def test_mentions_sharing_a_word_do_not_overlap() -> None:
    tokens = "new york new jersey".split()
    triples = [triple(0, 2, "NYC", 0.9, tokens), triple(2, 4, "NJ", 0.8, tokens)]
    [only] = gif(triples, 0.0)
    assert only.entities == {"NYC", "NJ"}
    # "york" [1,2) is not inside "new jersey" [2,4) although the strings share "new".
    assert Mention("york", 1, 2).overlaps(Mention("new jersey", 2, 4)) is False


def test_identical_entity_sets_reported_once() -> None:
    tokens = "new york york".split()
    triples = [triple(0, 2, "NYC", 0.9, tokens), triple(1, 3, "NYC", 0.5, tokens)]
    [only] = gif(triples, 0.0)
    assert only.entities == {"NYC"} and only.score == pytest.approx(0.9)
    assert only.annotations[0].mention.start == 0


def test_ties_are_deterministic() -> None:
    tokens = "new york".split()
    a, b = triple(0, 2, "B_entity", 0.5, tokens), triple(0, 2, "A_entity", 0.5, tokens)
    # same span, same score: the entity id decides, whatever the input order
    assert entity_sets(gif([a, b], 0.0)) == entity_sets(gif([b, a], 0.0)) == [{"A_entity"}]
    # same score, different spans: the earlier start wins the containment
    c, d = triple(0, 1, "New", 0.5, tokens), triple(0, 2, "NY", 0.5, tokens)
    assert entity_sets(gif([c, d], 0.0)) == [{"NY"}]  # same start: the longer span first
    e, f = triple(1, 2, "York", 0.5, tokens), triple(0, 2, "NY", 0.5, tokens)
    assert entity_sets(gif([e, f], 0.0)) == [{"NY"}]
    # interpretations with equal scores are ordered by their sorted entity ids
    g, h = triple(0, 2, "Zeta", 0.5, QUERY), triple(1, 3, "Alpha", 0.5, QUERY)
    assert entity_sets(gif([g, h], 0.0)) == entity_sets(gif([h, g], 0.0)) == [{"Alpha"}, {"Zeta"}]


def test_top_ranked() -> None:
    triples = [triple(0, 2, "NYC", 0.6), triple(3, 4, "Manhattan", 0.7), triple(0, 3, "Pizza", 0.7)]
    [only] = top_ranked(METHODS.get("mlmcg").rank(triples), triples)
    assert only.entities == {"Manhattan"} and only.score == pytest.approx(0.7)  # tie: entity id order
    assert top_ranked([], []) == []


def test_top_ranked_over_cmns_is_the_top_of_eq_11() -> None:
    """CMNS ranks only the longest matched spans (Eq. 11): "new york pizza" (3 tokens) beats the
    higher-scored one-token "pizza"."""
    triples = [triple(0, 3, "NY_pizza", 0.9), triple(2, 3, "Pizza", 1.0), triple(3, 4, "Manhattan", 1.0)]
    [only] = top_ranked(METHODS.get("cmns").rank(triples), triples)
    assert only.entities == {"NY_pizza"} and only.annotations[0].mention.length == 3


def test_an_interpretation_never_holds_an_entity_twice() -> None:
    """Two disjoint spans naming one entity: the best-scoring annotation stays, and the mean counts
    the entity once: (0.8 + 0.6) / 2, not (0.8 + 0.6 + 0.4) / 3."""
    tokens = ["nyc", "and", "new", "york", "pizza"]
    triples = [triple(0, 1, "NYC", 0.8, tokens), triple(2, 4, "NYC", 0.4, tokens), triple(4, 5, "Pizza", 0.6, tokens)]
    [only] = gif(triples, 0.0)
    assert [(a.entity, a.mention.start) for a in only.annotations] == [("NYC", 0), ("Pizza", 4)]
    assert only.score == pytest.approx(0.7)
