"""Each format's writer and reader agree: what is written is read back as it was (the real query
files and qrels of Y-ERD and DBpedia-Entity v2 included), and a writer refuses what its reader
would refuse or read differently, rather than write it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.formats.elq import read_elq, write_elq
from elquery.formats.jsonl import read_jsonl, write_jsonl
from elquery.formats.link_output import jsonl_record, write_results
from elquery.formats.links import read_links, write_links
from elquery.formats.queries import read_queries, write_queries
from elquery.formats.run_metadata import read_sidecar, sidecar_path
from elquery.formats.trec_qrels import read_trec_qrels, write_trec_qrels
from elquery.formats.trec_run import read_trec_run, write_run
from elquery.linking.types import Interpretation, LinkResult, Mention, MappedEntity, ScoredMention


@pytest.mark.parametrize("name", ["queries.tsv", "queries.json"])
def test_queries(tmp_path: Path, name: str) -> None:
    pairs = [("q1", "new york pizza"), ("q-2", "tab\tinside, \u2028 and ü"), ("Q3", '"quoted" {braces}')]
    assert write_queries(tmp_path / name, pairs) == 3
    assert [(q.qid, q.text) for q in read_queries(tmp_path / name)] == pairs


@pytest.mark.parametrize("pairs, words", [
    ([("q 1", "a")], "query id 'q 1' must be non-empty and hold no whitespace"),
    ([("q1", "a"), ("q1", "b")], "query id 'q1' given twice"),
    ([("q1", " ")], "query 'q1' is blank"),
    ([("q1", "two\nlines")], "holds a line end"),
])
def test_queries_writer_refuses_what_the_reader_refuses(tmp_path: Path, pairs: list[tuple[str, str]], words: str) -> None:
    with pytest.raises(ElqueryError, match=words):
        write_queries(tmp_path / "q.tsv", pairs)
    assert list(tmp_path.iterdir()) == []


def test_real_query_files(tmp_path: Path, elq_data: Path) -> None:
    """Y-ERD's queries.json and DBpedia-Entity v2's TSV queries, written in the other form."""
    for source, copy in ((elq_data / "y-erd" / "queries.json", tmp_path / "y-erd.tsv"),
                         (elq_data.parent / "dbpedia-entity-v2" / "queries-v2.txt", tmp_path / "v2.json")):
        queries = read_queries(source)
        assert write_queries(copy, [(q.qid, q.text) for q in queries]) == len(queries) > 0
        assert read_queries(copy) == queries
    assert len(read_queries(tmp_path / "v2.json")) == 467


def test_trec_run(tmp_path: Path) -> None:
    """Distinct scores are read back exactly; tied ones strictly decrease, and ir_measures reads
    the same run."""
    ir_measures = pytest.importorskip("ir_measures")
    rankings = [("q1", [(1, "<dbpedia:A>", 0.1 + 0.2), (2, "<dbpedia:B>", -1.5), (3, "<dbpedia:C>", -1.5)]),
                ("q2", [(1, "<dbpedia:B>", -math.inf)])]
    path = tmp_path / "run.trec"
    assert write_run(path, rankings, "tag") == 4
    run = read_trec_run(path)
    assert run == {"q1": {"<dbpedia:A>": 0.30000000000000004, "<dbpedia:B>": -1.5,
                          "<dbpedia:C>": math.nextafter(-1.5, -math.inf)},
                   "q2": {"<dbpedia:B>": -math.inf}}
    theirs: dict[str, dict[str, float]] = {}
    for scored in ir_measures.read_trec_run(str(path)):
        theirs.setdefault(scored.query_id, {})[scored.doc_id] = scored.score
    assert theirs == run
    with pytest.raises(ElqueryError, match="query id 'q 1' must be non-empty and hold no whitespace"):
        write_run(tmp_path / "bad.trec", [("q 1", [(1, "<dbpedia:A>", 1.0)])], "tag")  # was written, unreadable
    assert not (tmp_path / "bad.trec").exists()


def test_real_trec_qrels(tmp_path: Path, elq_data: Path) -> None:
    """DBpedia-Entity v2's graded qrels (0, 1, 2; tab-separated), as ir_measures reads them too."""
    ir_measures = pytest.importorskip("ir_measures")
    source = elq_data.parent / "dbpedia-entity-v2" / "qrels-v2.txt"
    qrels = read_trec_qrels(source)
    theirs: dict[str, dict[str, int]] = {}
    for judged in ir_measures.read_trec_qrels(str(source)):
        theirs.setdefault(judged.query_id, {})[judged.doc_id] = judged.relevance
    assert qrels == theirs
    assert {r for judged in qrels.values() for r in judged.values()} == {0, 1, 2}
    copy = tmp_path / "qrels.txt"
    assert write_trec_qrels(copy, qrels) == sum(len(judged) for judged in qrels.values())
    assert read_trec_qrels(copy) == qrels


@pytest.mark.parametrize("qrels, words", [
    ({"q 1": {"d": 1}}, "query id 'q 1'"),
    ({"q1": {"d 1": 1}}, "docid 'd 1'"),
    ({"q1": {"d": 1.5}}, "relevance 1.5"),
])
def test_trec_qrels_writer_refuses(tmp_path: Path, qrels: dict[str, dict[str, int]], words: str) -> None:
    with pytest.raises(ElqueryError, match=words):
        write_trec_qrels(tmp_path / "qrels.txt", qrels)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["y-erd", "erd-dev"])
