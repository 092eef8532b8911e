"""`elquery mcp` over the real DBpedia 2015-10 sample: its index and surface forms (the shared
fixture), a TAGME artefact and an LTR model trained here, served over stdio to the MCP client.
`link` with method ltr answers what /link?method=ltr answers over the same artefacts, `entity`
gives the dump's own short abstract (rdfs:comment, read here with pyoxigraph) and Wikipedia page
id (page_ids), and `artefacts` shows the model as /stats does."""

from __future__ import annotations

import asyncio
import bz2
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters

from elquery.cli import main as elquery
from elquery.serve.app import Artefacts, create_app

pytest.importorskip("onnx")

NAMED = {"named-1": "British Airways flights to Rome's Colosseum", "named-2": "saab 900 vs saab 9000",
         "named-3": "university of kentucky", "named-4": "sichuan hot pot in rome",
         "named-5": "lufthansa or klm to normandy", "named-6": "klm flights to the colosseum"}
NAMED_QRELS = ("named-1\t1\t<dbpedia:British_Airways>\t<dbpedia:Rome>\t<dbpedia:Colosseum>\n"
               "named-2\t1\t<dbpedia:Saab_900>\t<dbpedia:Saab_9000>\n"
               "named-3\t1\t<dbpedia:University_of_Kentucky>\n"
               "named-4\t1\t<dbpedia:Sichuan>\t<dbpedia:Hot_pot>\t<dbpedia:Rome>\n"
               "named-5\t1\t<dbpedia:Lufthansa>\t<dbpedia:KLM>\t<dbpedia:Normandy>\n"
               "named-6\t1\t<dbpedia:KLM>\t<dbpedia:Colosseum>\n")
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
PAGE_ID = "http://dbpedia.org/ontology/wikiPageID"


@pytest.fixture(scope="module")
def served(sample_link_artefacts: tuple[Path, Path], dbpedia_sample: Path,
           tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample's index and surface forms, its TAGME artefact, and a forest of 10 trees trained
    on the labelled features of the named queries."""
    index, surface_forms = sample_link_artefacts
    root = tmp_path_factory.mktemp("mcp-sample")
    queries, qrels = root / "queries.json", root / "qrels-elq.txt"
    queries.write_text(json.dumps(NAMED), encoding="utf-8")
    qrels.write_text(NAMED_QRELS, encoding="utf-8")
    features, model, tagme = root / "features.tsv", root / "model.onnx", root / "tagme"
    assert elquery(["ltr", "features", "--index", str(index), "--surface-forms", str(surface_forms),
                    "--queries", str(queries), "--qrels", str(qrels), "--out", str(features)]) == 0
    assert elquery(["ltr", "train", "--features", str(features), "--out", str(model), "--trees", "10", "--seed", "3"]) == 0
    assert elquery(["index", "tagme", "--dumps", str(dbpedia_sample), "--out", str(tagme)]) == 0
    return {"index": index, "surface_forms": surface_forms, "model": model, "tagme": tagme}


@pytest.fixture(scope="module")
def answers(served: dict[str, Path]) -> dict[str, Any]:
    arguments = ["-m", "elquery", "mcp", "--index", str(served["index"]), "--surface-forms", str(served["surface_forms"]),
                 "--tagme", str(served["tagme"]), "--model", str(served["model"])]
    calls = {"ltr": ("link", {"queries": NAMED, "method": "ltr"}),
             "ltr top": ("link", {"q": NAMED["named-1"], "method": "ltr", "top_ranked": True}),
             "mlmcg": ("link", {"queries": NAMED, "method": "mlmcg", "gif_threshold": 5}),
             "tagme": ("link", {"queries": NAMED, "method": "tagme"}),
             "rank": ("rank", {"queries": NAMED, "model": "bm25f", "k": 10}),
             "Colosseum": ("entity", {"entity": "Colosseum"}),
             "artefacts": ("artefacts", {})}

    async def run() -> dict[str, Any]:
        found: dict[str, Any] = {}
        async with Client(StdioServerParameters(command=sys.executable, args=arguments), read_timeout_seconds=180) as client:
            for label, (tool, given) in calls.items():
                result = await client.call_tool(tool, given)
                assert not result.is_error, result.content
                found[label] = result.structured_content
        return found
    return asyncio.run(run())


@pytest.fixture(scope="module")
def service(served: dict[str, Path]) -> TestClient:
    return TestClient(create_app(Artefacts(served["index"], served["surface_forms"], served["tagme"],
                                           model=served["model"])))


def test_link_with_every_method_answers_as_the_service(answers: dict[str, Any], service: TestClient) -> None:
    for label, body in (("ltr", {"queries": NAMED, "method": "ltr"}),
                        ("ltr top", {"q": NAMED["named-1"], "method": "ltr", "top_ranked": True}),
                        ("mlmcg", {"queries": NAMED, "method": "mlmcg", "gif_threshold": 5}),
                        ("tagme", {"queries": NAMED, "method": "tagme"})):
        assert answers[label] == service.post("/link", json=body).json(), label
    linked = {r["qid"]: {a["entity"] for i in r["interpretations"] for a in i["annotations"]}
              for r in answers["ltr"]["results"]}
    assert any(linked.values())  # the model links on the sample


def test_rank_answers_as_the_service(answers: dict[str, Any], service: TestClient) -> None:
    assert answers["rank"] == service.post("/rank", json={"queries": NAMED, "model": "bm25f", "k": 10}).json()


def _objects(path: Path, subject: str, predicate: str) -> list[Any]:
    import pyoxigraph

    with bz2.open(path, "rb") as handle:
        return [q.object for q in pyoxigraph.parse(handle, format=pyoxigraph.RdfFormat.N_TRIPLES)
                if q.subject.value == subject and q.predicate.value == predicate]


def test_entity_gives_the_dumps_abstract_and_page_id(answers: dict[str, Any], service: TestClient,
                                                      dbpedia_sample: Path) -> None:
    colosseum = answers["Colosseum"]
    uri = "http://dbpedia.org/resource/Colosseum"
    [comment] = _objects(dbpedia_sample / "short_abstracts_en.ttl.bz2", uri, COMMENT)
    [page_id] = _objects(dbpedia_sample / "page_ids_en.ttl.bz2", uri, PAGE_ID)
    assert colosseum["abstract"] == comment.value and colosseum["abstract"].startswith("The Colosseum or Coliseum")
    assert colosseum["ids"] == {"dbpedia": "<dbpedia:Colosseum>", "dbpedia_uri": uri, "wikipedia_title": "Colosseum",
                                "wikipedia_url": "https://en.wikipedia.org/wiki/Colosseum",
                                "wikipedia_page_id": int(page_id.value),  # the TAGME artefact's: no identifiers table
                                "freebase": None, "wikidata": None}
    assert {k: v for k, v in colosseum.items() if k != "abstract"} == service.get("/entity/Colosseum").json()


def test_artefacts_show_the_model_and_the_methods_it_serves(answers: dict[str, Any], service: TestClient) -> None:
    stats = service.get("/stats").json()
    assert answers["artefacts"]["model"] == stats["model"] and stats["model"]["trees"] == 10
    assert answers["artefacts"]["provenance"] == stats["provenance"]
    assert answers["artefacts"]["thresholds"] == stats["thresholds"]
    assert answers["artefacts"]["methods"] == ["mlmcg", "cmns", "mlm", "mlmc", "tagme", "ltr"]
