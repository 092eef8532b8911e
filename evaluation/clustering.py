"""WePS clustering metrics (Artiles et al.; methods.md section 7): purity, inverse purity and
F_alpha for alpha = 0.5 and 0.2, macro-averaged over test cases.

purity = sum_i |C_i|/n * max_j |C_i ∩ L_j| / |C_i| for clusters C and gold classes L;
inverse purity swaps clusters and classes; F_alpha = 1 / (alpha/purity + (1-alpha)/inverse
purity). n is the total size of the clusters (the number of documents for a partition).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from statistics import fmean

Clusters = Sequence[Set[str]]


@dataclass(frozen=True)
class ClusteringScores:
    """Purity, inverse purity, F_0.5 and F_0.2 (macro averages for several cases)."""

    purity: float
    inverse_purity: float
    f_05: float
    f_02: float


def purity(clusters: Clusters, classes: Clusters) -> float:
    """Weighted precision of each cluster against its best-matching class."""
    n = sum(len(c) for c in clusters)
    if n == 0:
        raise ValueError("no clustered document")
    return sum(max((len(c & label) for label in classes), default=0) for c in clusters) / n


def inverse_purity(clusters: Clusters, classes: Clusters) -> float:
    """Purity with clusters and classes swapped."""
    return purity(classes, clusters)


def f_alpha(purity_value: float, inverse_purity_value: float, alpha: float) -> float:
    """Van Rijsbergen's F with weight alpha on purity; 0 when either is 0."""
    if purity_value == 0 or inverse_purity_value == 0:
        return 0.0
    return 1 / (alpha / purity_value + (1 - alpha) / inverse_purity_value)


def score_clustering(clusters: Clusters, classes: Clusters) -> ClusteringScores:
    """Scores of one test case; clusters and classes must cover the same documents."""
    if frozenset().union(*clusters) != frozenset().union(*classes):
        raise ValueError("clusters and classes cover different documents")
    p, ip = purity(clusters, classes), inverse_purity(clusters, classes)
    return ClusteringScores(p, ip, f_alpha(p, ip, 0.5), f_alpha(p, ip, 0.2))


def macro_clustering(cases: Mapping[str, tuple[Clusters, Clusters]]) -> ClusteringScores:
    """Macro average over test cases of ``(clusters, classes)``; each F is averaged per case."""
    if not cases:
        raise ValueError("no test case")
    scores = [score_clustering(*cases[name]) for name in sorted(cases)]
    return ClusteringScores(fmean(s.purity for s in scores),
                            fmean(s.inverse_purity for s in scores),
                            fmean(s.f_05 for s in scores), fmean(s.f_02 for s in scores))
