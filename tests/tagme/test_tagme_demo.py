"""TAGME on the bundled demo knowledge base: its dumps (anchor texts, page links, long abstracts,
page ids) are real-format files about the demo's own entities, its artefact is built on first use
beside the demo index and surface forms, and ``elquery link --method tagme`` needs no artefact
argument."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from elquery.cli import main as elquery
from elquery.indexing.demo import demo_artefacts, demo_knowledge_base, demo_tagme
from elquery.kb.demo import DEMO_DIR, tagme_dumps
from elquery.indexing.ntriples import ParseReport, read_triples

ONTOLOGY = "http://dbpedia.org/ontology/"


def _triples(name: str) -> list[tuple[str, str, str]]:
    report = ParseReport()
    triples = [(t.subject, t.predicate, t.object) for t in read_triples(DEMO_DIR / name, report)]
    lines = [line for line in (DEMO_DIR / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert report.malformed == 0 and len(triples) == len(lines), name
    return triples


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_demo_tagme_dumps_describe_the_demo_entities() -> None:
    entities = {s for s, _, _ in _triples("short_abstracts_en.nt")}
    assert len(entities) == 54
    anchors = _triples("anchor_text_en.nt")
    links = _triples("page_links_en.nt")
    abstracts = _triples("long_abstracts_en.nt")
    page_ids = _triples("page_ids_en.nt")
    assert {p for _, p, _ in anchors} == {ONTOLOGY + "wikiPageWikiLinkText"}
    assert {p for _, p, _ in links} == {ONTOLOGY + "wikiPageWikiLink"}
    assert {p for _, p, _ in abstracts} == {ONTOLOGY + "abstract"}
    assert {p for _, p, _ in page_ids} == {ONTOLOGY + "wikiPageID"}
    # every link is between two demo pages, no page links itself, and each link has its anchor text
    assert {s for s, _, _ in links} | {o for _, _, o in links} <= entities
    assert all(s != o for s, _, o in links) and len(set(links)) == len(links)
    assert Counter(target for target, _, _ in anchors) == Counter(o for _, _, o in links)
    # a long abstract per entity, which begins with its short abstract (DBpedia's short abstract is
    # the long one's first sentences)
    short = {s: o for s, _, o in _triples("short_abstracts_en.nt")}
    assert {s: o[:len(short[s])] for s, _, o in abstracts} == short
    # a distinct Wikipedia page id per entity
    assert {s for s, _, _ in page_ids} == entities
    assert len({int(o) for _, _, o in page_ids}) == 54
    assert set(tagme_dumps()) >= {DEMO_DIR / n for n in ("anchor_text_en.nt", "page_links_en.nt",
                                                          "long_abstracts_en.nt", "page_ids_en.nt")}


def test_the_demo_tagme_artefact_is_built_beside_the_other_demo_artefacts(cache: Path) -> None:
    from elquery.indexing.build_outputs import KINDS

    index, surface_forms, tagme = demo_knowledge_base()
    assert tagme.parent == index.parent == surface_forms.parent and tagme.parent.parent == cache
    assert demo_artefacts() == (index, surface_forms)
    assert KINDS["TAGME artefact"](tagme)
    assert sorted(p.name for p in tagme.parent.iterdir()) == sorted([index.name, surface_forms.name, tagme.name])
    modified = tagme.stat().st_mtime_ns
    assert demo_tagme() == tagme and tagme.stat().st_mtime_ns == modified  # built once


def _jsonl(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    capsys.readouterr()
    assert elquery(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_link_method_tagme_works_without_artefact_arguments(cache: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert elquery(["link", "--method", "tagme", "new york pizza manhattan"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    qid, _, *entities = out[0].split("\t")
    assert qid == "q1" and entities == ["<dbpedia:New_York-style_pizza>", "<dbpedia:Manhattan>"]
    # the relatedness of Woody Allen picks the 1979 film for "manhattan"
    record = _jsonl(["link", "--method", "tagme", "woody allen manhattan", "--format", "jsonl"], capsys)
    annotations = record["interpretations"][0]["annotations"]
    assert [(a["mention"]["text"], a["entity"]) for a in annotations] == [
        ("woody allen", "<dbpedia:Woody_Allen>"), ("manhattan", "<dbpedia:Manhattan_(film)>")]
    # the same as over the artefact `elquery index tagme` builds from the demo's dumps
    built = tmp_path / "tagme"
    assert elquery(["index", "tagme", "--dumps", *map(str, tagme_dumps()), "--out", str(built)]) == 0
    given = _jsonl(["link", "--method", "tagme", "--tagme", str(built), "woody allen manhattan", "--format", "jsonl"],
                   capsys)
    assert "tagme" in given.pop("provenance")["artefacts"]  # the demo knowledge base's runs name no artefact
    assert record == given


def test_tagme_options_of_other_methods_are_still_refused_on_the_demo(cache: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert elquery(["link", "--method", "tagme", "pizza", "--gif-threshold", "0.5"]) == 2
    assert "not options of --method tagme: --gif-threshold" in capsys.readouterr().err
    assert not cache.exists()  # refused before anything was built
