"""TAGME evaluation (methods.md section 7, after the ECIR 2016 reproducibility study):
annotation P/R on (mention, entity) pairs and topics P/R on entities only, micro- and
macro-averaged over the ground-truth documents.

A system pair matches a gold pair when the entities are equal and the mentions are equal or one
contains the other. Mentions are either strings (containment = case-insensitive substring, as
in the published scripts) or ``(start, end)`` offsets (containment of the spans). P counts the
system pairs that match some gold pair, R the gold pairs matched by some system pair. Empty sets
follow the Eq. 2-3 convention; documents missing from the system output count as empty,
documents not in the ground truth are ignored.

Two averages are reported, each labelled. Micro: P and R from the counts pooled over all
documents, F from those. Macro: P and R averaged over documents; its F, the default (``f``), is
the F of those averaged P and R, as the TAGME reproducibility study reports it; the mean of the
per-document F is kept beside it as ``F_mean_per_document``. See docs/evaluation.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from elquery.base import ElqueryError
from elquery.evaluation.setmetrics import PRF, Aggregate, macro_average, prf_from_counts

MentionKey = str | tuple[int, int]
Annotation = tuple[MentionKey, str]


@dataclass(frozen=True)
class TagmeScores:
    """Micro (pooled counts) and macro (mean over documents, both F definitions) scores."""

    micro: PRF
    macro: Aggregate

    @property
    def f(self) -> float:
        """The default F: the F of the macro-averaged P and R."""
        return self.macro.f_of_means

    def as_dict(self) -> dict[str, dict[str, float]]:
        """Labelled figures: micro P/R/F; macro P/R, F of those (``F``) and the mean of the
        per-document F (``F_mean_per_document``)."""
        return {"micro": self.micro.as_dict(),
                "macro": {"P": self.macro.p, "R": self.macro.r, "F": self.macro.f_of_means,
                          "F_mean_per_document": self.macro.f}}


def mentions_match(a: MentionKey, b: MentionKey) -> bool:
    """True when the mentions are equal or one contains the other."""
    if isinstance(a, str) and isinstance(b, str):
        a, b = a.casefold(), b.casefold()
        return a in b or b in a
    if isinstance(a, tuple) and isinstance(b, tuple):
        return (a[0] <= b[0] and b[1] <= a[1]) or (b[0] <= a[0] and a[1] <= b[1])
    raise TypeError("mentions must all be strings or all be (start, end) offsets")


def _counts(system: list[Annotation], gold: list[Annotation]) -> tuple[int, int, int, int]:
    def matches(x: Annotation, y: Annotation) -> bool:
        return x[1] == y[1] and mentions_match(x[0], y[0])

    matched_system = sum(any(matches(s, g) for g in gold) for s in system)
    matched_gold = sum(any(matches(g, s) for s in system) for g in gold)
    return matched_system, len(system), matched_gold, len(gold)


def _aggregate(counts: list[tuple[int, int, int, int]]) -> TagmeScores:
    if not counts:
        raise ElqueryError("the ground truth holds no document")
    pooled = [sum(c[i] for c in counts) for i in range(4)]
    return TagmeScores(prf_from_counts(*pooled),
                       macro_average([prf_from_counts(*c) for c in counts]))


def annotation_scores(gold: Mapping[str, Iterable[Annotation]],
                      system: Mapping[str, Iterable[Annotation]]) -> TagmeScores:
    """Annotation metrics: (mention, entity) pairs with mention containment."""
    return _aggregate([_counts(list(set(system.get(d, ()))), list(set(gold[d])))
                       for d in sorted(gold)])


def topics_scores(gold: Mapping[str, Iterable[str]],
                  system: Mapping[str, Iterable[str]]) -> TagmeScores:
    """Topics metrics: the sets of entities of each document, mentions ignored."""
    counts = []
    for doc in sorted(gold):
        g, s = frozenset(gold[doc]), frozenset(system.get(doc, ()))
        common = len(g & s)
        counts.append((common, len(s), common, len(g)))
    return _aggregate(counts)
