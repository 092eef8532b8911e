"""`elquery serve --model MODEL` serves learning to rank (issue 29.4, methods.md §9) on the real
DBpedia sample, with a model trained here by `elquery ltr features` and `elquery ltr train` on the
Y-ERD queries and ground truth (plus five queries about the sample's own entities, since none of
Y-ERD's ground-truth entities is among the sample's 98): /link?method=ltr answers what
`elquery link --method ltr --model M` writes (elq: LTR-greedy, GIF on the model's scores with
s = 0.3; trec: the LTR ranking; jsonl) and what `Linker(..., method="ltr", model=M)` finds; /nif
and the page offer it; /stats shows the model's metadata; a model trained on other artefacts, or
no model file at all, stops `elquery serve` in one line before the server starts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.base import run
from elquery.cli import main as elquery
from elquery.linking.linker import Linker
from elquery.linking.output import elq_lines, trec_lines
from elquery.serve.app import Artefacts, create_app
from elquery.serve.cli import register as register_serve

pytest.importorskip("onnx")

NAMED = {"named-1": "British Airways flights to Rome's Colosseum", "named-2": "saab 900 vs saab 9000",
         "named-3": "university of kentucky", "named-4": "sichuan hot pot in rome",
         "named-5": "lufthansa or klm to normandy"}
NAMED_QRELS = ("named-1\t1\t<dbpedia:British_Airways>\t<dbpedia:Rome>\t<dbpedia:Colosseum>\n"
               "named-2\t1\t<dbpedia:Saab_900>\t<dbpedia:Saab_9000>\n"
               "named-3\t1\t<dbpedia:University_of_Kentucky>\n"
               "named-4\t1\t<dbpedia:Sichuan>\t<dbpedia:Hot_pot>\t<dbpedia:Rome>\n"
               "named-5\t1\t<dbpedia:Lufthansa>\t<dbpedia:KLM>\t<dbpedia:Normandy>\n")
Y_ERD_LINKED = ["trec-2013-37_1", "yahoo-274_1", "yahoo-209_2", "yahoo-493_17", "trec-2013-31_5", "yahoo-307_1",
                "trec-2010-108_1", "yahoo-501_12", "trec-2013-52_1", "trec-2012-55_2", "yahoo-1_1"]
"""Y-ERD queries with candidate pairs on the sample (and one without: yahoo-1_1)."""
LTR_GREEDY_S = 0.3  # methods.md §9


@pytest.fixture(scope="module")
def y_erd(elq_data: Path) -> dict[str, str]:
    queries: dict[str, str] = json.loads((elq_data / "y-erd" / "queries.json").read_text(encoding="utf-8"))
    return queries


@pytest.fixture(scope="module")
def model(sample_link_artefacts: tuple[Path, Path], elq_data: Path, y_erd: dict[str, str],
          tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A forest of 20 trees trained on the labelled features of Y-ERD and the named queries."""
    index, surface_forms = sample_link_artefacts
    root = tmp_path_factory.mktemp("serve-ltr")
    queries, qrels = root / "queries.json", root / "qrels-elq.txt"
    queries.write_text(json.dumps({**y_erd, **NAMED}), encoding="utf-8")
    qrels.write_text((elq_data / "y-erd" / "qrels-elq.txt").read_text(encoding="utf-8") + NAMED_QRELS,
                     encoding="utf-8")
    features, out = root / "features.tsv", root / "model.onnx"
    assert elquery(["ltr", "features", "--index", str(index), "--surface-forms", str(surface_forms),
                    "--queries", str(queries), "--qrels", str(qrels), "--out", str(features)]) == 0
    assert elquery(["ltr", "train", "--features", str(features), "--out", str(out), "--trees", "20", "--seed", "4"]) == 0
    return out


@pytest.fixture(scope="module")
def client(sample_link_artefacts: tuple[Path, Path], model: Path) -> TestClient:
    return TestClient(create_app(Artefacts(*sample_link_artefacts, model=model)))


