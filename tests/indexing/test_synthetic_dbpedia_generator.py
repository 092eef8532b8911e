"""benchmarks/synthetic_dbpedia.py, which the indexing, retrieval and linking benchmarks share:
deterministic, parseable by elquery.indexing.ntriples, and consistent with what it reports."""

from __future__ import annotations

import bz2
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from elquery.indexing.entity_documents import title_text
from elquery.indexing.ntriples import ParseReport, read_triples
from elquery.kb.entities import entity_id

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import synthetic_dbpedia  # noqa: E402

LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
COMMENT = "http://www.w3.org/2000/01/rdf-schema#comment"
REDIRECT = "http://dbpedia.org/ontology/wikiPageRedirects"


@pytest.fixture(scope="module")
def small_chunks() -> None:
    old = synthetic_dbpedia.CHUNK
    synthetic_dbpedia.CHUNK = 250  # several chunks from a few entities (chunks are cut in the parent)
    yield
    synthetic_dbpedia.CHUNK = old


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory, small_chunks: None) -> synthetic_dbpedia.GeneratedDumps:
    return synthetic_dbpedia.generate(tmp_path_factory.mktemp("synthetic"), 1000, seed=7, extras=True, processes=2)


def test_same_output_whatever_the_number_of_processes(
    generated: synthetic_dbpedia.GeneratedDumps, tmp_path: Path, small_chunks: None
) -> None:
    again = synthetic_dbpedia.generate(tmp_path, 1000, seed=7, extras=True, processes=1)
    for name, path in generated.files.items():
        assert bz2.decompress(path.read_bytes()) == bz2.decompress(again.files[name].read_bytes()), name
    other_seed = synthetic_dbpedia.generate(tmp_path / "other", 1000, seed=8, processes=1)
    assert other_seed.files["labels_en"].read_bytes() != generated.files["labels_en"].read_bytes()


def test_files_are_named_like_dbpedia_and_parse_cleanly(generated: synthetic_dbpedia.GeneratedDumps) -> None:
    names = {p.name for p in generated.dumps}
    assert names == {f"{n}.ttl.bz2" for n in (*synthetic_dbpedia.CORE_DATASETS, *synthetic_dbpedia.EXTRA_DATASETS)}
    for name, path in generated.files.items():
        report = ParseReport()
        count = sum(1 for _ in read_triples(path, report))
        assert report.malformed == 0, report.summary_lines()
        assert count == generated.triples[name] > 0, name


def test_reported_facts_match_the_files(generated: synthetic_dbpedia.GeneratedDumps) -> None:
    predicates: dict[str, set[str]] = defaultdict(set)
    labels: dict[str, str] = {}
    for path in generated.core_dumps:
        for triple in read_triples(path):
            predicates[triple.subject].add(triple.predicate)
            if triple.predicate == LABEL:
                labels[triple.subject] = triple.object
    indexable = {s for s, p in predicates.items() if {LABEL, COMMENT} <= p}
    assert len(indexable) == generated.indexable
    assert sum(1 for s, p in predicates.items() if REDIRECT in p) == generated.redirects
    expected = {generated.entity_id(i) for i in range(generated.entities) if generated.is_indexable(i)}
    assert {entity_id(s) for s in indexable} == expected
    # every entity has its label; a label is the title text except for percent-escaped titles
    for i in range(generated.entities):
        iri = "http://dbpedia.org/resource/" + generated.title(i)
        assert labels[iri] == generated.label(i) == title_text(iri)
    assert len(set(generated.title(i) for i in range(generated.entities))) == generated.entities
    assert any(":" in generated.title(i) for i in range(generated.entities))
    assert any("%22" in generated.title(i) for i in range(generated.entities))
    assert len(generated.vocabulary) > 10_000


def test_reuse_and_load(generated: synthetic_dbpedia.GeneratedDumps) -> None:
    loaded = synthetic_dbpedia.load(generated.out_dir)
    assert loaded is not None
    assert (loaded.entities, loaded.indexable, loaded.files, loaded.triples) == (
        generated.entities, generated.indexable, generated.files, generated.triples)
    assert loaded.title(123) == generated.title(123)
    before = generated.files["labels_en"].stat().st_mtime_ns
    reused = synthetic_dbpedia.generate(generated.out_dir, 1000, seed=7, extras=True, reuse=True)
    assert reused.files["labels_en"].stat().st_mtime_ns == before
