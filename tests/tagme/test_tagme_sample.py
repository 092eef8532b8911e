"""TAGME (methods.md §6) on the real DBpedia 2015-10 sample: the artefact's counts and
relatedness against independent computations from the dumps, and linking."""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from elquery.indexing.cli import main as index_main
from elquery.kb.normalize import normalize
from elquery.indexing.ntriples import read_triples
from elquery.kb.tagme.artefact import TagmeArtefact
from elquery.indexing.tagme.build import build_tagme
from elquery.linking.tagme import TagmeLinker
from elquery.linking.tagme.relatedness import Relatedness

RESOURCE = "http://dbpedia.org/resource/"
QUERY = "british airways flights to rome"


@pytest.fixture(scope="module")
def artefact_dir(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tagme") / "artefact"
    build_tagme([dbpedia_sample], out)
    return out


@pytest.fixture(scope="module")
def artefact(artefact_dir: Path) -> TagmeArtefact:
    return TagmeArtefact(artefact_dir)


@pytest.fixture(scope="module")
def linker(artefact_dir: Path) -> TagmeLinker:
    return TagmeLinker(artefact_dir)


def _objects(path: Path) -> list[tuple[str, str]]:
    return [(t.subject, t.object) for t in read_triples(path)]


@pytest.fixture(scope="module")
def redirects(dbpedia_sample: Path) -> dict[str, str]:
    return dict(_objects(dbpedia_sample / "transitive_redirects_en.ttl.bz2"))


@pytest.fixture(scope="module")
def expected_counts(dbpedia_sample: Path, redirects: dict[str, str]) -> dict[str, Counter[str]]:
    """Independent link(e, m) per form: one per anchor line, plus one per (form, entity) named by
    a title, a title cut at "(" or ",", or a redirect title."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for target, text in _objects(dbpedia_sample / "anchor_text_en.ttl.bz2"):
        counts[normalize(text)][redirects.get(target, target)] += 1
    named: set[tuple[str, str]] = set()
    for page, label in _objects(dbpedia_sample / "labels_en.ttl.bz2"):
        if page not in redirects:
            named.add((normalize(label), page))
            named.add((normalize(label.split("(")[0].split(",")[0]), page))
    for source, target in redirects.items():
        named.add((normalize(source[len(RESOURCE):].replace("_", " ")), target))
    for form, page in named:
        counts[form][page] += 1
    return {form: c for form, c in counts.items()
            if len(form) > 1 and not form.replace(" ", "").isdigit() and len(form.split()) <= 6
            and sum(c.values()) >= 2}


@pytest.fixture(scope="module")
def abstracts(dbpedia_sample: Path) -> list[str]:
    return [f" {normalize(text)} " for _, text in _objects(dbpedia_sample / "long_abstracts_en.ttl.bz2")]


def _entity(iri: str) -> str:
    return f"<dbpedia:{iri[len(RESOURCE):]}>"


def test_dictionary_equals_independent_counts(artefact: TagmeArtefact, expected_counts, abstracts) -> None:
    dictionary = artefact.dictionary
    assert artefact.meta["forms"] == len(expected_counts)
    for form, counts in expected_counts.items():
        stats = dictionary.form(form)
        assert stats is not None, form
        assert stats.link == sum(counts.values())
        assert stats.df == sum(f" {form} " in text for text in abstracts)
        senses = {s.entity: (s.link, s.commonness) for s in dictionary.senses(stats)}
        assert senses == {_entity(e): (n, n / stats.link) for e, n in counts.items()}
    assert dictionary.form("flights") is None


def test_link_probability_and_commonness_of_chosen_spans(linker: TagmeLinker, expected_counts, abstracts) -> None:
    annotations = linker.annotate("the city of rome in italy and british airways")
    assert {a.mention.text for a in annotations} >= {"rome", "british airways"}
    tokens = normalize("the city of rome in italy and british airways").split()
    spots = {s.mention.text: s for s in linker.spots(tokens)}
    for annotation in annotations:
        form = annotation.mention.text
        link = sum(expected_counts[form].values())
        df = sum(f" {form} " in text for text in abstracts)
        assert spots[form].link_probability == pytest.approx(link / df)  # a chosen spot has df > 0
        entity_count = expected_counts[form][RESOURCE + annotation.entity[len("<dbpedia:"):-1]]
        assert annotation.commonness == pytest.approx(entity_count / link)
    assert spots["italy"].link_probability == pytest.approx(3 / 6)  # df > link: a true ratio


def test_relatedness_equals_independent_computation(artefact: TagmeArtefact, dbpedia_sample: Path, redirects) -> None:
    inlinks: dict[str, set[str]] = defaultdict(set)
    pages: set[str] = set()
    for source, target in _objects(dbpedia_sample / "page_links_en.ttl.bz2"):
        source, target = redirects.get(source, source), redirects.get(target, target)
        if source != target:
            inlinks[target].add(source)
            pages.update((source, target))
    assert artefact.graph.entities == len(pages)

    def expected(a: str, b: str) -> float:
        if a == b:
            return 1.0
        in_a, in_b = inlinks[a], inlinks[b]
        common = len(in_a & in_b)
        if not in_a or not in_b or common == 0:
            return 0.0
        big, small = max(len(in_a), len(in_b)), min(len(in_a), len(in_b))
        value = 1 - (math.log(big) - math.log(common)) / (math.log(len(pages)) - math.log(small))
        return min(1.0, max(0.0, value))

    labelled = {redirects.get(s, s) for s, _ in _objects(dbpedia_sample / "labels_en.ttl.bz2")}
    titles = sorted(labelled | {RESOURCE + "Heathrow_Airport"})
    nodes = [_node(artefact, _entity(t)) for t in titles]
    matrix = Relatedness(artefact.graph).matrix(nodes, nodes)
    want = np.array([[expected(a, b) for b in titles] for a in titles])
    np.testing.assert_allclose(matrix, want, rtol=1e-12, atol=1e-12)
    assert 0 < want.mean() < 1 and (want == 0).any()
    rome, ba = _node(artefact, "<dbpedia:Rome>"), _node(artefact, "<dbpedia:British_Airways>")
    want_pair = expected(RESOURCE + "Rome", RESOURCE + "British_Airways")
    assert Relatedness(artefact.graph).pair(rome, ba) == pytest.approx(want_pair)


def _node(artefact: TagmeArtefact, entity: str) -> int:
    node = artefact.dictionary.node(entity)
    assert node is not None, entity
    return node


def _lp(form: str, expected_counts, abstracts) -> float:  # type: ignore[no-untyped-def]
    """lp = link / df (methods.md §6), counted independently from the raw sample files."""
    df = sum(f" {form} " in text for text in abstracts)
    return sum(expected_counts[form].values()) / df if df else 0.0


def test_british_airways_flights_to_rome(linker: TagmeLinker, artefact: TagmeArtefact, expected_counts,
                                         abstracts) -> None:
    annotations = linker.annotate(QUERY)
    assert [(a.mention.text, a.mention.start, a.mention.end, a.entity) for a in annotations] == [
        ("british airways", 0, 2, "<dbpedia:British_Airways>"),
        ("rome", 4, 5, "<dbpedia:Rome>"),
    ]
    rome, ba = _node(artefact, "<dbpedia:Rome>"), _node(artefact, "<dbpedia:British_Airways>")
    rel = Relatedness(artefact.graph).pair(rome, ba)
    # ρ = (lp + coherence) / 2; on the sample, df comes from 98 abstracts while link counts come from
    # all of Wikipedia, so lp far exceeds 1 (the build report says so)
    lp = {form: _lp(form, expected_counts, abstracts) for form in ("british airways", "rome")}
    assert lp["rome"] > lp["british airways"] > 1
    for annotation in annotations:
        assert annotation.score == pytest.approx((lp[annotation.mention.text] + rel) / 2)
    [interpretation] = linker.link(QUERY)
    assert interpretation.entities == {"<dbpedia:British_Airways>", "<dbpedia:Rome>"}
    assert interpretation.score == pytest.approx((lp["british airways"] + lp["rome"] + 2 * rel) / 4)
    result = linker.result(QUERY, "q1")
    assert result.tokens == tuple(QUERY.split())
    assert [r.entity for r in result.ranking] == ["<dbpedia:Rome>", "<dbpedia:British_Airways>"]


def test_parameter_effects(artefact_dir: Path) -> None:
    assert TagmeLinker(artefact_dir, rho_na=1e6).link(QUERY) == []
    assert TagmeLinker(artefact_dir, rho_na=1e6).annotate(QUERY) == []
    # tau = 1: only senses with commonness 1 can be chosen; Rome's is 0.9998
    assert [a.entity for a in TagmeLinker(artefact_dir, tau=1.0).annotate(QUERY)] == ["<dbpedia:British_Airways>"]
    # spans of one token: "british airways" is not parsed
    assert [a.entity for a in TagmeLinker(artefact_dir, max_tokens=1).annotate(QUERY)] == ["<dbpedia:Rome>"]
    # lp("italy") = 0.5 < 0.6
    assert TagmeLinker(artefact_dir, min_lp=0.6).annotate("italy") == []
    [italy] = TagmeLinker(artefact_dir, min_lp=0.5).annotate("italy")
    assert italy.score == pytest.approx(0.25)  # (lp + no coherence) / 2
    assert TagmeLinker(artefact_dir, min_lp=0.5, rho_na=0.26).annotate("italy") == []
    # commonness("rome", Rome) = 26524/26529: a threshold above it leaves "rome" no sense
    assert TagmeLinker(artefact_dir, min_commonness=0.99999).annotate("rome") == []


def test_single_token_query(linker: TagmeLinker, expected_counts, abstracts) -> None:
    [annotation] = linker.annotate("Rome")
    assert annotation.entity == "<dbpedia:Rome>"
    assert annotation.score == pytest.approx(_lp("rome", expected_counts, abstracts) / 2)  # (lp + no coherence) / 2
    assert len(linker.link("Rome")) == 1


@pytest.mark.parametrize("query", ["of the and", "the a an to in", "?!"])  # blank: tests/test_blank_queries.py
def test_stopwords_and_empty_queries(linker: TagmeLinker, query: str) -> None:
    assert linker.annotate(query) == []
    assert linker.link(query) == []
    assert linker.result(query, "q").interpretations == ()


def test_entity_without_inlinks(artefact_dir: Path, artefact: TagmeArtefact) -> None:
    degree = np.diff(artefact.graph.indptr)
    with sqlite3.connect(artefact_dir / "dictionary.db") as db:
        rows = db.execute("SELECT DISTINCT node FROM candidates").fetchall()
    orphans = [node for (node,) in rows if degree[node] == 0]
    assert orphans, "the sample has candidate entities without in-links"
    rome = _node(artefact, "<dbpedia:Rome>")
    for node in orphans:
        assert Relatedness(artefact.graph).pair(node, rome) == 0.0
        assert Relatedness(artefact.graph).pair(node, node) == 1.0


def test_index_cli_missing_dataset(dbpedia_sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = dbpedia_sample / "labels_en.ttl.bz2"
    assert index_main(["tagme", "--dumps", str(labels), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "anchor_text_en.ttl" in err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("fmt", ["elq", "trec", "jsonl"])
def test_output_formats(linker: TagmeLinker, tmp_path: Path, fmt: str) -> None:
    from elquery.linking.output import write_results

    queries = {"q1": QUERY, "q2": "of the and"}
    path = tmp_path / f"run.{fmt}"
    assert write_results((linker.result(text, q) for q, text in queries.items()), path, fmt, "tagme") == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    if fmt == "elq":
        assert lines[0].split("\t")[2:] == ["<dbpedia:British_Airways>", "<dbpedia:Rome>"] and lines[1] == "q2"
    elif fmt == "trec":
        assert [line.split()[2] for line in lines] == ["<dbpedia:Rome>", "<dbpedia:British_Airways>"]
    else:
        records = [json.loads(line) for line in lines]
        assert len(records[0]["interpretations"]) == 1 and records[1]["interpretations"] == []


def test_link_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--tagme-param NAME=VALUE (a hyphen for an underscore too) gives TAGME's parameters, each
    parsed and checked by the registry; without --tagme, the demo knowledge base's artefact."""
    import argparse

    from elquery.indexing.demo import demo_tagme
    from elquery.linking.cli import _linker, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["link", "q", "--method", "tagme", "--tagme-param", "rho_na=0.2",
                              "--tagme-param", "max-tokens=3"])
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path))
    with _linker(args) as demo:
        assert demo.artefact.directory == demo_tagme() and (demo.params.rho_na, demo.params.max_tokens) == (0.2, 3)


