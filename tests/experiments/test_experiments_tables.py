"""Markdown tables in the ICTIR'15 layout with significance markers (methods.md §7-8)."""

from __future__ import annotations

import pytest

from elquery.experiments.tables import (IF_COLUMNS, Column, figure, markdown_table, marker,
                                        significance_note)

QIDS = ("q1", "q2", "q3", "q4", "q5", "q6")
BASE = dict(zip(QIDS, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)))                # mean .35
HIGHLY = dict(zip(QIDS, (0.3, 0.42, 0.49, 0.61, 0.7, 0.8)))           # mean .5533, p = 7e-8
SIGNIFICANT = dict(zip(QIDS, (0.3, 0.5, 0.3, 0.6, 0.5, 0.7)))         # mean .4833, p = 0.043
SAME_MEAN = dict(zip(QIDS, (0.0, 0.3, 0.3, 0.4, 0.6, 0.5)))           # mean .35, p = 1
COLUMNS = (Column("strict F", "strict.F"), Column("lean F", "lean.F"))


def test_table_of_known_scores() -> None:
    rows = {
        "TAGME": {"strict.F": BASE, "lean.F": BASE},
        "GIF-CMNS": {"strict.F": SIGNIFICANT, "lean.F": SAME_MEAN},
        "GIF-MLMcg": {"strict.F": HIGHLY, "lean.F": {q: 1.0 for q in QIDS}},
    }
    assert markdown_table(rows, COLUMNS, baseline="TAGME") == (
        "| method | strict F | lean F |\n"
        "|---|---:|---:|\n"
        "| TAGME | .3500 | .3500 |\n"
        "| GIF-CMNS | .4833† | .3500 |\n"
        "| GIF-MLMcg | .5533‡ | 1.0000‡ |\n"
    )
    assert significance_note("TAGME") == (
        "† p < 0.05, ‡ p < 0.01: two-sided paired t-test against TAGME (a difference in either "
        "direction).\n")


def test_table_without_baseline_and_paper_layout() -> None:
    rows = {"KB": {"recall": {"q1": 0.5, "q2": 1.0}}, "Web": {"recall": {}}}
    assert markdown_table(rows, (Column("recall", "recall"),), first_header="source") == (
        "| source | recall |\n|---|---:|\n| KB | .7500 |\n| Web | - |\n")
    header = markdown_table({"m": {c.metric: BASE for c in IF_COLUMNS}}, IF_COLUMNS).splitlines()[0]
    assert header == "| method | strict P | strict R | strict F | lean P | lean R | lean F |"


def test_figures_and_markers() -> None:
    assert [figure(v) for v in (0.66474, 1.0, 0.0, 0.07)] == [".6647", "1.0000", ".0000", ".0700"]
    assert [marker(p) for p in (0.001, 0.01, 0.049, 0.05)] == ["‡", "†", "†", ""]


def test_baseline_must_score_the_same_queries() -> None:
    rows = {"a": {"strict.F": BASE}, "b": {"strict.F": {"q1": 1.0, "q2": 0.0}}}
    with pytest.raises(ValueError, match="different queries"):
        markdown_table(rows, COLUMNS[:1], baseline="a")
    with pytest.raises(ValueError, match="not a row"):
        markdown_table(rows, COLUMNS[:1], baseline="c")
