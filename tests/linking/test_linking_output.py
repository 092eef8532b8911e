"""Run writers of ``elquery link``: elq, trec, jsonl; written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elquery.linking.gif import interpretation
from elquery.linking.output import write_results
from elquery.linking.types import LinkResult, Mention, MappedEntity, ScoredMention

NYC = ScoredMention(Mention("new york", 0, 2), "<dbpedia:New_York_City>", 24.0, 0.6)
PIZZA = ScoredMention(Mention("new york pizza", 0, 3), "<dbpedia:New_York-style_pizza>", 1.8, 0.9)
MANHATTAN = ScoredMention(Mention("manhattan", 3, 4), "<dbpedia:Manhattan>", 12.5, 0.5)
RESULTS = [
    LinkResult("q1", "New York pizza Manhattan", ("new", "york", "pizza", "manhattan"), (NYC, PIZZA, MANHATTAN),
               (interpretation([MANHATTAN, NYC]), interpretation([PIZZA, MANHATTAN])),
               (MappedEntity(NYC.entity, 24.0, NYC.mention), MappedEntity(MANHATTAN.entity, 12.5, MANHATTAN.mention)),
               ((0, 3), (4, 8), (9, 14), (15, 24))),
    LinkResult("q2", "forearm braces", ("forearm", "braces"), (), (), (), ((0, 7), (8, 14))),
]


def test_elq(tmp_path: Path) -> None:
    out = tmp_path / "run.elq"
    assert write_results(RESULTS, out, "elq", "tag") == 2
    assert out.read_text().splitlines() == [
        "q1\t18.25\t<dbpedia:New_York_City>\t<dbpedia:Manhattan>",
        "q1\t7.15\t<dbpedia:New_York-style_pizza>\t<dbpedia:Manhattan>",
        "q2",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["run.elq"]  # no temporary file left


def test_trec(tmp_path: Path) -> None:
    out = tmp_path / "run.trec"
    write_results(RESULTS, out, "trec", "elquery-mlmcg")
    assert out.read_text().splitlines() == [
        "q1 Q0 <dbpedia:New_York_City> 1 24.0 elquery-mlmcg",
        "q1 Q0 <dbpedia:Manhattan> 2 12.5 elquery-mlmcg",
    ]


def test_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    write_results(RESULTS, out, "jsonl", "tag")
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    assert first["tokens"] == ["new", "york", "pizza", "manhattan"]
    assert first["offsets"] == [[0, 3], [4, 8], [9, 14], [15, 24]]
    assert first["mentions"][0] == {"mention": {"text": "new york", "start": 0, "end": 2, "char_start": 0, "char_end": 8},
                                    "entity": "<dbpedia:New_York_City>", "score": 24.0, "commonness": 0.6}
    assert first["interpretations"][0]["score"] == 18.25
    assert [a["entity"] for a in first["interpretations"][1]["annotations"]] == [PIZZA.entity, MANHATTAN.entity]
    assert first["ranking"][1] == {"entity": "<dbpedia:Manhattan>", "score": 12.5,
                                   "mention": {"text": "manhattan", "start": 3, "end": 4, "char_start": 15,
                                               "char_end": 24}}
    assert second == {"qid": "q2", "query": "forearm braces", "tokens": ["forearm", "braces"],
                      "offsets": [[0, 7], [8, 14]], "mentions": [],
                      "interpretations": [], "ranking": []}


def test_failed_write_leaves_no_file(tmp_path: Path) -> None:
    def results():
        yield RESULTS[0]
        raise RuntimeError("boom")

    out = tmp_path / "run.elq"
    out.write_text("old\n")
    with pytest.raises(RuntimeError):
        write_results(results(), out, "elq", "tag")
    assert out.read_text() == "old\n" and len(list(tmp_path.iterdir())) == 1


def test_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    write_results(RESULTS[1:], None, "elq", "tag")
    assert capsys.readouterr().out == "q2\n"
