"""TAGME (methods.md §6) rules on a small hand-written DBpedia-shaped knowledge base: dictionary
sources and filters, redirects, the in-link graph, parsing, voting, disambiguation by threshold,
pruning and the single interpretation."""

from __future__ import annotations

import bz2
import json
import math
from pathlib import Path

import numpy as np
import pytest

from elquery.indexing.cli import main as index_main
from elquery.kb.tagme.artefact import TagmeArtefact
from elquery.indexing.tagme.build import TagmeBuildParams, build_tagme
from elquery.linking.tagme import TagmeLinker
from elquery.linking.tagme.annotator import top_share
from elquery.linking.tagme.relatedness import Relatedness

R = "http://dbpedia.org/resource/"
O = "http://dbpedia.org/ontology/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

ANCHORS = [("Alpha_1", "Alpha", 6), ("Alpha_Two", "alpha", 3), ("Alpha_2", "Alpha Two", 1), ("Beta", "Beta", 5),
           ("Gamma", "Gamma Delta", 4), ("Delta", "delta", 3), ("Gamma_ray", "gamma", 4), ("Year", "1999", 5),
           ("X", "x", 5), ("Long", "one two three four five six seven", 3), ("Six", "a b c d e f", 2),
           ("Springfield,_Illinois", "Springfield", 1)]
LABELS = [("Alpha_1", "Alpha (letter)"), ("Alpha_2", "Alpha Two Corp"), ("Beta", "Beta"),
          ("Alpha_Two", "Alpha Two"), ("Alpha_(disambiguation)", "Alpha (disambiguation)"),
          ("Springfield,_Illinois", "Springfield, Illinois")]
REDIRECTS = [("Alpha_Two", "Alpha_2"), ("Alpha_(disambiguation)", "Alpha_1")]
LINKS = ([(f"P{i}", "Alpha_2") for i in range(1, 5)] + [("P0", "Alpha_Two"), ("P1", "Alpha_2")]
         + [(f"P{i}", "Beta") for i in range(5)] + [("Q0", "Beta"), ("Beta", "Beta")]
         + [(f"Q{i}", "Alpha_1") for i in range(5)])
ABSTRACTS = ([f"Alpha {i} is a page about alpha, alpha and ALPHA." for i in range(22)]
             + [f"The river delta {i}." for i in range(6)] + ["Beta: no phrase here counts."]
             + [f"The gamma delta {i} of Beta." for i in range(4)] + ["Beta again."])


def _iri(title: str) -> str:
    return f"<{R}{title}>"


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"@en'


def write_dumps(directory: Path) -> Path:
    directory.mkdir()
    anchor_lines = [f"{_iri(t)} <{O}wikiPageWikiLinkText> {_literal(a)} .\n" for t, a, n in ANCHORS for _ in range(n)]
    files = {
        "anchor_text_en.ttl": anchor_lines,
        "labels_en.ttl": [f"{_iri(t)} <{LABEL}> {_literal(x)} .\n" for t, x in LABELS],
        "transitive_redirects_en.ttl": [f"{_iri(s)} <{O}wikiPageRedirects> {_iri(t)} .\n" for s, t in REDIRECTS],
        "long_abstracts_en.ttl": [f"{_iri(f'D{i}')} <{O}abstract> {_literal(x)} .\n" for i, x in enumerate(ABSTRACTS)],
    }
    for name, lines in files.items():
        (directory / name).write_text("".join(lines), encoding="utf-8")
    with bz2.open(directory / "page_links_en.ttl.bz2", "wt", encoding="utf-8") as handle:
        handle.writelines(f"{_iri(s)} <{O}wikiPageWikiLink> {_iri(t)} .\n" for s, t in LINKS)
    return directory


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dumps(tmp_path_factory.mktemp("synthetic") / "dumps")


@pytest.fixture(scope="module")
def artefact_dir(dumps: Path) -> Path:
    out = dumps.parent / "artefact"
    build_tagme([dumps], out)
    return out


