"""``/rank`` with the ELR models: the links a request gives, or, without them, the service's own
linking, the same rankings as ``elquery link --format jsonl`` then ``elquery rank --links`` on the
demo knowledge base indexed with its relations; links refused where they do not apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.cli import main as elquery
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.demo import demo_artefacts, dumps
from elquery.retrieval import Searcher
from elquery.retrieval.models import model_from_name
from elquery.retrieval.scoring import LinkedQuery
from elquery.serve.app import Artefacts, Limits, create_app

QUERIES = {"a": "new york pizza manhattan", "b": "obama mother", "c": "the music man"}


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("serve-elr")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(root / "cache"))
        _, surface_forms = demo_artefacts()
    build_dbpedia_index(dumps(), root / "index", relations=True)
    return root / "index", surface_forms


@pytest.fixture(scope="module")
def client(artefacts: tuple[Path, Path]) -> TestClient:
    return TestClient(create_app(Artefacts(*artefacts), Limits(max_batch=5)))


def _ranking(run: Path) -> dict[str, list[tuple[str, float]]]:
    rankings: dict[str, list[tuple[str, float]]] = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        qid, _, entity, _, score, _ = line.split()
        rankings.setdefault(qid, []).append((entity, float(score)))
    return rankings


@pytest.mark.parametrize("model", ["sdm-elr", "fsdm-elr", "mlm-elr"])
def test_service_links_then_ranks_as_the_two_commands(client: TestClient, artefacts: tuple[Path, Path],
                                                      tmp_path: Path, model: str) -> None:
    index, surface_forms = artefacts
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(QUERIES), encoding="utf-8")
    given = ["--index", str(index), "--queries", str(queries)]
    assert elquery(["link", *given, "--surface-forms", str(surface_forms), "--method", "cmns", "--format", "jsonl",
                    "--out", str(tmp_path / "links.jsonl")]) == 0
    assert elquery(["rank", *given, "--links", str(tmp_path / "links.jsonl"), "--model", model, "--k", "5",
                    "--out", str(tmp_path / "run"), "--workers", "1"]) == 0
    expected = _ranking(tmp_path / "run")
    assert any(json.loads(line)["interpretations"] for line in (tmp_path / "links.jsonl").read_text().splitlines())
    served = client.post("/rank", json={"queries": QUERIES, "model": model, "k": 5, "method": "cmns"}).json()["results"]
    for result in served:
        ranking = [(r["entity"], r["score"]) for r in result["ranking"]]
        assert [e for e, _ in ranking] == [e for e, _ in expected[result["qid"]]]
        assert [s for _, s in ranking] == pytest.approx([s for _, s in expected[result["qid"]]], rel=1e-12)


def test_given_links_rank_as_the_api(client: TestClient, artefacts: tuple[Path, Path]) -> None:
    links = [{"entity": "Manhattan", "score": 0.7}, {"entity": "<dbpedia:New_York_City>", "score": 0.3}]
    served = client.post("/rank", json={"q": "pizza", "model": "sdm-elr", "k": 5, "links": links}).json()
    with Searcher(artefacts[0]) as searcher:
        direct = searcher.rank(LinkedQuery("pizza", (("Manhattan", 0.7), ("<dbpedia:New_York_City>", 0.3))),
                               model_from_name("sdm-elr", {}), 5)
    assert served["results"][0]["ranking"] == [{"rank": r.rank, "entity": r.entity, "score": r.score} for r in direct]
    plain = client.post("/rank", json={"q": "pizza", "model": "sdm-elr", "k": 5, "links": []}).json()
    assert plain["results"][0]["ranking"] != served["results"][0]["ranking"]  # the links change the ranking
    by_qid = client.post("/rank", json={"queries": {"x": "pizza"}, "model": "sdm-elr", "k": 5,
                                         "links": {"x": links}}).json()
    assert by_qid["results"][0]["ranking"] == served["results"][0]["ranking"]


@pytest.mark.parametrize(("body", "message"), [
    ({"q": "pizza", "model": "mlm", "links": []}, "links go with the ELR models"),
    ({"q": "pizza", "model": "sdm-elr", "links": [{"entity": "No_such_entity_here", "score": 1}]}, "not in the index"),
    ({"q": "pizza", "model": "sdm-elr", "links": [{"entity": "Manhattan"}]}, "must be a list of"),
    ({"q": "pizza", "model": "sdm-elr", "links": [{"entity": "Manhattan", "score": -1}]}, "score"),
    ({"q": "pizza", "model": "sdm-elr", "links": "Manhattan"}, "links: expected"),
])
def test_bad_links_are_refused(client: TestClient, body: dict[str, object], message: str) -> None:
    answer = client.post("/rank", json=body)
    assert answer.status_code == 422 and message in answer.json()["error"], answer.json()
