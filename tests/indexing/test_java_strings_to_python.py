"""User text that begins with U+FEFF or U+FFFE comes back from Java exactly. pyjnius decodes a Java
string as UTF-16 and takes its first character for a byte-order mark: it drops a leading U+FEFF,
and after a leading U+FFFE decodes the rest byte-swapped (``"\\ufffeab"`` -> ``"愀戀"``). So every
path where such text crosses from Java hands it over as UTF-8 bytes; these tests build a real
index (``build_dbpedia_index``) from a dump holding it and read it back through each of them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import index_without_ltr_texts
from elquery.indexing.build_index import build_dbpedia_index
from elquery.indexing.entity_documents import spill
from elquery.kb.entity_index import EntityIndex
from elquery.kb.jvm import java_class, utf8_texts
from elquery.kb.normalize import normalize
from elquery.linking.ltr.stored import NormalizedTexts, stored_values

R = "http://dbpedia.org/resource/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
PREDICATE = "\ufeffhttp://example.org/bomLink"
"""A predicate IRI beginning with U+FEFF (N-Triples allows it: the character is no delimiter)."""
SWAPPED_PREDICATE = "\ufffehttp://example.org/swappedLink"
ENTITIES = {  # id -> (label, comment)
    "<dbpedia:Bom>": ("\ufeffBom label", "\ufeffA comment that begins with U+FEFF."),
    "<dbpedia:Swapped>": ("\ufffeSwapped label", "\ufffeA comment that begins with U+FFFE."),
    "<dbpedia:Target>": ("Target", "The entity both link to."),
}
DUMP = "".join(
    f'<{R}{entity[9:-1]}> <{LABEL}> "{label}"@en .\n<{R}{entity[9:-1]}> <{COMMENT}> "{comment}"@en .\n'
    for entity, (label, comment) in ENTITIES.items()
) + f"<{R}Bom> <{PREDICATE}> <{R}Target> .\n<{R}Swapped> <{SWAPPED_PREDICATE}> <{R}Target> .\n"


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("bom")
    (work / "dumps").mkdir()
    (work / "dumps" / "dbpedia_en.ttl").write_text(DUMP, encoding="utf-8")
    build_dbpedia_index([work / "dumps"], work / "index", workers=1, relations=True)
    return work / "index"


@pytest.fixture(scope="module")
def index(index_path: Path) -> Iterator[EntityIndex]:
    with EntityIndex(index_path) as opened:
        yield opened


@pytest.mark.parametrize("entity", ENTITIES)
def test_stored_fields_come_back_exactly(index: EntityIndex, entity: str) -> None:
    label, comment = ENTITIES[entity]
    document = index.document(entity)
    assert document is not None
    assert (document["id"], document["names"], document["title"], document["short_abstract"]) == (
        entity, label, label, comment)


def test_stored_values_come_back_exactly(index: EntityIndex) -> None:
    docids = [index.docid(entity) for entity in ENTITIES]
    assert stored_values(index, docids, ("title", "short_abstract")) == list(ENTITIES.values())


def test_stored_values_of_many_documents_in_one_call(index: EntityIndex) -> None:
    """``IndexAccess.storedValues``: docids x fields texts in the order asked (a docid may repeat),
    "" for a field the document does not store, nothing for no docid."""
    stored = java_class("org.elquery.index.IndexAccess").storedValues
    docids = [index.docid(entity) for entity in ENTITIES]
    asked = [docids[2], docids[0], docids[2]]
    assert utf8_texts(stored(index.reader, asked, ["short_abstract", "no_such_field", "id"])) == [
        text for docid in asked for text in (ENTITIES[index.entity_ids[docid]][1], "", index.entity_ids[docid])]
    assert utf8_texts(stored(index.leaf, [], ["title"])) == []


@pytest.mark.parametrize("mapped", [True, False], ids=["ltr_texts.bin", "stored fields"])
def test_normalized_titles_and_abstracts(index_path: Path, tmp_path: Path, mapped: bool) -> None:
    """The build's ``ltr_texts.bin`` (normalized from the stored fields as Java hands them over),
    and the stored fields of an index without it, give the normalized label and comment."""
    path = index_path if mapped else index_without_ltr_texts(index_path, tmp_path / "old")
    with EntityIndex(path) as opened:
        assert bool(opened.metadata.get("ltr_texts")) is mapped
        found = NormalizedTexts(opened).texts([opened.docid(entity) for entity in ENTITIES])
    assert found == [((normalize(label),), normalize(comment)) for label, comment in ENTITIES.values()]


def test_relation_predicates_come_back_exactly(index: EntityIndex, index_path: Path) -> None:
    assert index.relating_predicates("<dbpedia:Target>") == sorted([PREDICATE, SWAPPED_PREDICATE])
    recorded = json.loads((index_path / "elquery.json").read_text(encoding="utf-8"))["relation_predicates"]
    assert recorded == {PREDICATE: [1, 1], SWAPPED_PREDICATE: [1, 1]}
    for predicate in (PREDICATE, SWAPPED_PREDICATE):
        assert index.related_docids("<dbpedia:Target>", predicate).tolist() == [
            index.docid("<dbpedia:Bom>" if predicate == PREDICATE else "<dbpedia:Swapped>")]


def test_predicate_statistics_read_from_the_index(index_path: Path, tmp_path: Path) -> None:
    """An index whose ``elquery.json`` does not record them: read from the typed relations terms."""
    copy = tmp_path / "index"
    copy.mkdir()
    for file in index_path.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    metadata = json.loads((copy / "elquery.json").read_text(encoding="utf-8"))
    del metadata["relation_predicates"]
    (copy / "elquery.json").write_text(json.dumps(metadata), encoding="utf-8")
    with EntityIndex(copy) as opened:
        statistics = opened.predicate_statistics()
    assert {p: (s.entities, s.links) for p, s in statistics.items()} == {PREDICATE: (1, 1), SWAPPED_PREDICATE: (1, 1)}


@pytest.mark.parametrize("mark", ["\ufeff", "\ufffe"])
def test_malformed_line_reports_name_the_file_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      mark: str) -> None:
    """A dump named on the command line relative to the working folder, its name beginning with
    the mark: the report of its malformed line begins with that name."""
    monkeypatch.chdir(tmp_path)
    dump = Path(f"{mark}dbpedia_en.ttl")
    dump.write_text(f'<{R}A> <{LABEL}> "A"@en .\nnot a statement\n', encoding="utf-8")
    report = spill([dump], tmp_path / "spill", 2).report.file(dump)
    assert (report.triples, report.malformed) == (1, 1)
    assert len(report.errors) == 1 and re.match(rf"{re.escape(str(dump))}:2: ", report.errors[0])
