"""``elquery link`` and the Linker on the bundled demo knowledge base (README examples, formats,
errors, workers). The demo artefacts are built once per session by :func:`elquery.indexing.demo.demo_artefacts`
(the CLI's no-``--index`` default) into a temporary ``ELQUERY_CACHE``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from elquery.indexing.demo import demo_artefacts as build_demo_artefacts
from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.linking.cli import main as link_main
from elquery.linking.linker import Linker
from elquery.linking.methods import METHODS

NYC, NYS, PIZZA, MANHATTAN = ("<dbpedia:New_York_City>", "<dbpedia:New_York>", "<dbpedia:New_York-style_pizza>",
                              "<dbpedia:Manhattan>")


@pytest.fixture(scope="session")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("elquery-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(cache))
        build_demo_artefacts()
    return cache


@pytest.fixture()
def demo(demo_cache: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The demo artefacts, with ``ELQUERY_CACHE`` pointing at them (as the CLI finds them)."""
    monkeypatch.setenv("ELQUERY_CACHE", str(demo_cache))
    return build_demo_artefacts()


@pytest.fixture(scope="session")
def demo_artefacts(demo_cache: Path) -> tuple[Path, Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(demo_cache))
        return build_demo_artefacts()


@pytest.fixture(scope="module")
def mlmcg(demo_artefacts: tuple[Path, Path]) -> Linker:
    return Linker(*demo_artefacts, gif_threshold=METHODS.get("mlmcg").parameter("gif_threshold").demo_default)


def entity_sets(interpretations) -> list[set[str]]:
    return [set(i.entities) for i in interpretations]


# --- the README's examples (indexing/demo/README.md, README.md) ----------------------------------


def test_new_york_pizza_manhattan(demo, capsys: pytest.CaptureFixture[str]) -> None:
    assert elquery(["link", "new york pizza manhattan"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[2:] for line in lines] == [[PIZZA, MANHATTAN]]
    assert lines[0].startswith("q1\t")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("the music man", [{"<dbpedia:The_Music_Man>"}]),
        ("jacksonville fl", [{"<dbpedia:Jacksonville,_Florida>"}]),
        ("total recall arnold schwarzenegger", [{"<dbpedia:Total_Recall_(1990_film)>", "<dbpedia:Arnold_Schwarzenegger>"}]),
        ("obama's mother", [{"<dbpedia:Barack_Obama>"}]),
        ("new york new jersey", [{NYC, "<dbpedia:New_Jersey>"}]),
        ("forearm pain exercises", []),
    ],
)
def test_demo_queries(mlmcg: Linker, query: str, expected: list[set[str]]) -> None:
    assert entity_sets(mlmcg.link(query)) == expected


def test_semantic_mapping_ranks_every_candidate_entity(mlmcg: Linker) -> None:
    ranking = mlmcg.rank("the music man")
    assert [r.entity for r in ranking][:2] == ["<dbpedia:The_Music_Man>", "<dbpedia:The_Music_Man_(1962_film)>"]
    assert all(a.score >= b.score for a, b in zip(ranking, ranking[1:]))
    assert ranking[0].mention.text in ("music man", "the music man")


def test_cmns_on_the_demo(demo_artefacts: tuple[Path, Path]) -> None:
    linker = Linker(None, demo_artefacts[1], method="cmns")
    assert [r.entity for r in linker.rank("jacksonville fl")] == ["<dbpedia:Jacksonville,_Florida>"]


# --- formats and options --------------------------------------------------------------------------


