"""Every identifier on every output, and as input wherever an entity is named (issue 32.3), over
artefacts ``elquery build`` made from the real DBpedia sample and a Wikidata links file in
DBpedia's format: ``elquery link`` (jsonl ``ids``, ``--entity-ids`` for elq and trec, whitelists),
``elquery surface-forms aliases``, the service's ``/entity/ID``, ``/link`` and ``/rank``. The
expected page ids and mids are read here from the dump lines themselves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from conftest import sample_page_ids_and_mids, write_wikidata_links
from elquery.cli import main as elquery
from elquery.serve.app import Artefacts, Limits, create_app

WIKIDATA = {"British_Airways": "Q8691", "KLM": "Q181912", "Rome": "Q220"}
"""The QIDs the Wikidata links file written by the test gives."""


@pytest.fixture(scope="module")
def dumps(dbpedia_sample: Path) -> dict[str, dict[str, str]]:
    page_ids, mids = sample_page_ids_and_mids(dbpedia_sample)
    return {"pageid": page_ids, "freebase": mids}


@pytest.fixture(scope="module")
def artefacts(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ids-build")
    data = Path(shutil.copytree(dbpedia_sample, root / "dumps"))
    write_wikidata_links(data, WIKIDATA)
    assert elquery(["build", "--data", str(data), "--out", str(root / "art"), "--workers", "1",
                    "--min-link", "1"]) == 0
    return root / "art"


def _ids(entity: str, dumps: dict[str, dict[str, str]]) -> dict[str, object]:
    """The ``ids`` object the outputs must give ``entity``, from the dump lines."""
    title = entity[len("<dbpedia:"):-1]
    page_id = dumps["pageid"].get(title)
    return {"dbpedia": entity, "dbpedia_uri": f"http://dbpedia.org/resource/{title}",
            "wikipedia_title": title.replace("_", " "), "wikipedia_url": f"https://en.wikipedia.org/wiki/{title}",
            "wikipedia_page_id": None if page_id is None else int(page_id), "freebase": dumps["freebase"].get(title),
            "wikidata": WIKIDATA.get(title)}


def _link(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = elquery(["link", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_jsonl_gives_every_entity_its_ids(artefacts: Path, dumps: dict[str, dict[str, str]],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _link(["rome airport klm british airways", "--artefacts", str(artefacts), "--format", "jsonl"], capsys)
    record = json.loads(out)
    entries = [*record["mentions"], *record["ranking"], *(a for i in record["interpretations"] for a in i["annotations"])]
    assert status == 0 and len(entries) > 3
    for entry in entries:
        assert entry["ids"] == _ids(entry["entity"], dumps)
    british_airways = next(e for e in entries if e["entity"] == "<dbpedia:British_Airways>")
    assert british_airways["ids"]["wikidata"] == "Q8691" and british_airways["ids"]["wikipedia_page_id"] == 3970


def _written(entry: dict, scheme: str) -> str | None:
    """The id of ``entry``'s entity in ``scheme``, from its ``ids``; None when it has none."""
    ids = entry["ids"]
    return {"wikipedia": ids["wikipedia_title"].replace(" ", "_"), "dbpedia": entry["entity"],
            "pageid": None if ids["wikipedia_page_id"] is None else str(ids["wikipedia_page_id"])
            }.get(scheme, ids.get(scheme))


