"""Mention-detection recall, TAGME metrics, wikification, WePS clustering, Spearman."""

import math

import pytest

from elquery.evaluation import (NOT_IN_KB, annotation_scores, f_alpha, inverse_purity, macro_clustering,
                        mention_detection_recall, mentions_match, purity, score_clustering,
                        spearman, topics_scores, wikification_scores)


def test_mention_detection_recall() -> None:
    gold = {"q1": frozenset({"a", "b"}), "q2": frozenset({"c"}), "q3": frozenset()}
    result = mention_detection_recall(gold, {"q1": ["a", "x", "a"], "q9": ["c"]})
    assert result.per_query == {"q1": 0.5, "q2": 0.0}
    assert (result.recall, result.queries) == (0.25, 2)


def test_mention_detection_recall_needs_gold() -> None:
    with pytest.raises(ValueError):
        mention_detection_recall({"q1": frozenset()}, {})


@pytest.mark.parametrize("a, b, expected", [
    ("new york", "New York City", True), ("york", "new york", True), ("new york", "new york", True),
    ("new york", "new jersey", False), ((0, 8), (0, 3), True), ((0, 3), (0, 3), True),
    ((0, 3), (4, 8), False), ((2, 6), (0, 4), False),
])
def test_mentions_match(a: object, b: object, expected: bool) -> None:
    assert mentions_match(a, b) is expected  # type: ignore[arg-type]
    assert mentions_match(b, a) is expected  # type: ignore[arg-type]


def test_mentions_of_mixed_kinds_are_rejected() -> None:
    with pytest.raises(TypeError):
        mentions_match("york", (0, 4))


GOLD = {
    "d1": [("new york", "NYC"), ("pizza", "Pizza")],
    "d2": [("obama", "Obama")],
    "d3": [("x", "X")],
}
SYSTEM = {
    "d1": [("new york city", "NYC"), ("pizza", "Pasta")],
    "d3": [("X", "X")],
    "not-in-gold": [("y", "Y")],
}


def test_tagme_annotation_micro_and_macro() -> None:
    scores = annotation_scores(GOLD, SYSTEM)
    # micro: 2 of 3 system pairs match, 2 of 4 gold pairs are found
    assert (scores.micro.p, scores.micro.r, scores.micro.f) == pytest.approx((2 / 3, 1 / 2, 4 / 7))
    # macro over d1 (1/2, 1/2), d2 (0, 0), d3 (1, 1)
    macro = scores.macro
    assert (macro.p, macro.r, macro.f, macro.f_of_means) == pytest.approx((0.5, 0.5, 0.5, 0.5))
    assert macro.queries == 3


def test_tagme_default_f_is_the_f_of_the_averaged_p_and_r() -> None:
    """d1: P 1, R 1/2 (F 2/3); d2: P 1/4, R 1 (F 2/5). Macro P 5/8, R 3/4: the default F is
    2PR/(P+R) = 15/22 (TAGME reproducibility study); the mean per-document F, 8/15, is labelled."""
    gold = {"d1": [("a", "A"), ("b", "B")], "d2": [("c", "C")]}
    system = {"d1": [("a", "A")], "d2": [("c", "C"), ("x", "X"), ("y", "Y"), ("z", "Z")]}
    scores = annotation_scores(gold, system)
    assert scores.f == pytest.approx(15 / 22)
    assert scores.as_dict() == {
        "micro": pytest.approx({"P": 2 / 5, "R": 2 / 3, "F": 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3)}),
        "macro": pytest.approx({"P": 5 / 8, "R": 3 / 4, "F": 15 / 22, "F_mean_per_document": 8 / 15})}


def test_tagme_empty_document_cases() -> None:
    """A document with no gold annotation: nothing returned scores P = R = 1, anything returned
    P = R = 0 (Eq. 2-3); a gold document missing from the system output counts as empty."""
    assert annotation_scores({"d": []}, {}).as_dict()["macro"] == {"P": 1.0, "R": 1.0, "F": 1.0,
                                                                   "F_mean_per_document": 1.0}
    assert annotation_scores({"d": []}, {"d": [("a", "A")]}).as_dict()["micro"] == {"P": 0.0, "R": 0.0, "F": 0.0}
    assert annotation_scores({"d": [("a", "A")]}, {}).as_dict()["micro"] == {"P": 0.0, "R": 0.0, "F": 0.0}


def test_tagme_annotation_with_offsets() -> None:
    scores = annotation_scores({"d": [((0, 8), "NYC")]}, {"d": [((0, 3), "NYC"), ((4, 8), "NYC")]})
    assert (scores.micro.p, scores.micro.r) == (1.0, 1.0)


