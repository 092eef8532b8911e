"""``elquery rank`` end to end: DBpedia-Entity v2 queries against the real DBpedia sample index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elquery.cli import main as elquery_main
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.entity_index import EntityIndex
from elquery.retrieval.cli import main
from elquery.retrieval.queries import read_queries


@pytest.fixture(scope="module")
def sample_index(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli-sample") / "index"
    build_dbpedia_index([dbpedia_sample], out, workers=1)
    return out


@pytest.fixture(scope="module")
def queries_v2(dbpedia_sample: Path) -> Path:
    path = dbpedia_sample.parent / "dbpedia-entity-v2" / "queries-v2.txt"
    if not path.exists():
        pytest.skip(f"DBpedia-Entity v2 queries not found at {path}")
    return path


def check_run(run: Path, queries: Path, index: Path, k: int, tag: str) -> list[list[str]]:
    """A valid TREC run: 6 columns, queries in file order, ranks 1..n, scores non-increasing with
    ties in entity-id order, entities from the index."""
    rows = [line.split(" ") for line in run.read_text(encoding="utf-8").splitlines()]
    assert rows and all(len(row) == 6 and row[1] == "Q0" and row[5] == tag for row in rows)
    with EntityIndex(index) as opened:
        entities = set(opened.entity_ids)
    order = [q.qid for q in read_queries(queries)]
    seen = list(dict.fromkeys(row[0] for row in rows))
    assert seen == [q for q in order if q in seen]
    for qid in seen:
        ranked = [row for row in rows if row[0] == qid]
        assert [int(row[3]) for row in ranked] == list(range(1, len(ranked) + 1)) and len(ranked) <= k
        keys = [(-float(row[4]), row[2]) for row in ranked]
        assert keys == sorted(keys)
        assert {row[2] for row in ranked} <= entities
    return rows


@pytest.mark.parametrize("model", ["mlm", "bm25", "prms", "sdm", "fsdm"])
def test_rank_queries_v2(sample_index: Path, queries_v2: Path, tmp_path: Path, model: str) -> None:
    run = tmp_path / f"{model}.run"
    argv = ["rank", "--index", str(sample_index), "--queries", str(queries_v2), "--model", model,
            "--k", "50", "--out", str(run), "--workers", "1"]
    assert elquery_main(argv) == 0
    rows = check_run(run, queries_v2, sample_index, 50, f"elquery-{model}")
    assert len({row[0] for row in rows}) > 300


def test_parallel_run_equals_serial(sample_index: Path, queries_v2: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("".join(queries_v2.read_text(encoding="utf-8").splitlines(keepends=True)[:60]), encoding="utf-8")
    runs = []
    for threads in ("1", "2"):  # two worker processes
        run = tmp_path / f"run-{threads}"
        assert main(["rank", "--index", str(sample_index), "--queries", str(queries), "--model", "bm25-mlm",
                     "--param", "depth=20", "--k", "10", "--out", str(run), "--workers", threads, "--tag", "x"]) == 0
        runs.append(run.read_text())
    assert runs[0] == runs[1]


def test_json_queries_and_params(sample_index: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps({"b": "airline", "a": "the of", "c": "roman architecture"}))
    run = tmp_path / "run"
    assert main(["rank", "--index", str(sample_index), "--queries", str(queries), "--model", "lm-dirichlet",
                 "--param", "mu=100", "--k", "5", "--out", str(run), "--workers", "1"]) == 0
    rows = check_run(run, queries, sample_index, 5, "elquery-lm-dirichlet")
    assert [row[0] for row in rows] == ["b"] * 5 + ["c"] * 5  # "the of" has no term: no line


@pytest.mark.parametrize(
    ("extra", "queries_text", "message"),
    [
        ([], "q1\tairline\nbroken line\n", "q.txt:2: expected 'qid<TAB>query'"),
        (["--param", "lambda=2"], "q1\tairline\n", "mlm: lambda must be 0 < lambda <= 1, got 2"),
        (["--model", "bm25", "--param", "mu=3"], "q1\tairline\n", "no parameter mu"),
        (["--k", "0"], "q1\tairline\n", "k must be between 1 and 100000, got 0"),
        (["--k", "100001"], "q1\tairline\n", "k must be between 1 and 100000, got 100001"),
        (["--workers", "-1"], "q1\tairline\n", "--workers must be between 1 and 256, got -1"),
        ([], "q1\tair line\nq 2\tbroken qid\n", "q.txt:2: query id 'q 2' must be non-empty and hold no whitespace"),
    ],
)
def test_user_errors(sample_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                     extra: list[str], queries_text: str, message: str) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text(queries_text)
    run = tmp_path / "run"
    argv = ["rank", "--index", str(sample_index), "--queries", str(queries), "--out", str(run), "--workers", "1"]
    try:
        status = main(argv + extra)
    except SystemExit as exit:  # an option argparse refuses (--k: the message of every door, tests/retrieval/test_retrieval_k.py)
        status = exit.code
    assert status == 2
    assert message in capsys.readouterr().err
    assert not run.exists()


def test_missing_index_and_output_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("q1\tairline\n")
    assert main(["rank", "--index", str(tmp_path / "none"), "--queries", str(queries), "--out", str(tmp_path / "r")]) == 2
    assert "none: no such entity index" in capsys.readouterr().err
    (tmp_path / "elquery.json").write_text("{}")  # passes the path check: the output's folder is refused first
    assert main(["rank", "--index", str(tmp_path), "--queries", str(queries), "--out", str(tmp_path / "no" / "r")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_output_directory_refused_before_any_ranking(sample_index: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`rank --out adir` fails at once, not after the whole ranking."""
    import elquery.retrieval.batch as rank_batch

    queries = tmp_path / "q.txt"
    queries.write_text("q1\tairline\n")
    monkeypatch.setattr(rank_batch, "ordered_map", lambda *a, **k: pytest.fail("ranking started"))
    assert main(["rank", "--index", str(sample_index), "--queries", str(queries), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(f"{tmp_path}: is a directory, not an output file\n")
