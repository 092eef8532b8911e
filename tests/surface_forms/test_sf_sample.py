"""The real DBpedia 2015-10 sample (methods.md §3): anchor counts and commonness, KB aliases and
the Freebase mapping, each checked against an independent count of the dump lines."""

from __future__ import annotations

import bz2
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from elquery.kb.normalize import normalize
from elquery.indexing.ntriples import ObjectKind, ParseReport, read_triples
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms.sources import scan
from elquery.kb.surface_forms.store import SurfaceFormStore

RESOURCE = "http://dbpedia.org/resource/"
_LINE = re.compile(r'^<http://dbpedia\.org/resource/(\S+)> <([^>]+)> (?:"((?:[^"\\]|\\.)*)"@en|<([^>]+)>) \.$')


def _lines(sample: Path, dataset: str) -> list[tuple[str, str, str]]:
    """(subject title, predicate, literal text or object IRI) of a dataset, parsed independently."""
    out = []
    with bz2.open(sample / f"{dataset}.ttl.bz2", "rt", encoding="utf-8") as handle:
        for line in handle:
            match = _LINE.match(line.strip())
            if match:
                title, predicate, literal, iri = match.groups()
                out.append((title, predicate, json.loads(f'"{literal}"') if literal is not None else iri))
    return out


@pytest.fixture(scope="module")
def redirects(dbpedia_sample: Path) -> dict[str, str]:
    return {title: target[len(RESOURCE):] for title, _, target in _lines(dbpedia_sample, "transitive_redirects_en")}


@pytest.fixture(scope="module")
def anchor_lines(dbpedia_sample: Path) -> list[tuple[str, str, str]]:
    return _lines(dbpedia_sample, "anchor_text_en")


@pytest.fixture(scope="module")
def store(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "sf.db"
    build_store(out, BuildOptions(dumps=(dbpedia_sample,), anchors=True, progress=False))
    return out


def _column(db: Path, column: str) -> dict[tuple[str, str], int]:
    with SurfaceFormStore(db) as store:
        return {(p.form, p.entity): int(getattr(p, column)) for p in store.pairs() if getattr(p, column)}


def test_anchor_counts_equal_an_independent_count_of_the_lines(anchor_lines: list, store: Path, redirects: dict[str, str]) -> None:
    lines = anchor_lines
    assert len(lines) == 61854
    expected = Counter((normalize(text), f"<dbpedia:{redirects.get(title, title)}>") for title, _, text in lines if normalize(text))
    assert _column(store, "anchors") == dict(expected)
    with SurfaceFormStore(store) as sf:
        assert sf.meta["report"]["dumps"]["empty_forms"] == 1  # an anchor text without letters or digits


def test_rome_has_three_targets(anchor_lines: list, store: Path) -> None:
    counts = Counter(f"<dbpedia:{title}>" for title, _, text in anchor_lines if normalize(text) == "rome")
    assert len(counts) == 3
    total = sum(counts.values())
    with SurfaceFormStore(store) as sf:
        candidates = sf.lookup("Rome")
        assert [(c.entity, c.count) for c in candidates] == counts.most_common()
        assert [c.commonness for c in candidates] == [n / total for _, n in counts.most_common()]
        assert candidates[0].entity == "<dbpedia:Rome>" and candidates[0].sources == ("kb", "anchors")
        assert sf.commonness("ROME", "<dbpedia:Roman_art>") == counts["<dbpedia:Roman_art>"] / total


def test_anchors_of_a_redirect_count_for_its_target(store: Path) -> None:
    with SurfaceFormStore(store) as sf:
        assert [c.entity for c in sf.lookup("Chrysler Horizon")] == ["<dbpedia:Simca-Talbot_Horizon>"]
        assert sf.lookup("Chrysler Horizon")[0].sources == ("kb", "anchors")
        assert sf.aliases("<dbpedia:Chrysler_Horizon>") == []


def test_labels_names_and_redirect_labels_are_kb_aliases(dbpedia_sample: Path, store: Path, redirects: dict[str, str]) -> None:
    expected = {
        (normalize(text), f"<dbpedia:{redirects.get(title, title)}>")
        for dataset, predicate in (("labels_en", "http://www.w3.org/2000/01/rdf-schema#label"), ("persondata_en", "http://xmlns.com/foaf/0.1/name"))
        for title, p, text in _lines(dbpedia_sample, dataset)
        if p == predicate
    }
    assert len(expected) > 90
    assert set(_column(store, "kb")) == expected
    with SurfaceFormStore(store) as sf:
        assert "chrysler horizon" in [a.form for a in sf.aliases("<dbpedia:Simca-Talbot_Horizon>") if "kb" in a.sources]


def test_freebase_mapping_from_freebase_links(dbpedia_sample: Path, redirects: dict[str, str], tmp_path: Path) -> None:
    links = _lines(dbpedia_sample, "freebase_links_en")
    assert len(links) == 95
    facc = tmp_path / "facc.tsv"
    spellings = ("/m/{}", "m.{}", "http://rdf.freebase.com/ns/m.{}")
    rows = [(f"form {i}", spellings[i % 3].format(iri.rsplit("/m.", 1)[1]), i + 1) for i, (_, _, iri) in enumerate(links)]
    facc.write_text("".join(f"{form}\t{mid}\t{n}\n" for form, mid, n in rows) + "unknown\t/m/0zzzzz\t5\n", encoding="utf-8")
    out = tmp_path / "sf.db"
    report = build_store(out, BuildOptions(dumps=(dbpedia_sample,), facc=(facc,), kb_aliases=False, progress=False))
    expected = {(form, f"<dbpedia:{redirects.get(title, title)}>"): n for (form, _, n), (title, _, _) in zip(rows, links)}
    assert _column(out, "facc") == expected
    assert (report.dumps.freebase_links, report.facc.mapped_rows, report.facc.unmapped_rows) == (95, 95, 1)


def test_the_line_scanner_agrees_with_the_ntriples_reader(dbpedia_sample: Path) -> None:
    datasets = ("labels_en", "transitive_redirects_en", "persondata_en", "anchor_text_en", "freebase_links_en")
    for path in (dbpedia_sample / f"{name}.ttl.bz2" for name in datasets):
        expected = [(t.predicate, t.subject, t.object, t.kind is ObjectKind.LITERAL) for t in read_triples(path)]
        assert list(scan(path, frozenset(t[0] for t in expected), ParseReport())) == expected, path
