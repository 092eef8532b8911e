"""Interpretation finding (methods.md §5): Greedy Interpretation Finding (GIF, Algorithm 1) and
the TopRanked baseline.

Mentions are compared as token spans, not strings (a deliberate difference from the published
code, see methods.md §5): "york" is not contained in "new yorker", and "new york" and
"new jersey" in "new york new jersey" do not overlap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import fsum

from elquery.linking.types import Interpretation, MappedEntity, ScoredMention


def triple_order(triple: ScoredMention) -> tuple[float, int, str, int]:
    """The deterministic processing order of methods.md §5: score descending, then span start,
    then entity id; remaining ties (same entity, same start, same score) put the longer span
    first."""
    return (-triple.score, triple.mention.start, triple.entity, -triple.mention.end)


def prune_by_score(triples: Iterable[ScoredMention], threshold: float) -> list[ScoredMention]:
    """Algorithm 1, step 1: keep triples with score >= s, in :func:`triple_order`."""
    return sorted((t for t in triples if t.score >= threshold), key=triple_order)


def prune_containment(ordered: Iterable[ScoredMention]) -> list[ScoredMention]:
    """Algorithm 1, step 2: in the given (descending score) order, drop a triple whose span
    contains, is contained in, or equals the span of an already kept triple."""
    kept: list[ScoredMention] = []
    for triple in ordered:
        span = triple.mention
        if not any(span.contains(k.mention) or k.mention.contains(span) for k in kept):
            kept.append(triple)
    return kept


def create_interpretations(ordered: Iterable[ScoredMention]) -> list[list[ScoredMention]]:
    """Algorithm 1, step 3: starting from one empty interpretation, add each triple to every
    interpretation none of whose mentions it overlaps; a triple that overlaps all of them starts
    a new interpretation of its own."""
    groups: list[list[ScoredMention]] = [[]]
    for triple in ordered:
        added = False
        for group in groups:
            if not any(triple.mention.overlaps(member.mention) for member in group):
                group.append(triple)
                added = True
        if not added:
            groups.append([triple])
    return [group for group in groups if group]


def interpretation(members: Iterable[ScoredMention]) -> Interpretation:
    """An interpretation of ``members`` (ordered by span) scored by the mean member score. An
    interpretation is a set of entities: an entity named by several disjoint spans keeps only its
    best annotation (first in :func:`triple_order`), counted once in the mean."""
    best: dict[str, ScoredMention] = {}
    for triple in sorted(members, key=triple_order):
        best.setdefault(triple.entity, triple)
    annotations = tuple(sorted(best.values(), key=lambda t: (t.mention.start, t.mention.end, t.entity)))
    return Interpretation(annotations, fsum(t.score for t in annotations) / len(annotations))


def distinct(interpretations: Iterable[Interpretation]) -> list[Interpretation]:
    """Interpretations by score descending (ties by sorted entity ids); of several with the same
    entity set only the first in that order is kept (methods.md §5: reported once)."""
    ranked = sorted(interpretations, key=lambda i: (-i.score, sorted(i.entities)))
    seen: set[frozenset[str]] = set()
    result = []
    for candidate in ranked:
        if candidate.entities not in seen:
            seen.add(candidate.entities)
            result.append(candidate)
    return result


def gif(triples: Iterable[ScoredMention], threshold: float) -> list[Interpretation]:
    """GIF (methods.md §5, Algorithm 1) with score threshold s = ``threshold``; returns the
    distinct interpretations, best first, or [] when no triple survives pruning."""
    kept = prune_containment(prune_by_score(triples, threshold))
    return distinct(interpretation(group) for group in create_interpretations(kept))


def top_ranked(ranking: Sequence[MappedEntity], triples: Iterable[ScoredMention]) -> list[Interpretation]:
    """TopRanked baseline (methods.md §5): one interpretation holding the top entity of the
    method's semantic-mapping ``ranking`` (:meth:`LinkingMethod.rank
    <elquery.linking.methods.LinkingMethod.rank>`, so Eq. 11's longest spans for CMNS) with the
    mention of its best triple, or [] without candidates."""
    if not ranking:
        return []
    top = ranking[0]
    best = next(t for t in triples if t.entity == top.entity and t.mention == top.mention and t.score == top.score)
    return [interpretation([best])]