@pytest.fixture(scope="module")
def artefact(artefact_dir: Path) -> TagmeArtefact:
    return TagmeArtefact(artefact_dir)


# |E| = 13 (P0-P4, Q0-Q4, Alpha_1, Alpha_2, Beta); in(Alpha_2) = P0-P4, in(Beta) = P0-P4 + Q0
REL_ALPHA2_BETA = 1 - (math.log(6) - math.log(5)) / (math.log(13) - math.log(5))


def _senses(artefact: TagmeArtefact, form: str) -> dict[str, int]:
    stats = artefact.dictionary.form(form)
    assert stats is not None, form
    return {s.entity: s.link for s in artefact.dictionary.senses(stats)}


def test_dictionary_sources_and_filters(artefact: TagmeArtefact) -> None:
    # anchors, a redirect page's anchors resolved, the title cut at "(" counted once
    assert _senses(artefact, "alpha") == {"<dbpedia:Alpha_1>": 7, "<dbpedia:Alpha_2>": 3}
    # an anchor plus the redirect title
    assert _senses(artefact, "alpha two") == {"<dbpedia:Alpha_2>": 2}
    assert _senses(artefact, "beta") == {"<dbpedia:Beta>": 6}
    # the title cut at ",": title and cut title each count once
    assert _senses(artefact, "springfield") == {"<dbpedia:Springfield,_Illinois>": 2}
    assert _senses(artefact, "a b c d e f") == {"<dbpedia:Six>": 2}
    for dropped in ("alpha letter", "alpha two corp", "springfield illinois",  # link 1 < 2
                    "1999", "x", "one two three four five six seven", "alpha disambiguation"):
        assert artefact.dictionary.form(dropped) is None, dropped
    stats = artefact.dictionary.form("alpha")
    assert (stats.link, stats.df, stats.link_probability) == (10, 22, pytest.approx(10 / 22))
    assert artefact.dictionary.form("beta").link_probability == 6 / 6
    assert artefact.dictionary.form("delta").link_probability == 3 / 10  # 6 river + 4 gamma delta abstracts
    # a form in no abstract has lp 0 (methods.md §6), never 1
    assert artefact.dictionary.form("a b c d e f").df == 0
    assert artefact.dictionary.form("a b c d e f").link_probability == 0.0
    # "a b c d e f", "alpha two" and "springfield" are linked twice and in no abstract
    assert artefact.meta["forms_df_below_link"] == 3
    assert artefact.meta["abstracts"] == len(ABSTRACTS)


def test_min_link_is_a_build_parameter(dumps: Path, tmp_path: Path) -> None:
    build_tagme([dumps], tmp_path / "a", TagmeBuildParams(min_link=1))
    with TagmeArtefact(tmp_path / "a") as artefact:
        assert _senses(artefact, "alpha letter") == {"<dbpedia:Alpha_1>": 1}
        assert artefact.dictionary.form("x") is None


def test_inlink_graph(artefact: TagmeArtefact) -> None:
    graph = artefact.graph
    assert graph.entities == 13 and artefact.meta["edges"] == 4 + 1 + 5 + 1 + 5
    node = artefact.dictionary.node
    names = {node(f"<dbpedia:{t}>"): t for t in ["P0", "P1", "P2", "P3", "P4", "Q0"]}
    assert {names[n] for n in graph.inlinks(node("<dbpedia:Alpha_2>"))} == {"P0", "P1", "P2", "P3", "P4"}
    assert {names[n] for n in graph.inlinks(node("<dbpedia:Beta>"))} == {"P0", "P1", "P2", "P3", "P4", "Q0"}
    assert node("<dbpedia:Alpha_Two>") is None  # a redirect page is no entity
    assert Relatedness(graph).pair(node("<dbpedia:Alpha_2>"), node("<dbpedia:Beta>")) == pytest.approx(REL_ALPHA2_BETA)
    assert Relatedness(graph).pair(node("<dbpedia:Alpha_1>"), node("<dbpedia:Beta>")) == 0.0  # clamped
    assert Relatedness(graph).pair(node("<dbpedia:Gamma>"), node("<dbpedia:Gamma_ray>")) == 0.0  # no in-links
    indptr = np.load(artefact.directory / "inlinks.indptr.npy")
    indices = np.load(artefact.directory / "inlinks.indices.npy")
    assert indptr.dtype == np.int64 and indices.dtype == np.int32
    assert all((np.diff(indices[a:b]) > 0).all() for a, b in zip(indptr[:-1], indptr[1:]))


