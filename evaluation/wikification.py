"""Position-aware wikification P/R (Fedorenko et al.; methods.md section 7).

Items are (start, end, concept) per document, where the concept may be :data:`NOT_IN_KB` for a
mention of something outside the knowledge base; an item counts only if offsets and concept are
equal. P = |exp ∩ act| / |act|, R = |exp ∩ act| / |exp| over the items of all expected
documents (and per document). Documents missing from ``actual`` are empty; documents not in
``expected`` are ignored; empty sets follow the Eq. 2-3 convention.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from elquery.evaluation.setmetrics import PRF, set_prf

NOT_IN_KB = "NOT_IN_KB"
Item = tuple[int, int, str]


@dataclass(frozen=True)
class WikificationScores:
    """Scores over all items and per document."""

    overall: PRF
    per_document: Mapping[str, PRF]


def _items(doc: str, items: Iterable[Item]) -> frozenset[tuple[str, int, int, str]]:
    out = set()
    for start, end, concept in items:
        if not 0 <= start < end:
            raise ValueError(f"document {doc!r}: bad offsets ({start}, {end})")
        out.add((doc, start, end, concept))
    return frozenset(out)


def wikification_scores(expected: Mapping[str, Iterable[Item]],
                        actual: Mapping[str, Iterable[Item]]) -> WikificationScores:
    """Position-aware P, R and F."""
    exp = {d: _items(d, expected[d]) for d in sorted(expected)}
    act = {d: _items(d, actual.get(d, ())) for d in exp}
    overall = set_prf(frozenset().union(*act.values()), frozenset().union(*exp.values()))
    return WikificationScores(overall, {d: set_prf(act[d], exp[d]) for d in exp})