@pytest.fixture(scope="module")
def linked(y_erd: dict[str, str]) -> dict[str, str]:
    """The queries linked by every door: the Y-ERD ones above and the named ones."""
    return {**{qid: y_erd[qid] for qid in Y_ERD_LINKED}, **NAMED}


def served_elq(record: dict) -> list[str]:
    """The elq lines of a /link record (docs/formats.md: an interpretation per line, its score in
    shortest round-trip form and its entities in mention order; a bare qid for none)."""
    lines = [f"{record['qid']}\t{float(i['score'])!r}\t" + "\t".join(a["entity"] for a in i["annotations"])
             for i in record["interpretations"]]
    return lines or [record["qid"]]


def served_trec(record: dict, tag: str) -> list[str]:
    """The trec lines of a /link record's ranking (scores strictly decreasing, as elquery writes
    every run: a tie is broken by the next float down)."""
    import numpy as np

    lines, last = [], None
    for rank, entry in enumerate(record["ranking"], 1):
        score = float(entry["score"])
        if last is not None and score >= last:
            score = float(np.nextafter(last, -np.inf))
        last = score
        lines.append(f"{record['qid']} Q0 {entry['entity']} {rank} {score!r} {tag}")
    return lines


def cli_run(sample_link_artefacts: tuple[Path, Path], model: Path, queries: Path, fmt: str, out: Path) -> list[str]:
    index, surface_forms = sample_link_artefacts
    assert elquery(["link", "--index", str(index), "--surface-forms", str(surface_forms), "--method", "ltr",
                    "--model", str(model), "--queries", str(queries), "--format", fmt, "--out", str(out)]) == 0
    return out.read_text(encoding="utf-8").splitlines()


