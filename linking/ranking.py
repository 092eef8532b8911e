"""Semantic mapping (methods.md §1, §4): the entities of a query ranked from the scored
(mention, entity) triples of candidate ranking, each entity with its best mention.

CMNS ranks with Eq. 11's longest-span rule (``longest_spans_only``): only the triples whose span
has the largest matched length count. Interpretation finding with CMNS still sees every candidate
span (GIF's containment pruning then keeps the most common of nested spans).
"""

from __future__ import annotations

from collections.abc import Iterable

from elquery.linking.types import MappedEntity, ScoredMention


def longest_spans(triples: Iterable[ScoredMention]) -> list[ScoredMention]:
    """Eq. 11's restriction: only the triples whose span has the largest length l."""
    triples = list(triples)
    longest = max((t.mention.length for t in triples), default=0)
    return [t for t in triples if t.mention.length == longest]


def rank_entities(triples: Iterable[ScoredMention], longest_spans_only: bool = False) -> list[MappedEntity]:
    """Each entity with its best (mention, score), by score descending, then entity id; with
    ``longest_spans_only`` only spans of the longest matched length count (Eq. 11)."""
    if longest_spans_only:
        triples = longest_spans(triples)
    best: dict[str, ScoredMention] = {}
    for triple in sorted(triples, key=lambda t: (-t.score, t.mention.start, -t.mention.end)):
        best.setdefault(triple.entity, triple)
    ranked = sorted(best.values(), key=lambda t: (-t.score, t.entity))
    return [MappedEntity(t.entity, t.score, t.mention) for t in ranked]
