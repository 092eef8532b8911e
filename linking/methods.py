"""Candidate entity ranking (methods.md §4): CMNS (Eq. 11), MLM (Eq. 12-16), MLMc, MLMcg (Eq. 17).

Every method scores each (mention span, entity) candidate; the triples feed interpretation
finding (§5), and :func:`rank_entities` turns them into the semantic-mapping ranking, where an
entity keeps its best mention. MLM scores the whole query, so an entity's MLM score is the same
for all of its mentions: the caller computes it once per entity (``mlm_scores``: entity ->
exp(log score(e, q)) of Eq. 16) and passes it in.

CMNS scores a (mention, entity) pair by commonness(m, e); the longest-span rule of Eq. 11 applies
to the semantic-mapping ranking only, so interpretation finding with CMNS still sees every
candidate span (GIF's containment pruning then keeps the most common of nested spans).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from elquery.base import ElqueryError
from elquery.linking.types import Candidate, MappedEntity, ScoredMention

METHODS = ("cmns", "mlm", "mlmc", "mlmcg")

# Commonness threshold c of each method (methods.md §3-4): MLM scores all candidates (c = 0),
# MLMc and MLMcg filter at 0.1; CMNS uses 0.1 as the published CMNS code did.
DEFAULT_COMMONNESS_THRESHOLD = {"cmns": 0.1, "mlm": 0.0, "mlmc": 0.1, "mlmcg": 0.1}

# methods.md §4, Eq. 17: the commonness used for a KB-only match (commonness 0).
COMMONNESS_FLOOR = 1e-5


def uses_mlm(method: str) -> bool:
    """True for the methods that need the MLM score of each candidate entity."""
    return method != "cmns"


def score_cmns(candidates: Iterable[Candidate]) -> list[ScoredMention]:
    """CMNS (Eq. 11) per pair: score(m, e) = commonness(m, e)."""
    return [ScoredMention(c.mention, c.entity, c.commonness, c.commonness) for c in candidates]


def score_mlm(candidates: Iterable[Candidate], mlm_scores: Mapping[str, float]) -> list[ScoredMention]:
    """MLM and MLMc (Eq. 16): score(m, e) = exp(log score(e, q)), the same for all mentions of e."""
    return [ScoredMention(c.mention, c.entity, mlm_scores[c.entity], c.commonness) for c in candidates]


def score_mlmcg(candidates: Iterable[Candidate], mlm_scores: Mapping[str, float]) -> list[ScoredMention]:
    """MLMcg (Eq. 17): score(m, e) = commonness(m, e) x exp(log score(e, q)); a KB-only match
    (commonness 0) uses :data:`COMMONNESS_FLOOR` instead."""
    return [
        ScoredMention(c.mention, c.entity, (c.commonness or COMMONNESS_FLOOR) * mlm_scores[c.entity], c.commonness)
        for c in candidates
    ]


def score(method: str, candidates: Sequence[Candidate], mlm_scores: Mapping[str, float]) -> list[ScoredMention]:
    """The (mention, entity, score) triples of ``method`` (one of :data:`METHODS`)."""
    if method == "cmns":
        return score_cmns(candidates)
    if method in ("mlm", "mlmc"):
        return score_mlm(candidates, mlm_scores)
    if method == "mlmcg":
        return score_mlmcg(candidates, mlm_scores)
    raise ElqueryError(f"unknown method {method!r}; methods are {', '.join(METHODS)}")


def longest_spans(triples: Iterable[ScoredMention]) -> list[ScoredMention]:
    """Eq. 11's restriction: only the triples whose span has the largest length l."""
    triples = list(triples)
    longest = max((t.mention.length for t in triples), default=0)
    return [t for t in triples if t.mention.length == longest]


def rank_entities(method: str, triples: Iterable[ScoredMention]) -> list[MappedEntity]:
    """Semantic mapping (methods.md §1, §4): each entity with its best (mention, score), by score
    descending, then entity id. For CMNS only spans of the longest matched length count (Eq. 11)."""
    if method == "cmns":
        triples = longest_spans(triples)
    best: dict[str, ScoredMention] = {}
    for triple in sorted(triples, key=lambda t: (-t.score, t.mention.start, -t.mention.end)):
        best.setdefault(triple.entity, triple)
    ranked = sorted(best.values(), key=lambda t: (-t.score, t.entity))
    return [MappedEntity(t.entity, t.score, t.mention) for t in ranked]