def test_graph_built_in_small_ranges_and_chunks(dumps: Path, artefact_dir: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from elquery.indexing.tagme import graph

    monkeypatch.setattr(graph, "RANGE_LINKS", 3)
    monkeypatch.setattr(graph, "_CHUNK_PAIRS", 4)
    monkeypatch.setattr(graph, "_FLUSH_INTS", 6)
    build_tagme([dumps], tmp_path / "small")
    for name in ("inlinks.indptr.npy", "inlinks.indices.npy"):
        assert np.array_equal(np.load(tmp_path / "small" / name), np.load(artefact_dir / name))
    assert sorted(p.name for p in (tmp_path / "small").iterdir()) == sorted(p.name for p in artefact_dir.iterdir())


def test_target_ranges() -> None:
    from elquery.indexing.tagme.graph import target_ranges

    assert target_ranges(np.array([3, 1, 1, 10, 0, 2, 2]), 4).tolist() == [0, 2, 3, 4, 7]
    assert target_ranges(np.zeros(3, dtype=np.int64), 4).tolist() == [0, 3]
    assert target_ranges(np.zeros(0, dtype=np.int64), 4).tolist() == [0]


def test_voting_and_disambiguation_by_threshold(artefact_dir: Path) -> None:
    # alone, "alpha" gets no votes: the most common sense wins
    [alone] = TagmeLinker(artefact_dir).annotate("alpha")
    assert alone.entity == "<dbpedia:Alpha_1>"
    assert alone.score == pytest.approx(10 / 22 / 2)
    # "beta" votes for Alpha_2 (related), not Alpha_1: the top 30% of 2 senses (k = 1) by rel
    linker = TagmeLinker(artefact_dir)
    annotations = linker.annotate("alpha beta")
    assert [(a.mention.text, a.entity) for a in annotations] == [("alpha", "<dbpedia:Alpha_2>"),
                                                                 ("beta", "<dbpedia:Beta>")]
    assert annotations[0].score == pytest.approx((10 / 22 + REL_ALPHA2_BETA) / 2)
    assert annotations[1].score == pytest.approx((1 + REL_ALPHA2_BETA) / 2)
    assert annotations[0].commonness == pytest.approx(3 / 10)
    # epsilon = 1 keeps both senses among the top: commonness decides
    wide = TagmeLinker(artefact_dir, epsilon=1.0).annotate("alpha beta")
    assert wide[0].entity == "<dbpedia:Alpha_1>"
    # tau above Alpha_2's commonness leaves only Alpha_1
    assert TagmeLinker(artefact_dir, tau=0.5).annotate("alpha beta")[0].entity == "<dbpedia:Alpha_1>"
    [interpretation] = linker.link("alpha beta")
    assert interpretation.score == pytest.approx(sum(a.score for a in annotations) / 2)


def test_pruning(artefact_dir: Path) -> None:
    rho_alpha = (10 / 22 + REL_ALPHA2_BETA) / 2
    kept = TagmeLinker(artefact_dir, rho_na=rho_alpha + 1e-9).annotate("alpha beta")
    assert [a.entity for a in kept] == ["<dbpedia:Beta>"]
    assert TagmeLinker(artefact_dir, rho_na=1.0).link("alpha beta") == []


def test_containment_and_overlap(artefact_dir: Path) -> None:
    linker = TagmeLinker(artefact_dir)
    # "delta" (lp 3/10) lies in "gamma delta" (lp 4/4): dropped; "gamma" (lp 4/4, not lower) stays
    spots = linker.spots(["gamma", "delta"])
    assert [(s.mention.text, s.link_probability) for s in spots] == [("gamma", 1.0), ("gamma delta", 1.0)]
    annotations = linker.annotate("gamma delta")
    assert {(a.mention.text, a.entity) for a in annotations} == {("gamma delta", "<dbpedia:Gamma>"),
                                                                 ("gamma", "<dbpedia:Gamma_ray>")}
    assert all(a.score == 0.5 for a in annotations)  # no in-links: coherence 0
    # the interpretation may not overlap: equal ρ, same start, then entity id
    [interpretation] = linker.link("gamma delta")
    assert [(a.mention.text, a.entity) for a in interpretation.annotations] == [("gamma delta", "<dbpedia:Gamma>")]


def test_spans_longer_than_the_build_are_refused(artefact_dir: Path) -> None:
    from elquery.base import ElqueryError

    with pytest.raises(ElqueryError, match="spans of up to 6 tokens"):
        TagmeLinker(artefact_dir, max_tokens=7)
    with pytest.raises(ElqueryError, match="epsilon"):
        TagmeLinker(artefact_dir, epsilon=0)
    with pytest.raises(TypeError):
        TagmeLinker(artefact_dir, rho=0.2)


def test_index_cli(dumps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli-artefact"
    assert index_main(["tagme", "--dumps", str(dumps), "--out", str(out), "--min-link", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["out"] == str(out) and summary["abstracts"] == len(ABSTRACTS)
    assert json.loads((out / "meta.json").read_text())["min_link"] == 3
    with TagmeArtefact(out) as artefact:
        assert artefact.dictionary.form("alpha two") is None  # link 2 < 3
        assert artefact.dictionary.form("alpha") is not None
    assert index_main(["tagme", "--dumps", str(dumps), "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert index_main(["tagme", "--dumps", str(dumps), "--out", str(out), "--overwrite", "--min-link", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
    assert index_main(["tagme", "--dumps", str(dumps), "--out", str(out), "--overwrite"]) == 0
    assert json.loads((out / "meta.json").read_text())["min_link"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["cli-artefact"]  # no temporary directory left


def test_top_share() -> None:
    assert [top_share(n, 0.3) for n in (1, 2, 3, 4, 5, 10)] == [1, 1, 1, 1, 2, 3]
    assert top_share(7, 1.0) == 7


def test_coherence_averages_over_the_distinct_other_entities(artefact_dir: Path) -> None:
    """Two nested spots chose entity 1, one spot entity 2, rel(1, 2) = 0.4: the coherence of
    entity 1 is rel(1, 2) = 0.4 (E(T) - {e} = {2}), not the mean of rel(1, 1) = 1 and 0.4."""
    from elquery.kb.tagme.store import Sense
    from elquery.linking.tagme.annotator import Spot, SpotChoice
    from elquery.linking.types import Mention

    class Related:
        def rel(self, a: int, b: int) -> float:
            return 1.0 if a == b else 0.4

    one, two = Sense("<dbpedia:One>", 1, 5, 1.0), Sense("<dbpedia:Two>", 2, 5, 1.0)
    choices = [SpotChoice(Spot(Mention("a b", 0, 2), 0.5, (one,)), one, 0.0),
               SpotChoice(Spot(Mention("a", 0, 1), 0.5, (one,)), one, 0.0),
               SpotChoice(Spot(Mention("c", 2, 3), 0.5, (two,)), two, 0.0)]
    kept = TagmeLinker(artefact_dir, rho_na=0.0).prune(choices, Related())  # type: ignore[arg-type]
    assert [(t.mention.text, t.score) for t in kept] == [("a", pytest.approx(0.45)), ("a b", pytest.approx(0.45)),
                                                        ("c", pytest.approx(0.45))]
