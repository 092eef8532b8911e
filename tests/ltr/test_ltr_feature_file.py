"""Reading a features file for training: what ``elquery ltr train`` refuses, in one line naming the
file and line, before it fits anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.linking.ltr.feature_file import KEY_COLUMNS, read_features
from elquery.linking.ltr.features import FEATURES

HEADER = "\t".join((*KEY_COLUMNS, *FEATURES))


def row(label: str = "1", value: str = "0.5", width: int = len(FEATURES)) -> str:
    return "\t".join(("q1", "rome", "0", "4", "<dbpedia:Rome>", label, *[value] * width))


@pytest.mark.parametrize(("lines", "message"), [
    ([], "empty features file"),
    (["# elquery LTR features (methods.md section 9): 1:len", "1 qid:1 1:1"], "a LETOR features file"),
    ([HEADER], "no rows after the header"),
    ([HEADER, row(width=27)], ":2: 33 columns, the header has 34"),
    ([HEADER, row(label="")], ":2: no label"),
    ([HEADER, row(label="2")], ":2: label '2'; labels are 0 or 1"),
    ([HEADER, row(value="x")], ":2: feature value 'x' is not a number"),
    ([HEADER, row(value="inf")], ":2: a feature value is not finite"),
    ([HEADER.replace("\tlen\t", "\tlen\tlen\t"), row()], ":1: column 'len' given twice"),
])
def test_bad_features_files_are_one_line(lines: list[str], message: str, tmp_path: Path) -> None:
    path = tmp_path / "features.tsv"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(ElqueryError) as error:
        read_features(path)
    assert message in str(error.value) and str(error.value).startswith(str(path))
    assert "\n" not in str(error.value)


def test_rows_read_back_in_feature_order(tmp_path: Path) -> None:
    path = tmp_path / "features.tsv"
    values = [str(n) for n in range(len(FEATURES))]
    path.write_text(HEADER + "\n" + "\t".join(("q1", "rome", "0", "4", "<dbpedia:Rome>", "1", *values)) + "\n"
                    + "\t".join(("q2", "x", "0", "1", "<dbpedia:X>", "0", *values[::-1])) + "\n", encoding="utf-8")
    table = read_features(path)
    assert table.matrix.tolist() == [[float(v) for v in values], [float(v) for v in values[::-1]]]
    assert table.labels.tolist() == [1, 0] and table.qids == ("q1", "q2") and table.queries == 2


def test_ground_truth_is_the_union_of_a_querys_interpretations(tmp_path: Path) -> None:
    """ELQ qrels as published (``qid<TAB>1<TAB>entity...``, a bare qid for a query with none),
    entities named as DBpedia URIs or ``<dbpedia:X>``, read to canonical ids per query."""
    from elquery.linking.ltr.feature_file import read_ground_truth

    qrels = tmp_path / "qrels-elq.txt"
    qrels.write_text("q1\t1\t<dbpedia:Rome>\t<http://dbpedia.org/resource/Italy>\nq1\t1\t<dbpedia:Rome>\n"
                     "q2\n", encoding="utf-8")
    assert read_ground_truth(qrels) == {"q1": frozenset({"<dbpedia:Rome>", "<dbpedia:Italy>"}), "q2": frozenset()}


@pytest.mark.parametrize(("text", "message"), [
    ("q1\t1\t<http://example.org/Rome>\n", "query q1: not an entity id: '<http://example.org/Rome>'"),
    ("q1\tone\t<dbpedia:Rome>\n", ":1: score 'one'"),
    ("\n\n", ":1: empty file"),
])
def test_bad_ground_truth_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    from elquery.linking.ltr.feature_file import read_ground_truth

    qrels = tmp_path / "qrels-elq.txt"
    qrels.write_text(text, encoding="utf-8")
    with pytest.raises(ElqueryError) as raised:
        read_ground_truth(qrels)
    assert message in str(raised.value) and "\n" not in str(raised.value)