@pytest.mark.parametrize("scheme", ["wikipedia", "pageid", "freebase", "wikidata", "dbpedia"])
def test_trec_and_elq_write_the_scheme_asked_for(scheme: str, artefacts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query = ["architecture of croatia british airways", "--artefacts", str(artefacts)]
    _, out, _ = _link([*query, "--format", "jsonl"], capsys)
    record = json.loads(out)
    status, trec, err = _link([*query, "--format", "trec", "--entity-ids", scheme], capsys)
    assert status == 0
    written = [_written(entry, scheme) for entry in record["ranking"]]
    kept = written.count(None)  # no id in the scheme: the DBpedia id, counted
    assert [line.split(" ")[2] for line in trec.splitlines()] == [w or e["entity"] for w, e in zip(written, record["ranking"])]
    if kept:
        assert err == f"elquery link: {kept} of the entities written have no {scheme} id; they keep their DBpedia id\n"
    else:
        assert err == ""
    assert (scheme in ("freebase", "wikidata")) == (kept > 0)  # Architecture_of_Croatia has neither
    query = ["british airways london", "--artefacts", str(artefacts)]
    _, out, _ = _link([*query, "--format", "jsonl"], capsys)
    interpretations = [[_written(a, scheme) or a["entity"] for a in i["annotations"]]
                       for i in json.loads(out)["interpretations"]]
    status, elq, _ = _link([*query, "--format", "elq", "--entity-ids", scheme], capsys)
    assert status == 0 and [line.split("\t")[2:] for line in elq.splitlines()] == interpretations != []


def test_entity_ids_mistakes_are_one_line(artefacts: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = _link(["rome", "--artefacts", str(artefacts), "--format", "jsonl", "--entity-ids", "wikidata"], capsys)
    assert (status, out, len(err.splitlines())) == (2, "", 1)
    assert err.endswith("error: --entity-ids goes with --format elq or trec (jsonl gives every id under \"ids\")\n")
    index = tmp_path / "index"  # an index without the table (as `elquery index dbpedia` alone builds it)
    shutil.copytree(artefacts / "index", index)
    (index / "identifiers.db").unlink()
    status, out, err = _link(["rome", "--index", str(index), "--surface-forms", str(artefacts / "surface-forms.db"),
                              "--format", "trec", "--entity-ids", "pageid"], capsys)
    assert (status, out, len(err.splitlines())) == (2, "", 1) and "has no identifiers table" in err
    status, out, _ = _link(["british airways", "--index", str(index), "--surface-forms",
                            str(artefacts / "surface-forms.db"), "--format", "jsonl"], capsys)
    assert status == 0 and "ids" not in json.loads(out)["ranking"][0]  # no table: no ids object


def test_a_whitelist_names_entities_in_any_scheme(artefacts: Path, dumps: dict[str, dict[str, str]], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    whitelist = tmp_path / "whitelist.txt"
    whitelist.write_text(f"# ids of three schemes\nQ8691\ncurid:{dumps['pageid']['Rome']}\n{dumps['freebase']['KLM']}\n"
                         "Q8691000\nQ5\n", encoding="utf-8")
    query = ["roman architecture rome klm british airways", "--artefacts", str(artefacts), "--format", "jsonl"]
    _, out, _ = _link(query, capsys)
    everything = {e["entity"] for e in json.loads(out)["ranking"]}
    status, out, err = _link([*query, "--whitelist", str(whitelist)], capsys)
    ranked = {e["entity"] for e in json.loads(out)["ranking"]}
    assert status == 0 and ranked == everything & {"<dbpedia:British_Airways>", "<dbpedia:Rome>", "<dbpedia:KLM>"}
    assert len(ranked) == 3 and len(everything) > 3
    assert err == (f"elquery: {whitelist}: 2 ids left out, no entity has them in the index's identifiers table "
                   "(first: line 5: 'Q8691000')\n")


def test_surface_forms_aliases_by_any_id(artefacts: Path, dumps: dict[str, dict[str, str]],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    store, index = str(artefacts / "surface-forms.db"), str(artefacts / "index")
    answers = []
    for spelling in ("Q181912", dumps["freebase"]["KLM"], f"curid:{dumps['pageid']['KLM']}",
                     "https://en.wikipedia.org/wiki/KLM", "<dbpedia:KLM>"):
        capsys.readouterr()
        assert elquery(["surface-forms", "aliases", store, spelling, "--index", index, "--limit", "3"]) == 0
        answers.append(json.loads(capsys.readouterr().out))
    assert all(answer == answers[0] for answer in answers)
    assert answers[0]["entity"] == "<dbpedia:KLM>" and answers[0]["ids"] == _ids("<dbpedia:KLM>", dumps)
    assert "klm" in [a["form"] for a in answers[0]["aliases"]]
    for argv, message in ((["Q181912"], "a wikidata id needs --index"),
                          (["Q5", "--index", index], "no entity has this wikidata id"),
                          (["wikidata:KLM"], "not an entity id")):
        assert elquery(["surface-forms", "aliases", store, *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and message in err, err


@pytest.fixture(scope="module")
def client(artefacts: Path) -> TestClient:
    return TestClient(create_app(Artefacts(artefacts / "index", artefacts / "surface-forms.db", artefacts / "tagme"),
                                 Limits(max_batch=5)))


def test_service_entity_link_and_rank_give_and_take_every_id(client: TestClient, artefacts: Path,
                                                             dumps: dict[str, dict[str, str]],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    expected = client.get("/entity/<dbpedia:British_Airways>").json()
    assert expected["ids"] == _ids("<dbpedia:British_Airways>", dumps)
    for spelling in ("Q8691", "wikidata:Q8691", "/m/0198z", "m.0198z", "curid:3970", "British_Airways",
                     "https://en.wikipedia.org/wiki/British_Airways"):
        assert client.get(f"/entity/{spelling}").json() == expected, spelling
    for unknown in ("Q5", "curid:1", "m.0000"):
        answer = client.get(f"/entity/{unknown}")
        assert answer.status_code == 404 and unknown in answer.json()["error"]
    served = client.post("/link", json={"q": "british airways london"}).json()["results"][0]
    _, out, _ = _link(["british airways london", "--artefacts", str(artefacts), "--format", "jsonl"], capsys)
    assert served == {k: v for k, v in json.loads(out).items() if k != "provenance"}
    ranking = client.get("/rank", params={"q": "british airways", "k": 5}).json()["results"][0]["ranking"]
    assert ranking and all(entry["ids"] == _ids(entry["entity"], dumps) for entry in ranking)


def test_mcp_entity_tool_gives_and_takes_every_id(client: TestClient, dumps: dict[str, dict[str, str]]) -> None:
    from elquery.mcp.tools import entity_record

    service = client.app.state.service  # type: ignore[attr-defined]
    by_qid = entity_record(service, "Q181912")
    assert by_qid["entity"] == "<dbpedia:KLM>" and by_qid["ids"] == _ids("<dbpedia:KLM>", dumps)
    assert {k: v for k, v in by_qid.items() if k != "abstract"} == client.get("/entity/KLM").json()
    assert entity_record(service, dumps["freebase"]["KLM"]) == by_qid == entity_record(service, "curid:16882")


def test_rank_writes_the_scheme_asked_for(artefacts: Path, dumps: dict[str, dict[str, str]], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("a\tbritish airways\nb\tklm rome\n", encoding="utf-8")
    rank = ["rank", "--artefacts", str(artefacts), "--queries", str(queries), "--k", "4", "--out", "-"]
    capsys.readouterr()
    assert elquery(rank) == 0
    plain = [line.split(" ") for line in capsys.readouterr().out.splitlines()]
    for scheme in ("wikidata", "freebase", "pageid"):
        assert elquery([*rank, "--entity-ids", scheme]) == 0
        captured = capsys.readouterr()
        written = [line.split(" ") for line in captured.out.splitlines()]
        expected, kept = [], 0
        for fields in plain:
            other = _ids(fields[2], dumps)[{"pageid": "wikipedia_page_id"}.get(scheme, scheme)]
            kept += other is None
            expected.append([*fields[:2], fields[2] if other is None else str(other), *fields[3:]])
        assert written == expected and kept < len(plain)
        assert [line for line in captured.err.splitlines() if "keep their DBpedia id" in line] == (
            [f"elquery rank: {kept} of the entities written have no {scheme} id; they keep their DBpedia id"] if kept else [])


def test_tag_gives_each_annotation_its_ids(client: TestClient, dumps: dict[str, dict[str, str]]) -> None:
    annotations = client.get("/tag", params={"text": "british airways and klm fly to rome"}).json()["annotations"]
    assert {a["dbpedia_id"] for a in annotations} >= {"<dbpedia:British_Airways>", "<dbpedia:KLM>"}
    for annotation in annotations:
        assert annotation["ids"] == _ids(annotation["dbpedia_id"], dumps)
        assert annotation["id"] == annotation["ids"]["wikipedia_page_id"]  # TAGME's page id: the same dump


def test_the_identifiers_stage_alone(artefacts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = artefacts.parent / "dumps"
    capsys.readouterr()
    assert elquery(["build", "--data", str(data), "--out", str(tmp_path / "new"), "--stages", "identifiers"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "the identifiers go into the entity index" in err, err
    assert not (tmp_path / "new").exists()
    out = tmp_path / "art"
    shutil.copytree(artefacts, out)
    assert elquery(["build", "--data", str(data), "--out", str(out), "--stages", "identifiers"]) == 0
    assert capsys.readouterr().out == f"0 of 1 stages built -> {out}\n"  # up to date
    (out / "index" / "identifiers.db").unlink()
    assert elquery(["build", "--data", str(data), "--out", str(out), "--stages", "identifiers"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"1 of 1 stages built -> {out}\n"
    assert "identifiers: 98 entities with identifiers (98 pageid, 95 freebase, 3 wikidata); 0 malformed lines" in captured.err
    assert sorted(p.name for p in (out / "index").iterdir() if p.name.startswith((".", "identifiers"))) == ["identifiers.db"]
