"""Adding a method is one definition plus one registration (issue 28.1): a linking method and a
retrieval model registered here, and nowhere else, are served by ``elquery serve`` as
``elquery link`` and ``elquery rank`` run them: /link and /rank answer what the command line
writes, refuse what it refuses with its message, and the OpenAPI schema, the page's menu and
/stats name them. (tests/linking/test_linking_registry.py sees the method at the command line,
the Python API, params files and experiment configs.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.cli import main as elquery
from elquery.experiments.config import load_config
from elquery.linking.methods import METHODS
from elquery.registry import Parameter
from elquery.retrieval.models import MODELS, RetrievalModel, lm
from elquery.retrieval.searcher import Searcher
from elquery.serve.app import Artefacts, Limits, create_app
from new_entries import SQUARED  # tests/new_entries.py, on the path as pytest loads it

QUERY = "new york pizza manhattan"

NAMES_LM = RetrievalModel(
    "lm-names", "LM (names)", "query likelihood of the names field, Jelinek-Mercer smoothed",
    (Parameter("lambda", float, 0.5, "the collection model's weight", minimum=0.0, open_minimum=True, maximum=1.0),),
    lambda values: lm("names", values["lambda"]))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The demo KB's index and surface forms in a temporary ``ELQUERY_CACHE``."""
    from elquery.indexing.demo import demo_artefacts

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("new-entries")))
        yield demo_artefacts()


@pytest.fixture()
def registered(demo: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> TestClient:
    """SQUARED and NAMES_LM registered (for this test only), and the service over the demo KB
    made after."""
    monkeypatch.setattr(METHODS, "_entries", {**METHODS._entries, SQUARED.name: SQUARED})
    monkeypatch.setattr(MODELS, "_entries", {**MODELS._entries, NAMES_LM.name: NAMES_LM})
    return TestClient(create_app(Artefacts(*demo, demo_thresholds=True), Limits()))


def command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        status = elquery(argv)
    except SystemExit as exit:
        status = int(exit.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_a_registered_method_is_served_as_elquery_link_runs_it(registered: TestClient,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = command(["link", QUERY, "--method", "cmns2", "--format", "jsonl"], capsys)
    assert status == 0
    written = json.loads(out)
    assert [m["score"] for m in written["mentions"]] == [m["commonness"] ** 2 for m in written["mentions"]] != []
    served = registered.get("/link", params={"q": QUERY, "method": "cmns2"}).json()["results"]
    assert served == [written]
    posted = registered.post("/link", json={"q": QUERY, "method": "cmns2", "gif_threshold": 0.7}).json()["results"]
    status, out, _ = command(["link", QUERY, "--method", "cmns2", "--gif-threshold", "0.7", "--format", "jsonl"], capsys)
    assert status == 0 and posted == [json.loads(out)] and posted != served
    # refused as on the command line, with its message
    status, _, err = command(["link", QUERY, "--method", "cmns2", "--gif-threshold", "-1"], capsys)
    message = "cmns2: gif_threshold must be 0 <= gif_threshold, got -1"
    assert (status, err) == (2, f"elquery: error: {message}\n")
    answer = registered.get("/link", params={"q": QUERY, "method": "cmns2", "gif_threshold": "-1"})
    assert (answer.status_code, answer.json()) == (422, {"error": message})
    # the schema, the page's menu and /stats name it
    parameters = {p["name"]: p for p in registered.get("/openapi.json").json()["paths"]["/link"]["get"]["parameters"]}
    assert "cmns2" in parameters["method"]["schema"]["enum"]
    assert "cmns2: default 0.05" in parameters["gif_threshold"]["description"]
    assert ("cmns2", "CMNS²") in re.findall(r'<option value="([^"]+)">([^<]+)</option>', registered.get("/").text)
    thresholds = registered.get("/stats").json()["thresholds"]["cmns2"]
    assert thresholds == {"c": {"value": 0.2, "origin": "default"}, "s": {"value": 0.05, "origin": "default"}}


def test_a_registered_model_is_served_as_elquery_rank_runs_it(registered: TestClient, demo: tuple[Path, Path],
                                                              tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = demo[0]
    queries, run = tmp_path / "q.tsv", tmp_path / "run.txt"
    queries.write_text(f"q1\t{QUERY}\n", encoding="utf-8")
    argv = ["rank", "--index", str(index), "--queries", str(queries), "--out", str(run), "--workers", "1",
            "--model", "lm-names", "--param", "lambda=0.3", "--k", "5"]
    assert command(argv, capsys)[0] == 0
    written = [line.split() for line in run.read_text(encoding="utf-8").splitlines()]
    with Searcher(index) as searcher:
        expected = searcher.rank(QUERY, lm("names", 0.3), 5)
    assert [(int(rank), entity) for _, _, entity, rank, _, _ in written] == [(r.rank, r.entity) for r in expected]
    assert {tag for *_, tag in written} == {"elquery-lm-names"}
    served = registered.post("/rank", json={"q": QUERY, "model": "lm-names", "params": ["lambda=0.3"], "k": 5})
    assert [(r["rank"], r["entity"], r["score"]) for r in served.json()["results"][0]["ranking"]] == \
        [(r.rank, r.entity, r.score) for r in expected]
    # refused as on the command line, with its message
    status, _, err = command([*argv[:-4], "--param", "lambda=0"], capsys)
    message = "lm-names: lambda must be 0 < lambda <= 1, got 0"
    assert (status, err) == (2, f"elquery: error: {message}\n")
    answer = registered.get("/rank", params={"q": QUERY, "model": "lm-names", "params": "lambda=0"})
    assert (answer.status_code, answer.json()) == (422, {"error": message})
    # the schema and an experiment config name it
    parameters = {p["name"]: p for p in registered.get("/openapi.json").json()["paths"]["/rank"]["get"]["parameters"]}
    assert "lm-names" in parameters["model"]["schema"]["enum"] and "lm-names: " in parameters["params"]["description"]
    config = tmp_path / "er.toml"
    config.write_text('knowledge_base = "demo"\nqueries = "q.tsv"\n[entity_retrieval]\nqrels = "qrels.txt"\n'
                      '[[entity_retrieval.methods]]\nmodel = "lm-names"\nparams = { lambda = [0.3, 0.6] }\n',
                      encoding="utf-8")
    spec = load_config(config).entity_retrieval
    assert spec is not None and spec.methods[0].method == "lm-names"