def test_query_file_all_formats(demo, tmp_path: Path) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("a\tnew york new jersey\nb\tforearm braces\n", encoding="utf-8")
    for fmt in ("elq", "trec", "jsonl"):
        assert elquery(["link", "--queries", str(queries), "--format", fmt, "--out", str(tmp_path / fmt)]) == 0
    assert (tmp_path / "elq").read_text().splitlines()[1:] == ["b"]
    assert (tmp_path / "elq").read_text().split("\n")[0].split("\t")[2:] == [NYC, "<dbpedia:New_Jersey>"]
    trec = [line.split() for line in (tmp_path / "trec").read_text().splitlines()]
    assert {row[0] for row in trec} == {"a"} and trec[0][1] == "Q0" and trec[0][5] == "elquery-mlmcg"
    assert [int(row[3]) for row in trec] == list(range(1, len(trec) + 1))
    first, second = (json.loads(line) for line in (tmp_path / "jsonl").read_text().splitlines())
    assert first["qid"] == "a" and first["tokens"] == ["new", "york", "new", "jersey"]
    spans = {(m["mention"]["start"], m["mention"]["end"]) for m in first["mentions"]}
    assert {(0, 2), (2, 4)} <= spans
    assert second["interpretations"] == [] and second["ranking"] == []


