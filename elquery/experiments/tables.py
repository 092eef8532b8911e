"""Markdown tables in the layout of the ICTIR'15 tables (methods.md §8) and of the
DBpedia-Entity v2 paper's results table (Hasibi et al., SIGIR'17, Table 3: a column group per
query category and one for all queries, NDCG@10 and NDCG@100 in each): one row per method,
figures as macro averages of per-query scores printed like the papers (``.6647``), and
significance markers from the two-sided paired t-test (methods.md §7) against a named baseline:
``†`` for p < 0.05 and ``‡`` for p < 0.01.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from statistics import fmean

from elquery.evaluation.significance import paired_t_test

# metric -> query id -> score
PerQuery = Mapping[str, Mapping[str, float]]

SIGNIFICANT = 0.05
HIGHLY_SIGNIFICANT = 0.01


@dataclass(frozen=True)
class Column:
    """A table column: its header and the metric of the per-query scores it averages."""

    header: str
    metric: str


IF_COLUMNS = (Column("strict P", "strict.P"), Column("strict R", "strict.R"),
              Column("strict F", "strict.F"), Column("lean P", "lean.P"),
              Column("lean R", "lean.R"), Column("lean F", "lean.F"))
SM_COLUMNS = (Column("MAP", "map"), Column("S@1", "success@1"), Column("MRR", "mrr"))
MD_COLUMNS = (Column("recall", "recall"),)
TOTAL = "Total"


def category_metric(category: str, metric: str) -> str:
    """The per-query scores' key of ``metric`` restricted to a query category."""
    return f"{category}:{metric}"


def category_columns(categories: Sequence[str], metrics: Sequence[str]) -> tuple[Column, ...]:
    """The DBpedia-Entity v2 layout: a group of ``metrics`` columns per category, then the
    ``Total`` group over all queries; headers ``INEX-LD NDCG@10``, ..., ``Total MAP@100``."""
    groups: list[tuple[str, Callable[[str], str]]] = [(name, partial(category_metric, name)) for name in categories]
    groups.append((TOTAL, lambda m: m))
    return tuple(Column(f"{name} {metric.upper()}", key(metric)) for name, key in groups for metric in metrics)


def figure(value: float) -> str:
    """A score as the paper prints it: four decimals, no leading zero (``.6647``, ``1.0000``)."""
    text = f"{value:.4f}"
    return text[1:] if text.startswith("0.") else text


def marker(p_value: float) -> str:
    """``‡`` for p < 0.01, ``†`` for p < 0.05, else nothing."""
    if p_value < HIGHLY_SIGNIFICANT:
        return "‡"
    return "†" if p_value < SIGNIFICANT else ""


def significance(scores: Mapping[str, float], baseline: Mapping[str, float]) -> float | None:
    """p-value of the two-sided paired t-test over the queries both score, or None with fewer
    than 2 of them."""
    if set(scores) != set(baseline):
        raise ValueError("a method and its baseline are scored on different queries")
    qids = sorted(scores)
    if len(qids) < 2:
        return None
    return paired_t_test([scores[q] for q in qids], [baseline[q] for q in qids]).p_value


def markdown_table(rows: Mapping[str, PerQuery], columns: Sequence[Column],
                   baseline: str | None = None, first_header: str = "method") -> str:
    """A Markdown table with one row per entry of ``rows`` (in order) and one column per
    :class:`Column`; each cell is the mean of the per-query scores, marked when it differs
    significantly from the ``baseline`` row's (a row name)."""
    if baseline is not None and baseline not in rows:
        raise ValueError(f"baseline {baseline!r} is not a row of the table")
    lines = ["| " + " | ".join([first_header, *(c.header for c in columns)]) + " |",
             "|---|" + "---:|" * len(columns)]
    for name, per_query in rows.items():
        cells = [name]
        for column in columns:
            scores = per_query[column.metric]
            cell = figure(fmean(scores.values())) if scores else "-"
            if baseline is not None and name != baseline and scores:
                p_value = significance(scores, rows[baseline][column.metric])
                cell += "" if p_value is None else marker(p_value)
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def significance_note(baseline: str) -> str:
    """The legend printed under a table with markers."""
    return (f"† p < {SIGNIFICANT}, ‡ p < {HIGHLY_SIGNIFICANT}: two-sided paired t-test against "
            f"{baseline} (a difference in either direction).\n")
