"""Domain types of entity linking in queries (methods.md §1, §3-5).

A :class:`Mention` is a token span ``[start, end)`` of the normalized query; a :class:`Candidate`
pairs it with an entity found by mention detection; a :class:`ScoredMention` is the
(mention, entity, score) triple that candidate ranking hands to interpretation finding; an
:class:`Interpretation` is a set of scored mentions that do not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Mention:
    """A contiguous span of normalized query tokens: ``tokens[start:end]`` joined by spaces."""

    text: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"bad token span [{self.start}, {self.end}) for mention {self.text!r}")

    @property
    def length(self) -> int:
        """Number of tokens."""
        return self.end - self.start

    def contains(self, other: Mention) -> bool:
        """True if ``other``'s span lies within this span (equal spans contain each other)."""
        return self.start <= other.start and other.end <= self.end

    def overlaps(self, other: Mention) -> bool:
        """True if the two spans share a token position (methods.md §5)."""
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Candidate:
    """A (mention, entity) pair from mention detection (methods.md §3): ``commonness`` is
    commonness(m, e) from the web source (0 for a KB-only match), ``in_kb`` says whether the
    mention equals a normalized alias of the entity (M_kb)."""

    mention: Mention
    entity: str
    commonness: float
    in_kb: bool


@dataclass(frozen=True)
class ScoredMention:
    """A (mention, entity, score) triple of candidate ranking (methods.md §4)."""

    mention: Mention
    entity: str
    score: float
    commonness: float


@dataclass(frozen=True)
class Interpretation:
    """A set of non-overlapping linked mentions; ``score`` is the mean of its members' scores
    (methods.md §5). ``annotations`` are ordered by span start."""

    annotations: tuple[ScoredMention, ...]
    score: float

    @property
    def entities(self) -> frozenset[str]:
        return frozenset(a.entity for a in self.annotations)


@dataclass(frozen=True)
class MappedEntity:
    """One entry of the semantic-mapping ranking (methods.md §1, §4): an entity with the score
    and the mention of its best-scoring (mention, entity) pair."""

    entity: str
    score: float
    mention: Mention


@dataclass(frozen=True)
class LinkResult:
    """Everything linking computed for one query: its normalized ``tokens`` (with their character
    ``offsets`` in ``query``), the scored candidates (``scored``, the input of interpretation
    finding), the ``interpretations`` (IF) and the entity ``ranking`` (SM)."""

    qid: str
    query: str
    tokens: tuple[str, ...]
    scored: tuple[ScoredMention, ...]
    interpretations: tuple[Interpretation, ...]
    ranking: tuple[MappedEntity, ...]
    offsets: tuple[tuple[int, int], ...]
    """Per token, its character span ``[start, end)`` in ``query`` (:func:`elquery.indexing.normalize.tokenize`)."""

    def char_span(self, mention: Mention) -> tuple[int, int]:
        """The character offsets ``[start, end)`` of a mention in the original query text:
        ``query[start:end]`` is what the user typed for it."""
        return self.offsets[mention.start][0], self.offsets[mention.end - 1][1]