def test_real_elq_qrels(tmp_path: Path, elq_data: Path, name: str) -> None:
    """The ELQ qrels (``qid<TAB>1<TAB>entity...``, a bare qid for a query without one), written
    back and read as the same interpretations."""
    qrels = read_elq(elq_data / name / "qrels-elq.txt")
    assert any(not interpretations for interpretations in qrels.values())
    copy = tmp_path / "qrels-elq.txt"
    assert write_elq(copy, ((qid, [(1, sorted(i)) for i in interpretations])
                            for qid, interpretations in qrels.items())) == len(qrels)
    assert read_elq(copy) == qrels


def test_elq_lines(tmp_path: Path) -> None:
    path = tmp_path / "run.elq"
    write_elq(path, [("q1", [(18.25, ["<dbpedia:New_York_City>", "<dbpedia:Manhattan>"]), (0.1 + 0.2, ["<dbpedia:A>"])]),
                     ("q2", [])])
    assert path.read_text(encoding="utf-8") == ("q1\t18.25\t<dbpedia:New_York_City>\t<dbpedia:Manhattan>\n"
                                                "q1\t0.30000000000000004\t<dbpedia:A>\nq2\n")
    for queries, words in (([("q 1", [])], "query id 'q 1'"), ([("q1", [(1.0, ["<a>\t<b>"])])], "cannot go into an ELQ line")):
        with pytest.raises(ElqueryError, match=words):
            write_elq(tmp_path / "bad.elq", queries)
    assert not (tmp_path / "bad.elq").exists()


def test_jsonl(tmp_path: Path) -> None:
    records = [{"qid": "q1", "text": "ü \u2028 \n", "n": [1, 2.5, None]}, {"qid": "q2"}]
    assert write_jsonl(tmp_path / "r.jsonl", records) == 2
    assert read_jsonl(tmp_path / "r.jsonl") == records


def test_links(tmp_path: Path) -> None:
    links = {"q1": [("<dbpedia:Barack_Obama>", 0.9), ("<dbpedia:Family>", 2)], "q2": []}
    path = tmp_path / "links.jsonl"
    assert write_links(path, links) == 2
    read = read_links(path, lambda entity: entity)
    assert {qid: [(link.entity, link.score) for link in found] for qid, found in read.items()} == \
        {"q1": [("<dbpedia:Barack_Obama>", 0.9), ("<dbpedia:Family>", 2.0)]}  # q2: no links, as a qid not named
    assert read["q1"][1].where == f"{path}:1"
    for bad, words in (({"q 1": []}, "query id 'q 1'"), ({"q1": [("<dbpedia:A>", 0)]}, "must be a positive number")):
        with pytest.raises(ElqueryError, match=words):
            write_links(tmp_path / "bad.jsonl", bad)
    assert not (tmp_path / "bad.jsonl").exists()


NYC = ScoredMention(Mention("new york", 0, 2), "<dbpedia:New_York_City>", 24.0, 0.6)
MANHATTAN = ScoredMention(Mention("manhattan", 3, 4), "<dbpedia:Manhattan>", 12.5, 0.5)
RESULTS = [
    LinkResult("q1", "New York pizza Manhattan", ("new", "york", "pizza", "manhattan"), (NYC, MANHATTAN),
               (Interpretation((NYC, MANHATTAN), 18.25), Interpretation((MANHATTAN,), 12.5)),
               (MappedEntity(NYC.entity, 24.0, NYC.mention), MappedEntity(MANHATTAN.entity, 12.5, MANHATTAN.mention)),
               ((0, 3), (4, 8), (9, 14), (15, 24))),
    LinkResult("q2", "forearm braces", ("forearm", "braces"), (), (), (), ((0, 7), (8, 14))),
]


def test_link_outputs(tmp_path: Path) -> None:
    """``elquery link``'s three formats, read back by the evaluation readers and as links."""
    metadata = {"command": "link", "artefacts": {"index": "f2aa41e335621e43"}}
    write_results(RESULTS, tmp_path / "run.elq", "elq", "tag", metadata)
    assert read_elq(tmp_path / "run.elq") == {
        "q1": frozenset({frozenset({NYC.entity, MANHATTAN.entity}), frozenset({MANHATTAN.entity})}), "q2": frozenset()}
    assert read_sidecar(tmp_path / "run.elq") == metadata
    write_results(RESULTS, tmp_path / "run.trec", "trec", "tag")
    assert read_trec_run(tmp_path / "run.trec") == {"q1": {NYC.entity: 24.0, MANHATTAN.entity: 12.5}}
    assert not sidecar_path(tmp_path / "run.trec").exists() and read_sidecar(tmp_path / "run.trec") == {}
    write_results(RESULTS, tmp_path / "run.jsonl", "jsonl", "tag", metadata)
    assert read_jsonl(tmp_path / "run.jsonl") == [{**jsonl_record(r), "provenance": metadata} for r in RESULTS]
    assert json.loads(json.dumps(jsonl_record(RESULTS[1]))) == {
        "qid": "q2", "query": "forearm braces", "tokens": ["forearm", "braces"], "offsets": [[0, 7], [8, 14]],
        "mentions": [], "interpretations": [], "ranking": []}
    links = read_links(tmp_path / "run.jsonl", lambda entity: entity)
    assert {qid: [(link.entity, link.score) for link in found] for qid, found in links.items()} == \
        {"q1": [(NYC.entity, 24.0), (MANHATTAN.entity, 12.5)]}
