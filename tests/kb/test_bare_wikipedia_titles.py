"""A bare title is read as DBpedia 2015-10 writes its IRIs (docs/identifiers.md): the characters
DBpedia percent-encodes (``"`` as ``%22``, ``?`` as ``%3F``, a ``%`` as ``%25``) are encoded, an
escape already there is kept. So a run or qrels written with ``--entity-ids wikipedia`` (titles,
``_`` for spaces) reads back as the DBpedia ids it was written from. The first title is a real IRI
of the shared sample's ``page_links`` dump."""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest

from elquery.kb.entities import canonical_entity_id
from elquery.kb.identifiers import WrittenIds, identifiers_without_table, resolve


def test_a_real_escaped_iri_of_the_sample_round_trips(dbpedia_sample: Path) -> None:
    iri = "http://dbpedia.org/resource/Orto_Botanico_dell'Università_di_Roma_%22La_Sapienza%22"
    with bz2.open(dbpedia_sample / "page_links_en.ttl.bz2", "rt", encoding="utf-8") as dump:
        assert any(f"<{iri}>" in line for line in dump)
    entity = "<dbpedia:Orto_Botanico_dell'Università_di_Roma_%22La_Sapienza%22>"
    title = identifiers_without_table(entity).scheme("wikipedia")
    assert title == "Orto_Botanico_dell'Università_di_Roma_\"La_Sapienza\""
    assert canonical_entity_id(title) == entity == WrittenIds(None)(title) == resolve(title, None)
    assert canonical_entity_id(entity[len("<dbpedia:"):-1]) == entity  # the IRI's own title: kept


@pytest.mark.parametrize(("text", "entity"), [
    ("What Is the What?", "<dbpedia:What_Is_the_What%3F>"),
    ("What_Is_the_What%3F", "<dbpedia:What_Is_the_What%3F>"),
    ('"Weird Al" Yankovic', "<dbpedia:%22Weird_Al%22_Yankovic>"),
    ("100% Pure", "<dbpedia:100%25_Pure>"),
    ("100%25_Pure", "<dbpedia:100%25_Pure>"),
    ("Basilica_of_San_Lorenzo,_Milan", "<dbpedia:Basilica_of_San_Lorenzo,_Milan>"),
    ("General_Tso's_chicken", "<dbpedia:General_Tso's_chicken>"),
    ("<dbpedia:What_Is_the_What?>", "<dbpedia:What_Is_the_What?>"),  # an id in elquery's form: as written
])
def test_bare_titles_are_encoded_as_dbpedia_writes_them(text: str, entity: str) -> None:
    assert canonical_entity_id(text) == entity
