"""``elquery serve`` with no arguments serves the demo knowledge base with its TAGME artefact: the
published ``tagme`` Python client, pointed at the service's /tag and /spot, gets the demo's
annotations (Wikipedia titles and page ids as the demo's dumps give them), and /link's method
tagme answers as ``elquery link --method tagme``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from elquery.cli import main as elquery
from elquery.indexing.demo import DEMO_DIR
from elquery.indexing.ntriples import read_triples
from conftest import elquery_serve  # tests/conftest.py, on the path as pytest loads it


def _page_ids() -> dict[str, int]:
    """Wikipedia title -> page id, read straight from the demo's page_ids and labels dumps."""
    labels = {t.subject: t.object for t in read_triples(DEMO_DIR / "labels_en.nt")}
    return {labels[t.subject]: int(t.object) for t in read_triples(DEMO_DIR / "page_ids_en.nt")}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("elquery-cache-serve-tagme"))


@pytest.fixture(scope="module")
def service(cache: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``elquery serve`` with no arguments, on a free loopback port."""
    with elquery_serve([], tmp_path_factory.mktemp("serve-cwd"), cache, 120) as (port, _):
        yield f"http://127.0.0.1:{port}"


def test_the_tagme_client_gets_the_demo_annotations(service: str) -> None:
    tagme = pytest.importorskip("tagme", reason="the published TAGME client (pip install tagme)")
    ids = _page_ids()
    text = "New York pizza in Manhattan"
    answer = tagme.annotate(text, gcube_token="not checked", api=service + "/tag")
    assert answer is not None
    found = [(a.mention, a.begin, a.end, a.entity_title, a.entity_id) for a in answer.annotations]
    assert found == [("New York pizza", 0, 14, "New York-style pizza", ids["New York-style pizza"]),
                     ("Manhattan", 18, 27, "Manhattan", ids["Manhattan"])]
    assert all(a.score > 0 for a in answer.annotations) and answer.lang == "en"
    # a title is the page's title, percent-escapes of the entity id decoded
    cafe = tagme.annotate("café wha? greenwich village", gcube_token="x", api=service + "/tag")
    assert {(a.entity_title, a.entity_id) for a in cafe.annotations} == {
        ("Café Wha?", ids["Café Wha?"]), ("Greenwich Village", ids["Greenwich Village"])}
    spots = tagme.mentions(text, gcube_token="x", api=service + "/spot")
    assert {(m.mention, m.begin, m.end) for m in spots.mentions} >= {("New York pizza", 0, 14), ("Manhattan", 18, 27)}
    assert all(m.linkprob > 0 for m in spots.mentions)


def test_tag_by_get_and_post_with_tagme_parameters(service: str) -> None:
    params = {"text": "total recall arnold schwarzenegger", "lang": "en", "gcube-token": "x"}
    got = httpx.get(service + "/tag", params=params).json()
    posted = httpx.post(service + "/tag", data=params).json()
    for answer in (got, posted):
        assert {(a["spot"], a["title"], a["dbpedia_id"]) for a in answer["annotations"]} == {
            ("total recall", "Total Recall (1990 film)", "<dbpedia:Total_Recall_(1990_film)>"),
            ("arnold schwarzenegger", "Arnold Schwarzenegger", "<dbpedia:Arnold_Schwarzenegger>")}
    assert got["annotations"] == posted["annotations"]


def test_link_method_tagme_answers_as_the_cli(service: str, cache: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ELQUERY_CACHE", cache)
    query = "woody allen manhattan"
    served = httpx.get(service + "/link", params={"q": query, "method": "tagme"}).json()["results"]
    assert elquery(["link", "--method", "tagme", query, "--format", "jsonl"]) == 0
    assert served == [json.loads(capsys.readouterr().out)]
    assert [a["entity"] for a in served[0]["interpretations"][0]["annotations"]] == [
        "<dbpedia:Woody_Allen>", "<dbpedia:Manhattan_(film)>"]
    stats = httpx.get(service + "/stats").json()
    assert stats["tagme"] == str(Path(cache) / Path(stats["index"]["path"]).parent.name / "tagme")
