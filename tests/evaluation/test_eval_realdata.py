"""The published Y-ERD, ERD-dev and DBpedia-Entity v2 files (read from ELQUERY_DATA)."""

import os
from pathlib import Path

import pytest

from elquery.evaluation import evaluate_interpretations, evaluate_rankings, read_elq, read_trec_qrels
from elquery.evaluation.cli import main

DATA = Path(os.environ.get("ELQUERY_DATA", Path(__file__).resolve().parents[2] / ".." / "shared"
                           / "data"))


def data_file(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"data file {path} not found (set ELQUERY_DATA to the shared data folder)")
    return path


@pytest.mark.parametrize("collection, queries, interpretations", [
    ("y-erd", 2398, 1267), ("erd-dev", 91, 54)])
def test_elq_qrels_parse(collection: str, queries: int, interpretations: int) -> None:
    qrels = read_elq(data_file("elq", collection, "qrels-elq.txt"))
    assert len(qrels) == queries
    assert sum(len(i) for i in qrels.values()) == interpretations


@pytest.mark.parametrize("collection", ["y-erd", "erd-dev"])
def test_run_made_from_qrels_scores_one(collection: str) -> None:
    qrels = read_elq(data_file("elq", collection, "qrels-elq.txt"))
    result = evaluate_interpretations(qrels, qrels)
    for aggregate in (result.strict, result.entity, result.lean):
        assert aggregate.as_dict() == {"P": 1.0, "R": 1.0, "F": 1.0, "F_of_means": 1.0}


def test_run_with_one_query_missing(tmp_path: Path) -> None:
    qrels_path = data_file("elq", "erd-dev", "qrels-elq.txt")
    qrels = read_elq(qrels_path)
    with_gold = next(q for q in sorted(qrels) if qrels[q])
    without_gold = next(q for q in sorted(qrels) if not qrels[q])
    n = len(qrels)
    for dropped, expected in ((with_gold, (n - 1) / n), (without_gold, 1.0)):
        run_path = tmp_path / f"run-{dropped}.txt"
        lines = qrels_path.read_text(encoding="utf-8").splitlines()
        run_path.write_text("".join(line + "\n" for line in lines
                                    if line.split("\t")[0] != dropped), encoding="utf-8")
        result = evaluate_interpretations(qrels, read_elq(run_path))
        assert result.queries == n
        for aggregate in (result.strict, result.entity, result.lean):
            assert aggregate.p == aggregate.r == aggregate.f == pytest.approx(expected)
            assert aggregate.f_of_means == pytest.approx(expected)
        assert result.per_query[dropped].strict.f == (0.0 if qrels[dropped] else 1.0)


def test_cli_on_real_qrels(capsys: pytest.CaptureFixture[str]) -> None:
    qrels = data_file("elq", "y-erd", "qrels-elq.txt")
    assert main(["evaluate", "elq", "--qrels", str(qrels), "--run", str(qrels),
                 "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"queries": 2398' in out


@pytest.mark.parametrize("collection, queries", [("y-erd", 1256), ("erd-dev", 45)])
def test_elq_entity_qrels_parse_as_trec(collection: str, queries: int) -> None:
    qrels = read_trec_qrels(data_file("elq", collection, "qrels-er.txt"))
    assert len(qrels) == queries


def test_dbpedia_entity_v2_qrels_and_ideal_run() -> None:
    qrels = read_trec_qrels(data_file("dbpedia-entity-v2", "qrels-v2.txt"))
    assert len(qrels) == 467
    assert sum(len(j) for j in qrels.values()) == 49280
    ideal = {q: {d: float(rel) for d, rel in judged.items()} for q, judged in qrels.items()}
    result = evaluate_rankings(qrels, ideal, ["map", "ndcg@10", "ndcg", "mrr", "Success@1"])
    assert result.queries == 467
    assert result.aggregate == {"map": 1.0, "ndcg@10": 1.0, "ndcg": 1.0, "mrr": 1.0,
                                "Success@1": 1.0}
