"""Query files (TSV, JSON) and TREC run writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.retrieval.queries import QueryRecord, read_queries
from elquery.formats.trec_run import write_run
from elquery.retrieval.searcher import RankedEntity


def test_tsv_queries(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1\tobama family\n\nq2\t  tab\tinside  \n", encoding="utf-8")
    assert read_queries(path) == [QueryRecord("q1", "obama family"), QueryRecord("q2", "tab\tinside")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1\tok\nno tab here\n", r"q\.txt:2: expected 'qid<TAB>query'"),
        ("q1\tok\n\tmissing qid\n", r"q\.txt:2: query id '' must be non-empty and hold no whitespace"),
        ("q1\tok\nq 2\tspace in qid\n", r"q\.txt:2: query id 'q 2' must be non-empty and hold no whitespace"),
        ("q1\tok\nq1\tagain\n", r"q\.txt:2: query id 'q1' given twice \(first at .*q\.txt:1\)"),
        ("q1\tok\nq2\t \t\n", r"q\.txt:2: query 'q2' is blank \(empty or only whitespace\)"),
        ("q1\t" + "x" * (1 << 21) + "\n", r"q\.txt:1: line longer than 1048576 bytes"),
    ],
)
def test_malformed_tsv_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ElqueryError, match=message):
        read_queries(path)


def test_json_queries(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text('{"q2": "second", "q1": " first "}', encoding="utf-8")
    assert read_queries(path) == [QueryRecord("q2", "second"), QueryRecord("q1", "first")]
    for text, message in (('{"q1": 3}', "string query"), ("[1]", "JSON object"), ('{"q1": "a",\n', r"q\.json:2: invalid JSON")):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ElqueryError, match=message):
            read_queries(path)


def test_undecodable_query_file(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_bytes(b"q1\t\xff\xfe\n")
    with pytest.raises(ElqueryError, match="q.txt:1: not valid UTF-8"):
        read_queries(path)


def test_one_rule_for_every_query_reader(tmp_path: Path) -> None:
    """BOM dropped; lines end at \\n only (U+2028, U+0085 stay inside a query); duplicate qids are
    an error in JSON as in TSV."""
    tsv = tmp_path / "q.tsv"
    tsv.write_bytes("\ufeffq1\tline\u2028separator\r\nq2\tnext\u0085line\n".encode("utf-8"))
    assert read_queries(tsv) == [QueryRecord("q1", "line\u2028separator"), QueryRecord("q2", "next\u0085line")]
    json_file = tmp_path / "q.json"
    json_file.write_bytes('\ufeff{"q1": "a", "q2": "b"}'.encode("utf-8"))
    assert [q.qid for q in read_queries(json_file)] == ["q1", "q2"]
    for text, message in (('{"q1": "a", "q1": "b"}', "query id 'q1' given twice"),
                          ('{"q 1": "a"}', "query id 'q 1' must be non-empty and hold no whitespace")):
        json_file.write_text(text, encoding="utf-8")
        with pytest.raises(ElqueryError, match=message):
            read_queries(json_file)


def test_queries_from_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    for data, expected in ((b"q1\tnew york\n", [QueryRecord("q1", "new york")]),
                           (b'{"q9": "rome"}', [QueryRecord("q9", "rome")])):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert read_queries("-") == expected


@pytest.mark.parametrize("name, text", [("empty.tsv", ""), ("blank.tsv", "\n  \n"), ("empty.json", "{}")])
def test_query_file_without_queries_is_an_error(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ElqueryError, match=f"{name}: no queries in this file"):
        read_queries(path)


def test_missing_query_file_is_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ElqueryError, match="missing.tsv: no such query file"):
        read_queries(tmp_path / "missing.tsv")


def test_write_run(tmp_path: Path) -> None:
    out = tmp_path / "run.txt"
    rankings = [("q1", [RankedEntity(1, "<dbpedia:A>", 0.1 + 0.2), RankedEntity(2, "<dbpedia:B>", -1.5)]), ("q2", [])]
    assert write_run(out, rankings, "tag") == 2
    assert out.read_text() == "q1 Q0 <dbpedia:A> 1 0.30000000000000004 tag\nq1 Q0 <dbpedia:B> 2 -1.5 tag\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]


def test_failed_run_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "run.txt"
    with pytest.raises(ElqueryError, match="whitespace"):
        write_run(out, [("q1", [RankedEntity(1, "<dbpedia:A B>", 1.0)])], "tag")
    with pytest.raises(ElqueryError, match="tag"):
        write_run(out, [], "two words")
    assert list(tmp_path.iterdir()) == []


def test_tied_scores_are_evaluated_in_elquerys_order(tmp_path: Path) -> None:
    """Entities tied on score are ranked by id ascending; trec_eval orders ties by docid
    descending. The written run must be evaluated in elquery's order: with the first of two
    tied entities relevant, RR is 1 (the in-memory ranking), not 0.5."""
    from elquery.evaluation import evaluate_rankings, read_trec_qrels, read_trec_run

    ranking = [RankedEntity(1, "<dbpedia:A>", 0.0), RankedEntity(2, "<dbpedia:B>", 0.0),
               RankedEntity(3, "<dbpedia:C>", 0.0), RankedEntity(4, "<dbpedia:D>", -2.0)]
    out, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    write_run(out, [("q1", ranking)], "tag")
    qrels.write_text("q1 0 <dbpedia:A> 1\nq1 0 <dbpedia:C> 1\n", encoding="utf-8")
    written = evaluate_rankings(read_trec_qrels(qrels), read_trec_run(out), ["mrr", "map"])
    assert written.aggregate == {"mrr": 1.0, "map": (1 / 1 + 2 / 3) / 2}
    scores = [float(line.split()[4]) for line in out.read_text().splitlines()]
    assert scores[0] == 0.0 and scores[3] == -2.0
    assert scores[0] > scores[1] > scores[2] > scores[3]
    assert scores[2] == pytest.approx(0.0, abs=1e-300)
