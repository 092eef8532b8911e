"""Rank metrics against hand-computed trec_eval values and pytrec_eval (trec_eval's code).

trec_eval semantics checked here: a run is ordered by score descending, ties by docid
descending (the rank column is ignored); unjudged documents are non-relevant; relevant means
relevance >= 1 and nDCG gains are the graded relevance values with a log2(rank + 1) discount;
queries are evaluated when in both run and qrels (without -c); queries whose qrels hold no
relevant entity are skipped (methods.md section 7).
"""

from math import log2
from pathlib import Path

import pytest

from elquery.base import ElqueryError
import pytrec_eval
from ir_measures import AP, RR, P, R, Success, nDCG

from elquery.evaluation import evaluate_rankings, parse_metric, read_trec_qrels, read_trec_run

QRELS_TEXT = """\
q1 0 d1 1
q1 0 d2 0
q1 0 d3 2
q1 0 d5 1
q2 0 d1 0
q3 0 d9 1
q5 0 d1 1
q5 0 d2 1
"""
# q1: d4 is unjudged; d1, d2, d3 tie at 2.0; the rank column is deliberately misleading.
RUN_TEXT = """\
q1 Q0 d1 1 2.0 run
q1 Q0 d2 2 2.0 run
q1 Q0 d3 3 2.0 run
q1 Q0 d4 4 3.0 run
q1 Q0 d5 5 1.0 run
q2 Q0 d1 1 1.0 run
q4 Q0 d1 1 1.0 run
q5 Q0 d1 1 0.1 run
q5 Q0 d3 2 0.5 run
q5 Q0 d2 3 0.9 run
"""

# trec_eval order of q1: d4 (3.0), d3, d2, d1 (ties, docid descending), d5.
# Relevance by rank: 1 unjudged, 2 rel 2, 3 non-relevant, 4 rel 1, 5 rel 1; 3 relevant.
Q1 = {
    "map": (1 / 2 + 2 / 4 + 3 / 5) / 3,
    "mrr": 1 / 2,
    "success@1": 0.0,
    "p@5": 3 / 5,
    "p@10": 3 / 10,
    "ndcg@5": (2 / log2(3) + 1 / log2(5) + 1 / log2(6)) / (2 / log2(2) + 1 / log2(3)
                                                          + 1 / log2(4)),
}
# q5 order: d2 (rel), d3 (unjudged), d1 (rel).
Q5 = {
    "map": (1 + 2 / 3) / 2,
    "mrr": 1.0,
    "success@1": 1.0,
    "p@5": 2 / 5,
    "p@10": 2 / 10,
    "ndcg@5": (1 + 1 / log2(4)) / (1 + 1 / log2(3)),
}
METRICS = list(Q1)


@pytest.fixture()
def files(tmp_path: Path) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    (tmp_path / "qrels").write_text(QRELS_TEXT)
    (tmp_path / "run").write_text(RUN_TEXT)
    return read_trec_qrels(tmp_path / "qrels"), read_trec_run(tmp_path / "run")


def test_hand_computed_trec_eval_values(files) -> None:  # type: ignore[no-untyped-def]
    qrels, run = files
    result = evaluate_rankings(qrels, run, METRICS, complete=False)
    assert result.queries == 2
    assert sorted(result.per_query) == ["q1", "q5"]
    for name in METRICS:
        assert result.per_query["q1"][name] == pytest.approx(Q1[name])
        assert result.per_query["q5"][name] == pytest.approx(Q5[name])
        assert result.aggregate[name] == pytest.approx((Q1[name] + Q5[name]) / 2)


def test_equal_to_pytrec_eval(files) -> None:  # type: ignore[no-untyped-def]
    qrels, run = files
    names = {"map": "map", "mrr": "recip_rank", "success@1": "success_1", "p@5": "P_5",
             "p@10": "P_10", "ndcg@5": "ndcg_cut_5"}
    direct = pytrec_eval.RelevanceEvaluator(qrels, set(names.values())).evaluate(run)
    result = evaluate_rankings(qrels, run, METRICS)
    for qid in ("q1", "q5"):
        for ours, theirs in names.items():
            assert result.per_query[qid][ours] == pytest.approx(direct[qid][theirs], abs=1e-12)


def test_judged_queries_missing_from_the_run_score_0_by_default(files) -> None:  # type: ignore[no-untyped-def]
    qrels, run = files
    result = evaluate_rankings(qrels, run, ["map", "mrr"])
    assert result.queries == 3
    assert result.per_query["q3"] == {"map": 0.0, "mrr": 0.0}
    assert result.aggregate["map"] == pytest.approx((Q1["map"] + Q5["map"]) / 3)
    assert "q2" not in result.per_query


def test_count_measures_are_summed(files) -> None:  # type: ignore[no-untyped-def]
    qrels, run = files
    result = evaluate_rankings(qrels, run, ["NumRet", "Judged@5"])
    assert result.aggregate["NumRet"] == 8
    assert result.per_query["q1"]["Judged@5"] == pytest.approx(4 / 5)


def test_no_evaluable_query_is_an_error() -> None:
    with pytest.raises(ElqueryError, match="no query"):
        evaluate_rankings({"q1": {"d1": 0}}, {"q1": {"d1": 1.0}}, ["map"])


def test_metric_named_twice_is_an_error() -> None:
    with pytest.raises(ElqueryError, match="twice"):
        evaluate_rankings({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["map", "map"])


@pytest.mark.parametrize("name, measure", [
    ("AP@100", AP @ 100), ("P@10", P @ 10), ("nDCG@10", nDCG @ 10), ("RR", RR),
    ("Success@1", Success @ 1), ("map", AP), ("MAP", AP), ("map@100", AP @ 100), ("mrr", RR),
    ("mrr@10", RR @ 10), ("ndcg", nDCG), ("ndcg@10", nDCG @ 10), ("NDCG@20", nDCG @ 20),
    ("p@10", P @ 10), ("success@5", Success @ 5), ("s@1", Success @ 1), ("r@100", R @ 100),
    ("recall@50", R @ 50), (" map ", AP),
])
def test_metric_names_and_aliases(name: str, measure: object) -> None:
    assert parse_metric(name) == measure


@pytest.mark.parametrize("name, words", [
    ("foo", "unknown metric 'foo'"), ("p", "needs a cutoff"), ("map@x", "unknown metric"),
    ("", "unknown metric"),
])
def test_bad_metric_names(name: str, words: str) -> None:
    with pytest.raises(ElqueryError, match=words):
        parse_metric(name)