def test_cli_api_and_service_give_the_same_answers(client: TestClient, sample_link_artefacts: tuple[Path, Path],
                                                   model: Path, linked: dict[str, str], tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{qid}\t{text}\n" for qid, text in linked.items()), encoding="utf-8")
    served = client.post("/link", json={"queries": linked, "method": "ltr"}).json()["results"]
    assert [r["qid"] for r in served] == list(linked)
    one_by_one = [client.get("/link", params={"q": text, "qid": qid, "method": "ltr"}).json()["results"][0]
                  for qid, text in linked.items()]
    assert one_by_one == served

    elq = cli_run(sample_link_artefacts, model, queries, "elq", tmp_path / "run.elq")
    assert elq == [line for record in served for line in served_elq(record)]
    trec = cli_run(sample_link_artefacts, model, queries, "trec", tmp_path / "run.trec")
    assert trec == [line for record in served for line in served_trec(record, "elquery-ltr")]
    jsonl = [json.loads(line) for line in cli_run(sample_link_artefacts, model, queries, "jsonl", tmp_path / "run.jsonl")]
    assert [{k: v for k, v in record.items() if k != "provenance"} for record in jsonl] == served

    with Linker(*sample_link_artefacts, method="ltr", model=model) as linker:
        results = [linker.result(text, qid) for qid, text in linked.items()]
    assert [line for r in results for line in elq_lines(r)] == elq
    assert [line for r in results for line in trec_lines(r, "elquery-ltr")] == trec

    # what the test is about: answers with interpretations and rankings, not empty runs
    with_interpretations = {r["qid"] for r in served if r["interpretations"]}
    assert {"named-1", "named-3"} <= with_interpretations
    assert any(r["ranking"] for r in served if r["qid"].startswith(("trec", "yahoo")))
    for record in served:  # LTR-greedy: every annotation of an interpretation scores s = 0.3 or more
        for interpretation in record["interpretations"]:
            assert all(a["score"] >= LTR_GREEDY_S for a in interpretation["annotations"])


def test_a_request_threshold_reaches_the_ltr_linker(client: TestClient, sample_link_artefacts: tuple[Path, Path],
                                                    model: Path) -> None:
    query = NAMED["named-1"]
    with Linker(*sample_link_artefacts, method="ltr", model=model) as linker:
        scores = sorted({t.score for t in linker.result(query).scored})
    between = (scores[-2] + scores[-1]) / 2  # only the best-scoring pairs pass
    with Linker(*sample_link_artefacts, method="ltr", model=model, gif_threshold=between) as linker:
        expected = linker.result(query, "q1")
    answer = client.get("/link", params={"q": query, "method": "ltr", "gif_threshold": between}).json()["results"][0]
    assert served_elq(answer) == list(elq_lines(expected))
    assert all(a["score"] == scores[-1] for i in answer["interpretations"] for a in i["annotations"])
    top = client.get("/link", params={"q": query, "method": "ltr", "top_ranked": "true"}).json()["results"][0]
    assert [[a["entity"] for a in i["annotations"]] for i in top["interpretations"]] == [[top["ranking"][0]["entity"]]]


def test_page_schema_and_stats_offer_ltr(client: TestClient, model: Path) -> None:
    page = client.get("/").text
    assert re.findall(r'<option value="(\w+)">', page) == ["mlmcg", "cmns", "mlm", "mlmc", "ltr"]
    assert '<option value="ltr">LTR</option>' in page
    settings = json.loads(re.search(r'<script type="application/json" id="settings">(.*?)</script>', page,
                                    re.S).group(1))  # type: ignore[union-attr]
    assert settings["labels"]["ltr"] == "GIF-LTR"
    assert settings["thresholds"]["ltr"] == {"c": {"value": 0.1, "origin": "default"},
                                             "s": {"value": LTR_GREEDY_S, "origin": "default"}}
    schema = client.get("/openapi.json").json()
    method = next(p for p in schema["paths"]["/link"]["get"]["parameters"] if p["name"] == "method")
    assert "ltr" in method["schema"]["enum"]

    info = json.loads(_ltr_info(model))
    stats = client.get("/stats").json()["model"]
    assert stats["path"] == str(model)
    assert stats["feature_count"] == 28 == len(stats["features"]) and stats["features"] == info["features"]
    assert (stats["trees"], stats["seed"]) == (20, 4) == (info["forest"]["trees"], info["learner"]["seed"])
    assert stats["training"] == info["training"] and stats["artefacts"] == info["artefacts"]
    rows = [line.split("\t") for line in (model.parent / "features.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    assert {k: stats["training"][k] for k in ("file", "rows", "queries", "positives")} == {
        "file": "features.tsv", "rows": len(rows), "queries": len({r[0] for r in rows}),
        "positives": sum(r[5] == "1" for r in rows)}


def test_nif_annotates_with_ltr(client: TestClient, sample_link_artefacts: tuple[Path, Path], model: Path) -> None:
    """/nif?method=ltr: the phrases of the Linker's first LTR-greedy interpretation."""
    import pyoxigraph

    text = NAMED["named-1"]
    with Linker(*sample_link_artefacts, method="ltr", model=model) as linker:
        result = linker.result(text)
    expected = {}
    for annotation in result.interpretations[0].annotations:
        start, end = result.char_span(annotation.mention)
        expected[text[start:end]] = (start, end, "http://dbpedia.org/resource/" + annotation.entity[len("<dbpedia:"):-1])
    assert len(expected) == 3
    document = NIF.format(text=text, end=len(text))
    response = client.post("/nif?method=ltr", content=document.encode(), headers={"content-type": "text/turtle"})
    assert response.status_code == 200
    nif = "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#"
    phrases: dict[str, dict[str, str]] = {}
    for t in pyoxigraph.parse(response.content, format=pyoxigraph.RdfFormat.TURTLE):
        if t.predicate.value.startswith(nif) or t.predicate.value.endswith("taIdentRef"):
            phrases.setdefault(t.subject.value, {})[t.predicate.value.rsplit("#", 1)[1]] = t.object.value
    assert {p["anchorOf"]: (int(p["beginIndex"]), int(p["endIndex"]), p["taIdentRef"])
            for p in phrases.values() if "taIdentRef" in p} == expected


NIF = """@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://example.org/doc1#char=0,{end}> a nif:Context, nif:String, nif:RFC5147String ;
    nif:isString "{text}" ;
    nif:beginIndex "0"^^xsd:nonNegativeInteger ; nif:endIndex "{end}"^^xsd:nonNegativeInteger .
"""


def _ltr_info(model: Path) -> str:
    """``elquery ltr info MODEL``'s JSON, through the command line."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert elquery(["ltr", "info", str(model)]) == 0
    return out.getvalue()


def test_serve_model_starts_the_service_with_ltr(sample_link_artefacts: tuple[Path, Path], model: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`elquery serve --index --surface-forms --model`: the workers' application serves ltr."""
    import uvicorn

    from elquery.serve.cli import app_from_environment

    started = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda server: started.append(server.config))
    for name in ("ELQUERY_SERVE_MODEL", "ELQUERY_SERVE_INDEX", "ELQUERY_SERVE_SURFACE_FORMS", "ELQUERY_SERVE_DEMO",
                 "ELQUERY_SERVE_PARAMS", "ELQUERY_SERVE_TAGME"):
        monkeypatch.delenv(name, raising=False)
    index, surface_forms = sample_link_artefacts
    assert run([register_serve], "elquery", ["serve", "--index", str(index), "--surface-forms", str(surface_forms),
                                             "--model", str(model), "--workers", "1"]) == 0
    assert len(started) == 1
    served = TestClient(app_from_environment())
    answer = served.get("/link", params={"q": NAMED["named-3"], "method": "ltr"}).json()["results"][0]
    assert [[a["entity"] for a in i["annotations"]] for i in answer["interpretations"]] == [["<dbpedia:University_of_Kentucky>"]]
    assert served.get("/stats").json()["model"]["path"] == str(model.resolve())


def test_without_a_model_ltr_is_refused_in_one_line(sample_link_artefacts: tuple[Path, Path]) -> None:
    plain = TestClient(create_app(Artefacts(*sample_link_artefacts)))
    answer = plain.get("/link", params={"q": "rome", "method": "ltr"})
    assert (answer.status_code, answer.json()) == (422, {"error": "method ltr: the service was started without --model"})
    assert plain.get("/stats").json()["model"] is None
    assert "ltr" not in re.findall(r'<option value="(\w+)">', plain.get("/").text)


def test_a_model_of_other_artefacts_stops_serve_in_one_line(model: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The demo knowledge base (serve without --index) is not what the model was trained on."""
    import uvicorn

    from elquery.indexing.demo import demo_artefacts
    from elquery.indexing.provenance import read_provenance

    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(uvicorn.Server, "run", lambda server: pytest.fail("the server started"))
    demo_index, _ = demo_artefacts()
    trained = json.loads(_ltr_info(model))["artefacts"]["index"]
    demo_id = read_provenance(demo_index).id  # type: ignore[union-attr]
    assert trained != demo_id
    capsys.readouterr()
    assert run([register_serve], "elquery", ["serve", "--model", str(model), "--port", "1"]) == 2
    assert capsys.readouterr().err == (
        f"elquery: error: {model}: the model was trained on features of another index (provenance id {trained}, "
        f"these artefacts have {demo_id}); extract features over these artefacts and train a model on them\n")
    for bad, message in ((tmp_path / "none.onnx", "no such model file"), (model.parent / "features.tsv",
                                                                          "not an ONNX model file")):
        assert run([register_serve], "elquery", ["serve", "--model", str(bad), "--port", "1"]) == 2
        assert capsys.readouterr().err == f"elquery: error: {bad}: {message}\n"
