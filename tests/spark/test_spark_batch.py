"""Batch linking and ranking on Spark (``--engine spark``, and the DataFrame API) against the local
engine, on the real DBpedia sample with the Y-ERD queries: the same run files byte for byte, the
DataFrame rows equal to the JSONL records and TREC lines of the local run; the worker pool's run
text equal to the in-process one; bad combinations of flags as one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SPARK_MASTER as MASTER  # tests/conftest.py, on the path as pytest loads it
from elquery.cli import main as elquery
from elquery.evaluation.readers import read_jsonl
from elquery.linking import batch
from elquery.linking.linker import Linker
from elquery.linking.output import RunFormat


@pytest.fixture(scope="module")
def yerd(elq_data: Path) -> list[tuple[str, str]]:
    return list(json.loads((elq_data / "y-erd" / "queries.json").read_text(encoding="utf-8")).items())


def _link(sample_link_artefacts: tuple[Path, Path], out: Path, *extra: str) -> None:
    index, sf = sample_link_artefacts
    assert elquery(["link", "--index", str(index), "--surface-forms", str(sf), "--gif-threshold", "0.25",
                    "--out", str(out), *extra]) == 0


@pytest.mark.parametrize(("method", "fmt"), [("mlmcg", "elq"), ("cmns", "jsonl"), ("mlm", "trec")])
def test_link_runs_equal_the_local_engine(spark, sample_link_artefacts, elq_data: Path, tmp_path: Path, method: str, fmt: str) -> None:
    queries = str(elq_data / "y-erd" / "queries.json")
    common = ["--queries", queries, "--method", method, "--format", fmt]
    _link(sample_link_artefacts, tmp_path / "local", *common)
    _link(sample_link_artefacts, tmp_path / "spark", *common, "--engine", "spark", "--master", MASTER)
    local = (tmp_path / "local").read_bytes()
    assert local and (tmp_path / "spark").read_bytes() == local
    if fmt != "jsonl":  # the sidecar of the run's sample_link_artefacts and parameters, the same from both engines
        assert (tmp_path / "spark.meta.json").read_text() == (tmp_path / "local.meta.json").read_text()


def test_worker_pool_text_equals_in_process(sample_link_artefacts, yerd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "MIN_QUERIES_PER_WORKER", 1)  # two workers for a small batch
    monkeypatch.setattr(batch, "CHUNK", 7)  # many chunks, several in flight
    linker = Linker(*sample_link_artefacts, gif_threshold=0.25)
    run_format = RunFormat("elq", "t")
    serial = [run_format(linker.result(query, qid)) for qid, query in yerd]
    assert list(linker.link_many(yerd, workers=2, encode=run_format)) == serial
    results = list(linker.link_many(yerd[:20], workers=2))  # the Python API's results, not text
    assert [r.qid for r in results] == [qid for qid, _ in yerd[:20]]
    assert list(map(run_format, results)) == serial[:20]


@pytest.mark.parametrize("level", ["mentions", "interpretations", "ranking"])
def test_link_dataframe_rows_are_the_jsonl_records(spark, sample_link_artefacts, yerd, tmp_path: Path, level: str) -> None:
    from elquery.linking.spark import link_dataframe

    linker = Linker(*sample_link_artefacts, gif_threshold=0.25)
    frame = link_dataframe(spark.createDataFrame(yerd, "qid string, query string"), linker, level)
    rows = [row.asDict(recursive=True) for row in frame.collect()]
    records = [json.loads(RunFormat("jsonl", "t")(linker.result(query, qid))) for qid, query in yerd]
    expected = []
    for record in records:
        for number, item in enumerate(record[level]):
            if level == "interpretations":
                expected.append({"qid": record["qid"], "interpretation": number, "score": item["score"],
                                 "annotations": item["annotations"]})
            elif level == "ranking":
                expected.append({"qid": record["qid"], "rank": number + 1, **item})
            else:
                expected.append({"qid": record["qid"], **item})
    assert expected and rows == expected


def _rank(index: Path, queries: Path, out: Path, *extra: str) -> None:
    assert elquery(["rank", "--index", str(index), "--queries", str(queries), "--k", "20", "--out", str(out),
                    *extra]) == 0


@pytest.mark.parametrize("model", ["mlm", "bm25", "sdm"])
def test_rank_runs_equal_the_local_engine(spark, sample_link_artefacts, yerd, tmp_path: Path, model: str) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{qid}\t{query}\n" for qid, query in yerd), encoding="utf-8")
    _rank(sample_link_artefacts[0], queries, tmp_path / "local.run", "--model", model, "--workers", "2")
    _rank(sample_link_artefacts[0], queries, tmp_path / "spark.run", "--model", model, "--engine", "spark", "--master", MASTER)
    local = (tmp_path / "local.run").read_text()
    assert local and (tmp_path / "spark.run").read_text() == local


def test_rank_dataframe_rows_are_the_run_lines(spark, sample_link_artefacts, yerd, tmp_path: Path) -> None:
    from elquery.retrieval.spark import rank_dataframe

    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{qid}\t{query}\n" for qid, query in yerd), encoding="utf-8")
    _rank(sample_link_artefacts[0], queries, tmp_path / "local.run", "--workers", "1")
    expected = []
    for line in (tmp_path / "local.run").read_text().splitlines():
        qid, _, entity, rank, score, _ = line.split()
        expected.append((qid, int(rank), entity, score))
    frame = rank_dataframe(spark.createDataFrame(yerd, "qid string, query string"), sample_link_artefacts[0], k=20)
    rows = [(r.qid, r.rank, r.entity, r.score) for r in frame.collect()]
    assert len(rows) == len(expected) > 0
    assert [row[:3] for row in rows] == [row[:3] for row in expected]
    # the run nudges a tie below the score written before it (elquery.formats.trec_run.run_scores), by one ulp
    assert [row[3] for row in rows] == pytest.approx([float(row[3]) for row in expected], rel=1e-12)


@pytest.mark.parametrize(("command", "flags", "message"), [
    ("link", ["--master", "local[2]"], "--master goes with --engine spark"),
    ("link", ["--engine", "spark", "--workers", "2"], "--workers goes with --engine local"),
    ("rank", ["--engine", "spark", "--workers", "2"], "--workers goes with --engine local"),
])
def test_engine_flag_errors(sample_link_artefacts, tmp_path: Path, command: str, flags: list[str], message: str) -> None:
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tmanhattan\n", encoding="utf-8")
    index, sf = sample_link_artefacts
    given = ["--index", str(index), "--queries", str(queries), "--out", str(tmp_path / "out")]
    if command == "link":
        given += ["--surface-forms", str(sf)]
    done = subprocess.run([sys.executable, "-m", "elquery", command, *given, *flags], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(f"elquery: error: {message}"), done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_spark_submit_runs_the_documented_command(spark, sample_link_artefacts, elq_data: Path, tmp_path: Path) -> None:
    """The README's cluster command, ``spark-submit ... elquery/__main__.py link --engine spark``, on
    a local master: the driver joins spark-submit's session and writes the local engine's run."""
    import os

    import pyspark

    import elquery
    from elquery.spark import java_home

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    main = Path(elquery.__file__).with_name("__main__.py")
    queries = str(elq_data / "y-erd" / "queries.json")
    _link(sample_link_artefacts, tmp_path / "local", "--queries", queries)
    index, sf = sample_link_artefacts
    environment = {**os.environ, "JAVA_HOME": str(java_home()), "PYSPARK_PYTHON": sys.executable,
                   "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run([str(submit), "--master", MASTER, str(main), "link", "--index", str(index),
                           "--surface-forms", str(sf), "--gif-threshold", "0.25", "--queries", queries,
                           "--engine", "spark", "--out", str(tmp_path / "submitted")],
                          capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "submitted").read_bytes() == (tmp_path / "local").read_bytes()
