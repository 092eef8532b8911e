"""Set-based precision, recall and F shared by the interpretation, TAGME and wikification
metrics (methods.md section 7).

The empty-set convention is the one of Eq. 2-3: P = 1 when the system returns nothing and the
ground truth is empty, 0 when it returns nothing but the ground truth is not empty; R is
symmetric.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass
from statistics import fmean


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F of one query (or one pooled collection)."""

    p: float
    r: float
    f: float

    def as_dict(self) -> dict[str, float]:
        return {"P": self.p, "R": self.r, "F": self.f}


@dataclass(frozen=True)
class Aggregate:
    """Macro average over queries, with both F definitions of methods.md section 7.

    ``f`` is the mean of the per-query F (what the ICTIR'15 tables report); ``f_of_means`` is the
    F of the averaged P and R (what the published strict evaluation script prints).
    """

    p: float
    r: float
    f: float
    f_of_means: float
    queries: int

    def as_dict(self) -> dict[str, float]:
        return {"P": self.p, "R": self.r, "F": self.f, "F_of_means": self.f_of_means}


def f_measure(p: float, r: float) -> float:
    """Harmonic mean of P and R (Eq. 7); 0 when both are 0."""
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def prf_from_counts(matched_system: int, n_system: int, matched_gold: int, n_gold: int) -> PRF:
    """P = matched system items / system items, R = matched gold items / gold items, with the
    empty-set convention of Eq. 2-3."""
    if n_system:
        p = matched_system / n_system
    else:
        p = 1.0 if n_gold == 0 else 0.0
    if n_gold:
        r = matched_gold / n_gold
    else:
        r = 1.0 if n_system == 0 else 0.0
    return PRF(p, r, f_measure(p, r))


def set_prf(system: Set[object], gold: Set[object]) -> PRF:
    """P = |S ∩ G| / |S|, R = |S ∩ G| / |G| (the pattern of Eq. 2-5)."""
    common = len(system & gold)
    return prf_from_counts(common, len(system), common, len(gold))


def macro_average(scores: Sequence[PRF]) -> Aggregate:
    """Macro average of per-query scores, reporting both F definitions."""
    if not scores:
        raise ValueError("cannot average over zero queries")
    p = fmean(s.p for s in scores)
    r = fmean(s.r for s in scores)
    return Aggregate(p, r, fmean(s.f for s in scores), f_measure(p, r), len(scores))