def test_batches_and_workers(linker: TagmeLinker, artefact_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import elquery.linking.batch

    monkeypatch.setattr(elquery.linking.batch, "MIN_QUERIES_PER_WORKER", 1)  # two workers for three queries
    queries = [("q1", QUERY), ("q2", "rome"), ("q3", "of the and")]
    serial = list(linker.link_many(queries))
    assert [r.qid for r in serial] == ["q1", "q2", "q3"]
    assert list(TagmeLinker(artefact_dir).link_many(queries, workers=2)) == serial
    assert [r.entity for r in linker.rank(QUERY)] == ["<dbpedia:Rome>", "<dbpedia:British_Airways>"]
    assert linker.describe() == ("TAGME (max_tokens=6, min_lp=0.001, min_commonness=0.001, tau=0.02, epsilon=0.3, "
                                 "rho_na=0.1)")


@pytest.mark.parametrize("fmt", ["elq", "trec", "jsonl"])
def test_link_cli(artefact_dir: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.linking.cli import main as link_main

    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps({"q1": QUERY, "q2": "of the and"}), encoding="utf-8")
    run = tmp_path / "run"
    assert link_main(["link", "--method", "tagme", "--tagme", str(artefact_dir), "--queries", str(queries),
                      "--format", fmt, "--out", str(run)]) == 0
    from elquery.indexing.provenance import run_metadata
    from elquery.linking.output import formatter

    provenance = run_metadata("link", {"tagme": artefact_dir})  # named in each jsonl record (docs/formats.md)
    with TagmeLinker(artefact_dir) as tagme:
        lines = [line for q, text in [("q1", QUERY), ("q2", "of the and")]
                 for line in formatter(fmt, "elquery-tagme", provenance)(tagme.result(text, q))]
    assert run.read_text(encoding="utf-8").splitlines() == lines
    assert link_main(["link", "--method", "tagme", "--tagme", str(artefact_dir), QUERY,
                      "--tagme-param", "rho_na=1e6"]) == 0
    assert capsys.readouterr().out == "q1\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["--method", "tagme", "rome", "--index", "ART"], "not options of --method tagme: --index"),
    (["--method", "tagme", "--tagme", "ART", "rome", "--gif-threshold", "2"],
     "not options of --method tagme: --gif-threshold"),
    (["--method", "tagme", "--tagme", "ART", "rome", "--tagme-param", "rho=1"], "--tagme-param 'rho=1'"),
    (["--method", "tagme", "--tagme", "ART", "rome", "--tagme-param", "epsilon=0"],
     "tagme: epsilon must be 0 < epsilon <= 1, got 0"),
    (["--method", "tagme", "--tagme", "ART", "rome", "--tagme-param", "tau=x"], "tagme: tau must be a number, got 'x'"),
    (["--method", "tagme", "--tagme", "ART", "rome", "--tagme-param", "tau"], "--tagme-param 'tau': expected NAME=VALUE"),
    (["--method", "tagme", "--tagme", "ART", "rome", "--top-ranked"], "not options of --method tagme: --top-ranked"),
    (["--method", "tagme", "--tagme", "MISSING", "rome"], "missing: no such TAGME artefact (build one with"),
])
def test_link_cli_errors(artefact_dir: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.linking.cli import main as link_main

    paths = {"ART": str(artefact_dir), "MISSING": str(artefact_dir.parent / "missing")}
    argv = [paths.get(a, a) for a in argv]
    assert link_main(["link", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