def test_tagme_topics() -> None:
    gold = {d: [e for _, e in pairs] for d, pairs in GOLD.items()}
    system = {"d1": ["NYC", "NYC", "Pasta"], "d3": ["X"]}
    scores = topics_scores(gold, system)
    assert (scores.micro.p, scores.micro.r) == pytest.approx((2 / 3, 2 / 4))
    assert (scores.macro.p, scores.macro.r, scores.macro.f) == pytest.approx((0.5, 0.5, 0.5))


def test_position_aware_wikification() -> None:
    expected = {"doc1": [(0, 5, "A"), (6, 10, NOT_IN_KB), (11, 15, "B")], "doc2": [(0, 3, "D")]}
    actual = {"doc1": [(0, 5, "A"), (6, 10, NOT_IN_KB), (11, 14, "B"), (20, 25, "C")],
              "doc3": [(0, 1, "Z")]}
    scores = wikification_scores(expected, actual)
    assert (scores.overall.p, scores.overall.r) == (0.5, 0.5)
    assert (scores.per_document["doc1"].p, scores.per_document["doc1"].r) == (0.5, 2 / 3)
    assert (scores.per_document["doc2"].p, scores.per_document["doc2"].r) == (0.0, 0.0)
    assert set(scores.per_document) == {"doc1", "doc2"}


def test_not_in_kb_must_match_exactly() -> None:
    scores = wikification_scores({"d": [(0, 4, NOT_IN_KB)]}, {"d": [(0, 4, "A")]})
    assert scores.overall.f == 0.0


def test_wikification_rejects_bad_offsets() -> None:
    with pytest.raises(ValueError, match="bad offsets"):
        wikification_scores({"d": [(4, 4, "A")]}, {})


CLASSES = [{"1", "2", "3"}, {"4", "5"}, {"6"}]
DOCS = set().union(*CLASSES)


def test_weps_all_in_one_baseline_has_inverse_purity_one() -> None:
    scores = score_clustering([DOCS], CLASSES)
    assert scores.inverse_purity == 1.0
    assert scores.purity == 3 / 6  # the largest class's share
    assert scores.f_05 == pytest.approx(2 / 3)
    assert scores.f_02 == pytest.approx(5 / 6)


def test_weps_one_in_one_baseline_has_purity_one() -> None:
    scores = score_clustering([{d} for d in sorted(DOCS)], CLASSES)
    assert scores.purity == 1.0
    assert scores.inverse_purity == 3 / 6  # number of classes / number of documents
    assert scores.f_05 == pytest.approx(2 / 3)
    assert scores.f_02 == pytest.approx(5 / 9)


def test_weps_alpha_02_favours_all_in_one() -> None:
    all_in_one = score_clustering([DOCS], CLASSES)
    one_in_one = score_clustering([{d} for d in DOCS], CLASSES)
    assert all_in_one.f_02 > one_in_one.f_02


def test_weps_perfect_and_mixed_clustering() -> None:
    assert score_clustering(CLASSES, CLASSES).f_02 == 1.0
    clusters = [{"1", "2", "4"}, {"3"}, {"5", "6"}]
    assert purity(clusters, CLASSES) == pytest.approx(4 / 6)
    assert inverse_purity(clusters, CLASSES) == pytest.approx(4 / 6)
    assert f_alpha(0.5, 1.0, 0.2) == pytest.approx(1 / (0.2 / 0.5 + 0.8))
    assert f_alpha(0.0, 1.0, 0.5) == 0.0


def test_weps_macro_average_over_test_cases() -> None:
    scores = macro_clustering({"all": ([DOCS], CLASSES),
                               "one": ([{d} for d in DOCS], CLASSES)})
    assert (scores.purity, scores.inverse_purity) == (0.75, 0.75)
    assert scores.f_05 == pytest.approx(2 / 3)
    assert scores.f_02 == pytest.approx((5 / 6 + 5 / 9) / 2)


def test_weps_documents_must_agree() -> None:
    with pytest.raises(ValueError, match="different documents"):
        score_clustering([{"1"}], [{"1", "2"}])


def test_spearman() -> None:
    gold = {("a", "b"): 1.0, ("a", "c"): 2.0, ("b", "c"): 3.0, ("c", "d"): 4.0}
    result = spearman(gold, {("a", "b"): 10, ("a", "c"): 20, ("b", "c"): 40, ("c", "d"): 30})
    assert result.rho == pytest.approx(1 - 6 * 2 / (4 * 15))
    assert result.n == 4
    assert spearman(gold, {k: -v for k, v in gold.items()}).rho == pytest.approx(-1.0)
    assert math.isnan(spearman(gold, {k: 1.0 for k in gold}).rho)


def test_spearman_needs_the_same_keys() -> None:
    with pytest.raises(ValueError, match="keys differ"):
        spearman({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "b": 2.0})