def test_methods_thresholds_whitelist_top_ranked(demo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whitelist = tmp_path / "whitelist.txt"
    whitelist.write_text(f"{MANHATTAN}\n{NYS}\n", encoding="utf-8")
    assert elquery(["link", "new york pizza manhattan", "--whitelist", str(whitelist), "--gif-threshold", "0"]) == 0
    assert capsys.readouterr().out.split("\t")[2:] == [NYS, MANHATTAN + "\n"]
    # TopRanked over CMNS: the top of the Eq. 11 ranking (longest spans), as `--format trec` ranks it
    assert elquery(["link", "new york pizza manhattan", "--method", "cmns", "--format", "trec"]) == 0
    top = capsys.readouterr().out.splitlines()[0].split()[2]
    assert top == PIZZA
    assert elquery(["link", "new york pizza manhattan", "--method", "cmns", "--top-ranked"]) == 0
    assert capsys.readouterr().out.split("\t")[2:] == [top + "\n"]
    assert elquery(["link", "new york pizza manhattan", "--gif-threshold", "1e9"]) == 0
    assert capsys.readouterr().out == "q1\n"
    assert link_main(["link", "manhattan", "--method", "mlm", "--commonness-threshold", "0", "--format", "trec"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 5  # every sense of "manhattan"


def test_workers_give_the_same_run(demo_artefacts: tuple[Path, Path], tmp_path: Path) -> None:
    index, sf = demo_artefacts
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps({f"q{i}": q for i, q in enumerate(
        ["new york pizza manhattan", "the music man", "jacksonville fl", "forearm braces"] * 10)}), encoding="utf-8")
    runs = []
    for workers in ("1", "2"):
        out = tmp_path / f"run-{workers}.elq"
        assert elquery(["link", "--index", str(index), "--surface-forms", str(sf), "--queries", str(queries),
                        "--workers", workers, "--gif-threshold", "0.25", "--out", str(out)]) == 0
        runs.append(out.read_text())
    assert runs[0] == runs[1] and len(runs[0].splitlines()) == 40


# --- user errors: one line, exit status 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--queries", "missing.tsv"], "missing.tsv"),
        (["q", "--queries", "x.tsv"], "either one QUERY or --queries"),
        ([], "either one QUERY or --queries"),
        (["q", "--index", "somewhere"], "--index and --surface-forms together"),
        (["q", "--index", "nowhere", "--surface-forms", "nothing.db"], "nowhere: no such entity index (build one with"),
        (["q", "--whitelist", "missing.txt"], "missing.txt: no such whitelist file"),
        (["q", "--gif-threshold", "-1"], "mlmcg: gif_threshold must be 0 <= gif_threshold, got -1"),
        (["q", "--workers", "0"], "--workers must be between 1 and 256, got 0"),
        (["q", "--tagme", "artefact"], "not options of --method mlmcg: --tagme"),
        (["q", "--commonness-threshold", "2"], "mlmcg: commonness_threshold must be 0 <= commonness_threshold <= 1, got 2"),
        (["q", "--out", "."], ".: is a directory, not an output file"),
        (["q", "--out", "nowhere/run"], "nowhere/run: output directory nowhere does not exist"),
        (["--queries", "."], ".: is a directory, not a query file"),
    ],
)
def test_user_errors(demo, arguments: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert elquery(["link", *arguments]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_malformed_query_line_names_file_and_line(demo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text("a\tnew york\nno tab here\n", encoding="utf-8")
    assert elquery(["link", "--queries", str(queries)]) == 2
    assert f"{queries}:2:" in capsys.readouterr().err


def test_linker_closes_what_it_opened(demo_artefacts: tuple[Path, Path]) -> None:
    index, sf = demo_artefacts
    with Linker(index, sf, method="cmns") as linker:  # CMNS opens no index even when given one
        # "fl" (commonness 1) outscores "jacksonville fl" (0.98), so containment keeps "fl"
        assert entity_sets(linker.link("jacksonville fl")) == [{"<dbpedia:Jacksonville,_Florida>", "<dbpedia:Florida>"}]
    with pytest.raises(sqlite3.ProgrammingError):
        linker.link("jacksonville fl")


def test_full_width_and_decomposed_text_match_like_plain_text(demo: tuple[Path, Path]) -> None:
    """One normalization (NFKC, then casefold) for the store and the query."""
    with Linker(*demo, gif_threshold=0.0) as linker:
        plain = {i.entities for i in linker.link("new york pizza manhattan")}
        assert {i.entities for i in linker.link("ＮＥＷ ＹＯＲＫ ｐｉｚｚａ Ｍａｎｈａｔｔａｎ")} == plain


@pytest.mark.parametrize("query", ["NEW-YORK  pizza, in Manhattan!!", "manhattan manhattan",
                                   "Ｍａｎｈａｔｔａｎ — new york", "the music man (1962)"])
def test_mentions_carry_character_offsets_into_the_query(demo: tuple[Path, Path], query: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.normalize import normalize

    with Linker(*demo, gif_threshold=0.0) as linker:
        result = linker.result(query)
    assert result.scored
    for triple in result.scored:
        start, end = result.char_span(triple.mention)
        assert normalize(query[start:end]) == triple.mention.text
    assert elquery(["link", query, "--format", "jsonl", "--gif-threshold", "0"]) == 0
    record = json.loads(capsys.readouterr().out)
    for mention in [m["mention"] for m in record["mentions"]]:
        assert normalize(query[mention["char_start"]:mention["char_end"]]) == mention["text"]


def test_mention_detection_is_bounded_by_the_longest_form(demo: tuple[Path, Path]) -> None:
    """Spans are built only up to the store's longest form: O(query length x longest form)."""
    import sqlite3

    from elquery.indexing.surface_forms.store import SurfaceFormStore, query_spans

    _, sf = demo
    with sqlite3.connect(sf) as db:
        longest = max(len(form.split()) for (form,) in db.execute("SELECT form FROM forms"))
    assert 1 < longest < 10
    assert len(query_spans(10_000, longest)) == 10_000 * longest - longest * (longest - 1) // 2
    assert len(query_spans(3, longest)) == 6  # a query shorter than the longest form: all its spans
    with SurfaceFormStore(sf) as store:
        assert store.longest_form == longest
        tokens = "new york pizza manhattan the music man".split() * 3
        every_span = {(s, e): store.lookup_form(" ".join(tokens[s:e]))
                      for s in range(len(tokens)) for e in range(s + 1, len(tokens) + 1)}
        assert store.lookup_spans(tokens) == {span: found for span, found in every_span.items() if found}


def test_a_query_longer_than_the_limit_is_one_line_error(demo: tuple[Path, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    long_query = " ".join(["new york pizza manhattan"] * 500)  # 2,000 tokens
    assert elquery(["link", long_query]) == 2
    err = capsys.readouterr().err
    assert err == ("elquery: error: query of 2000 tokens is longer than the limit of 1000 "
                   "(raise it with --max-query-tokens / max_query_tokens)\n")
    assert elquery(["link", long_query, "--max-query-tokens", "2000", "--format", "jsonl"]) == 0
    assert len(json.loads(capsys.readouterr().out)["tokens"]) == 2000
    assert elquery(["link", "pizza", "--max-query-tokens", "0"]) == 2
    assert "whole number of tokens >= 1" in capsys.readouterr().err
    with pytest.raises(ElqueryError, match="longer than the limit of 3"):
        Linker(*demo, max_query_tokens=3).link("new york pizza manhattan")
