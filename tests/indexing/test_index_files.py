"""The one writer of the files beside a Lucene index (indexing/index_files.py): what it writes for
a small index with every kind of field, against values counted here from the documents, and that
nothing else in the repository writes those files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from elquery.indexing.entity_documents import EntityDocument
from elquery.indexing.index_files import finish_index
from elquery.indexing.lucene_writer import EntityIndexWriter
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import (
    ANALYZER_NAME,
    ENTITY_COUNTS,
    FORMAT_VERSION,
    IDS_FILE,
    ID_RANK_FILE,
    LTR_FIELDS,
    LTR_TEXT_OFFSETS_FILE,
    LTR_TEXTS_FILE,
    METADATA_FILE,
    RELATIONS_FIELD,
    TEXT_FIELDS,
    count_file,
    length_file,
)

REPO = Path(__file__).resolve().parents[2]
P1, P2 = "http://dbpedia.org/ontology/p1", "http://dbpedia.org/ontology/p2"
# lower-case words, none an English stop word: the analyzer's tokens are the words split on spaces
DOCUMENTS = [
    EntityDocument("<dbpedia:Zeta>", ("zeta river",), ("long river valley", "river delta"),
                   (("<dbpedia:Alpha>", P1), ("<dbpedia:Alpha>", P2), ("<dbpedia:Gamma>", P1)),
                   title=("zeta",), short_abstract=("river",), categories=("rivers europe",), redirects=2, links=3),
    EntityDocument("<dbpedia:Alpha>", ("alpha",), ("mountain",), (), title=("alpha peak",), links=1),
    EntityDocument("<dbpedia:Beta>", ("beta town", "old beta"), ("town river",), (("<dbpedia:Zeta>", P2),),
                   long_abstract=("small town near river",), wiki_links=("zeta",), redirects=1),
]


def _tokens(document: EntityDocument, field: str) -> list[str]:
    return [token for value in getattr(document, field) for token in value.split()]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished") / "index"
    out.mkdir()
    writer = EntityIndexWriter(out, relations=True, ltr=True)
    writer.add_all(DOCUMENTS)
    writer.close(merge=True)
    finish_index(out, writer.written, ["http://example.org/p"])
    return out


def test_ids_lengths_and_counts_in_docid_order(finished: Path) -> None:
    assert (finished / IDS_FILE).read_text(encoding="utf-8") == "<dbpedia:Zeta>\n<dbpedia:Alpha>\n<dbpedia:Beta>\n"
    for field in TEXT_FIELDS:
        lengths = np.load(finished / length_file(field))
        assert lengths.dtype == np.int32 and lengths.tolist() == [len(_tokens(d, field)) for d in DOCUMENTS]
    relations = np.load(finished / length_file(RELATIONS_FIELD))
    assert relations.tolist() == [len({e for e, _ in d.relations}) for d in DOCUMENTS] == [2, 0, 1]
    for name in ENTITY_COUNTS:
        assert np.load(finished / count_file(name)).tolist() == [getattr(d, name) for d in DOCUMENTS]


def test_entity_id_rank_is_each_docids_place_in_id_order(finished: Path) -> None:
    # docids 0, 1, 2 are Zeta, Alpha, Beta: in id order Alpha (1), Beta (2), Zeta (0)
    rank = np.load(finished / ID_RANK_FILE)
    assert rank.dtype == np.dtype("<i4") and rank.tolist() == [2, 0, 1]


def test_entity_id_rank_orders_by_code_point(tmp_path: Path) -> None:
    """Python's string order (code points: upper case before lower, 'Z' before 'a', 'é' after
    'z'), not a collation; ids that are prefixes of others come first."""
    ids = ["<dbpedia:b>", "<dbpedia:a_(x)>", "<dbpedia:é>", "<dbpedia:Z>", "<dbpedia:a>", "<dbpedia:z>"]
    from elquery.indexing.index_files import id_rank

    # in code-point order: Z (90) < a < a_(x) < b < z < é (233)
    assert id_rank(ids).tolist() == [3, 2, 5, 0, 1, 4]


def test_metadata_with_the_statistics_of_the_lucene_index(finished: Path) -> None:
    fields = {field: {"tokens": sum(len(_tokens(d, field)) for d in DOCUMENTS),
                      "terms": len({t for d in DOCUMENTS for t in _tokens(d, field)})} for field in TEXT_FIELDS}
    assert json.loads((finished / METADATA_FILE).read_text(encoding="utf-8")) == {
        "format": FORMAT_VERSION,
        "analyzer": ANALYZER_NAME,
        "entities": 3,
        "content_predicates": ["http://example.org/p"],
        "entity_id_rank": True,
        "relations": True,
        "ltr_fields": True,
        "entity_counts": {"redirects": {"sum": 3, "entities": 2}, "links": {"sum": 4, "entities": 2}},
        "fields": fields,
        "ltr_texts": True,
        # entities with a related id, (entity, id) pairs, distinct ids
        "relation_statistics": {"entities": 2, "links": 3, "targets": 3},
        # per predicate: entities relating through it, (entity, id) pairs through it
        "relation_predicates": {P1: [1, 2], P2: [2, 2]},
    }
    with EntityIndex(finished) as index:
        assert index.text_fields == TEXT_FIELDS and index.has_relations


def test_the_normalized_titles_and_short_abstracts_in_docid_order(finished: Path) -> None:
    """``ltr_texts.bin``: per docid its titles, one a line, then its short abstract, normalized;
    ``ltr_text_offsets.npy`` the byte offsets (Beta has neither)."""
    offsets = np.load(finished / LTR_TEXT_OFFSETS_FILE)
    assert offsets.dtype == np.dtype("<i8") and offsets.tolist() == [0, 4, 9, 19, 19, 19, 19]
    assert (finished / LTR_TEXTS_FILE).read_bytes() == b"zetariveralpha peak"
    assert not list(finished.glob("*.partial"))


def test_an_index_without_relations_or_ltr_fields_says_so(tmp_path: Path) -> None:
    out = tmp_path / "index"
    out.mkdir()
    writer = EntityIndexWriter(out)
    writer.add_all(DOCUMENTS)
    writer.close(merge=True)
    finish_index(out, writer.written)
    metadata = json.loads((out / METADATA_FILE).read_text(encoding="utf-8"))
    assert sorted(metadata) == ["analyzer", "content_predicates", "entities", "entity_id_rank", "fields", "format"]
    assert sorted(p.name for p in out.glob("*.npy")) == ["content_length.npy", "entity_id_rank.npy", "names_length.npy"]
    assert not (out / LTR_TEXTS_FILE).exists()
    assert not any(field in metadata["fields"] for field in LTR_FIELDS)


def test_no_other_code_writes_the_files_beside_an_index() -> None:
    """Every writer of the ids file, the length and count arrays and ``elquery.json`` of an index (a
    module naming them through :mod:`elquery.kb.index_format`) is :mod:`elquery.indexing.index_files`,
    but for the tests that damage a copy of an index on purpose (a broken ``elquery.json``, an id
    file out of step, side files that do not match)."""
    writes = re.compile(r"(IDS_FILE|METADATA_FILE)\)\.write_|np\.save\([^)]*(length_file\(|count_file\(|ID_RANK_FILE)")
    sources = [p for part in ("indexing", "retrieval", "linking", "elquery", "benchmarks", "tests")
               for p in (REPO / part).rglob("*.py") if p.name != Path(__file__).name]
    writers = sorted(str(p.relative_to(REPO)) for p in sources
                     if "index_format import" in (text := p.read_text(encoding="utf-8")) and writes.search(text))
    assert writers == ["indexing/index_files.py", "tests/indexing/test_entity_id_lookup.py",
                       "tests/retrieval/test_retrieval_side_files.py", "tests/test_paths_before_work.py"]
