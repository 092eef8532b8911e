"""pos1 (methods.md section 9: the offset, in characters, of the first run of the mention's whole
tokens in the entity's normalized short abstract, 1000 if none) over abstracts of 1-, 2-, 3- and
4-byte UTF-8 characters: Java searches the mention's UTF-8 in the bytes of ``ltr_texts.bin`` and
counts the characters before the match; here the offset is Python's ``str.find`` in code points
over the abstract as the test decodes it from the file. An index without ``ltr_texts.bin`` (the
texts passed to Java as strings) gives the same rows. Repeated queries give the same rows too
(their terms' dictionary entries then come from the index's term cache)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import index_without_ltr_texts
from elquery.linking.ltr import FEATURES, FeatureExtractor

RESOURCE = "<http://dbpedia.org/resource/{}>".format
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
COMMENT = "<http://www.w3.org/2000/01/rdf-schema#comment>"

ENTITIES = {  # resource: (label, short abstract), already normalized (lower case, letters and digits)
    "Rome": ("rome", "café ωmega 𠀋 北京 strasse rome is here and rome again"),
    "Zurich": ("zürich", "𐌰𐌱 zürich lies by the lake"),
    "Romeo": ("romeo", "romeos and xromeo but no whole token"),
    "Paris": ("paris", "paris is first"),
    "Ext_B": ("𠀋𠀌", "é 𠀋 𠀋𠀌 tail"),
    "Lake_Bled": ("lake bled", "ünïcödé then lake bled and lake"),
}
QUERIES = ["rome", "zürich lake", "romeo", "paris rome", "𠀋𠀌", "lake bled rome", "rome zürich paris"]


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.surface_forms.build import BuildOptions, build_store

    dumps = tmp_path_factory.mktemp("utf8-dumps")
    labels = [f'{RESOURCE(r)} {LABEL} "{label}"@en .' for r, (label, _) in ENTITIES.items()]
    comments = [f'{RESOURCE(r)} {COMMENT} "{abstract}"@en .' for r, (_, abstract) in ENTITIES.items()]
    (dumps / "labels_en.ttl").write_text("\n".join(labels) + "\n", encoding="utf-8")
    (dumps / "short_abstracts_en.ttl").write_text("\n".join(comments) + "\n", encoding="utf-8")
    root = tmp_path_factory.mktemp("utf8-artefacts")
    build_dbpedia_index([dumps], root / "index", workers=1)
    build_store(root / "sf.db", BuildOptions((dumps,), anchors=False, workers=1, progress=False))
    return root / "index", root / "sf.db"


def abstracts(index: Path) -> dict[str, str]:
    """Each entity's normalized short abstract, decoded here from ``ltr_texts.bin``."""
    ids = (index / "entity_ids.txt").read_text(encoding="utf-8").split()
    offsets = np.load(index / "ltr_text_offsets.npy").tolist()
    data = (index / "ltr_texts.bin").read_bytes()
    return {entity: data[offsets[2 * d + 1]:offsets[2 * d + 2]].decode("utf-8") for d, entity in enumerate(ids)}


def rows(extractor: FeatureExtractor, query: str) -> dict[tuple[str, str], list[float]]:
    pairs, matrix = extractor.extract(query)
    return {(p.mention.text, p.entity): row.tolist() for p, row in zip(pairs, matrix)}


def test_pos1_counts_characters_before_the_mention_in_any_utf8(artefacts: tuple[Path, Path]) -> None:
    index, surface_forms = artefacts
    texts = abstracts(index)
    assert texts["<dbpedia:Rome>"] == ENTITIES["Rome"][1]  # the build kept every character
    pos1 = FEATURES.index("pos1")
    checked = set()
    with FeatureExtractor(index, surface_forms, 0.0) as extractor:
        for query in QUERIES:
            for (mention, entity), row in rows(extractor, query).items():
                found = f" {texts[entity]} ".find(f" {mention} ")
                assert row[pos1] == (found if found >= 0 else 1000), (query, mention, entity)
                checked.add((mention, entity, row[pos1]))
    assert {("rome", "<dbpedia:Rome>", 24), ("zürich", "<dbpedia:Zurich>", 3), ("romeo", "<dbpedia:Romeo>", 1000),
            ("paris", "<dbpedia:Paris>", 0), ("𠀋𠀌", "<dbpedia:Ext_B>", 4),
            ("lake bled", "<dbpedia:Lake_Bled>", 13)} <= checked


def test_the_same_rows_from_strings_and_from_a_repeated_query(artefacts: tuple[Path, Path], tmp_path: Path) -> None:
    index, surface_forms = artefacts
    older = index_without_ltr_texts(index, tmp_path / "index")
    with FeatureExtractor(index, surface_forms, 0.0) as mapped, FeatureExtractor(older, surface_forms, 0.0) as given:
        for query in QUERIES:
            first = rows(mapped, query)
            assert first and rows(mapped, query) == first == rows(given, query), query
