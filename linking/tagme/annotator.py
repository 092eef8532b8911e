"""The TAGME annotator (methods.md §6), as re-implemented for the ECIR 2016 reproducibility study.

1. **Parsing**: every span of the normalized query of up to ``max_tokens`` tokens that is a
   dictionary form with lp(m) >= ``min_lp`` is a spot; its senses are the entities with
   commonness(m, e) >= ``min_commonness``. A spot contained in a longer spot with higher lp is
   dropped (token spans, not strings).
2. **Voting**: vote(m', e) = Σ_{e' in E(m')} rel(e, e') commonness(m', e') / |E(m')|;
   rel(m, e) = Σ over the other spots m' (with senses) of vote(m', e).
3. **Disambiguation by threshold**: among the senses with commonness >= ``tau``, take the top
   ``epsilon`` share by rel(m, e), k = max(1, round(epsilon n)) rounding halves up, counting
   distinct rel values so that ties at the cut stay in, as the published re-implementation does;
   pick the highest commonness (ties: smallest entity id). A spot without such a sense is not
   annotated.
4. **Pruning**: ρ = (lp(m) + coherence(e)) / 2, coherence = mean relatedness of e to the entities
   chosen for the other spots (0 when there are none); keep ρ >= ``rho_na``.

With a whitelist, the annotations are post-filtered: those of entities not listed are dropped
(as the ECIR'16 comparison does, so TAGME and GIF see the same entities).

Each step's loop checks the deadline of the work it runs for (:mod:`elquery.linking.deadline`: a
request of the service), so work past it stops. Parsing is linear in the query's length.

For interpretation finding the annotations form a single interpretation (methods.md §6). TAGME's
annotations may overlap (a spot is kept when the longer spot holding it has lower lp), but an
interpretation's mentions may not (methods.md §1): :meth:`TagmeLinker.link` keeps annotations in
descending ρ (then span start, entity id) and drops any that overlaps one already kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import numpy as np

from elquery.base import ElqueryError
from elquery.kb.normalize import query_tokens, tokenize
from elquery.kb.tagme.artefact import TagmeArtefact
from elquery.kb.tagme.store import Sense
from elquery.linking import batch
from elquery.linking.deadline import check_deadline
from elquery.linking.gif import interpretation, triple_order
from elquery.linking.tagme.params import TagmeParams
from elquery.linking.tagme.relatedness import Relatedness
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS, check_query_length, check_query_limit
from elquery.linking.ranking import rank_entities
from elquery.linking.types import Interpretation, LinkResult, Mention, MappedEntity, ScoredMention
from elquery.formats.queries import check_query_text

T = TypeVar("T")


@dataclass(frozen=True)
class Spot:
    """A parsed span: lp(m) and its senses (commonness >= min_commonness), most common first."""

    mention: Mention
    link_probability: float
    senses: tuple[Sense, ...]


@dataclass(frozen=True)
class SpotChoice:
    """The sense disambiguation chose for a spot, with its vote total rel(m, e)."""

    spot: Spot
    sense: Sense
    relatedness: float


def top_share(count: int, epsilon: float) -> int:
    """k of disambiguation by threshold: round(epsilon count), halves up, at least 1."""
    return max(1, math.floor(epsilon * count + 0.5))


class QueryRelatedness:
    """rel between the senses that may be chosen (rows) and every sense (columns) of one query."""

    def __init__(self, relatedness: Relatedness, spots: list[Spot], tau: float) -> None:
        rows = sorted({s.node for spot in spots for s in spot.senses if s.commonness >= tau})
        columns = sorted({s.node for spot in spots for s in spot.senses})
        self._row = {node: i for i, node in enumerate(rows)}
        self._column = {node: j for j, node in enumerate(columns)}
        self.matrix = relatedness.matrix(rows, columns)

    def votes(self, spot: Spot) -> np.ndarray:
        """vote(m', e) of ``spot`` for every row entity e."""
        columns = [self._column[s.node] for s in spot.senses]
        commonness = np.array([s.commonness for s in spot.senses])
        return self.matrix[:, columns] @ commonness / len(spot.senses)

    def row(self, node: int) -> int:
        return self._row[node]

    def rel(self, a: int, b: int) -> float:
        return float(self.matrix[self._row[a], self._column[b]])


class TagmeLinker:
    """TAGME over an artefact directory; keyword arguments are :class:`TagmeParams` fields. A query
    longer than ``max_query_tokens`` normalized tokens is refused, as by :class:`~elquery.linking.linker.Linker`;
    with a ``whitelist`` only the annotations of its entities are kept."""

    def __init__(self, artefact_dir: Path | str, max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS,
                 whitelist: Iterable[str] | None = None, **params: Any) -> None:
        self.max_query_tokens = check_query_limit(max_query_tokens)
        self.whitelist = None if whitelist is None else frozenset(whitelist)
        self.params = TagmeParams(**params)
        self.artefact = TagmeArtefact(artefact_dir)
        self.relatedness = Relatedness(self.artefact.graph)
        if self.params.max_tokens > self.artefact.max_tokens:
            raise ElqueryError(f"{artefact_dir}: built with spans of up to {self.artefact.max_tokens} tokens, "
                               f"cannot parse spans of {self.params.max_tokens}")

    @classmethod
    def demo(cls, max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS, whitelist: Iterable[str] | None = None,
             **params: Any) -> TagmeLinker:
        """TAGME over the bundled demo knowledge base (its TAGME artefact is built on first use)."""
        from elquery.indexing.demo import demo_tagme

        return cls(demo_tagme(), max_query_tokens, whitelist, **params)

    # --- the steps of methods.md §6 -----------------------------------------------------------

    def spots(self, tokens: list[str]) -> list[Spot]:
        """Parsing: dictionary spans with lp >= min_lp, containment rule applied; by span. Linear in
        the number of tokens: a span is looked up once, and a spot's containing spots are the
        spans of at most ``max_tokens`` tokens around it."""
        found: dict[tuple[int, int], Spot] = {}
        dictionary, longest = self.artefact.dictionary, self.params.max_tokens
        for start in range(len(tokens)):
            check_deadline()
            for end in range(start + 1, min(start + longest, len(tokens)) + 1):
                stats = dictionary.form(" ".join(tokens[start:end]))
                if stats is None or stats.link_probability < self.params.min_lp:
                    continue
                senses = tuple(dictionary.senses(stats, self.params.min_commonness))
                found[start, end] = Spot(Mention(stats.form, start, end), stats.link_probability, senses)
        return [spot for spot in found.values() if not self._inside_likelier(spot, found)]

    def _inside_likelier(self, spot: Spot, found: dict[tuple[int, int], Spot]) -> bool:
        """Whether a longer spot of ``found`` holds ``spot`` and has a higher lp (the containment rule)."""
        start, end, longest = spot.mention.start, spot.mention.end, self.params.max_tokens
        for outer_start in range(max(0, end - longest), start + 1):
            for outer_end in range(end, outer_start + longest + 1):
                outer = found.get((outer_start, outer_end))
                if outer is not None and outer is not spot and outer.link_probability > spot.link_probability:
                    return True
        return False

    def disambiguate(self, spots: list[Spot], related: QueryRelatedness) -> list[SpotChoice]:
        """Voting and disambiguation by threshold; one choice per spot that has a sense with
        commonness >= tau."""
        voters = [spot for spot in spots if spot.senses]
        votes = [related.votes(spot) for spot in voters]
        choices = []
        for spot in spots:
            check_deadline()
            eligible = [s for s in spot.senses if s.commonness >= self.params.tau]
            if not eligible:
                continue
            others = [v for voter, v in zip(voters, votes) if voter is not spot]
            total = np.sum(others, axis=0) if others else np.zeros(len(related.matrix))
            rel = {s.node: float(total[related.row(s.node)]) for s in eligible}
            levels = sorted(set(rel.values()), reverse=True)
            cut = levels[min(top_share(len(eligible), self.params.epsilon), len(levels)) - 1]
            best = min((s for s in eligible if rel[s.node] >= cut), key=lambda s: (-s.commonness, s.entity))
            choices.append(SpotChoice(spot, best, rel[best.node]))
        return choices

    def prune(self, choices: list[SpotChoice], related: QueryRelatedness) -> list[ScoredMention]:
        """Pruning: (mention, entity, ρ) of the choices with ρ >= rho_na, by span."""
        kept = []
        chosen = {c.sense.node for c in choices}
        for choice in choices:
            check_deadline()
            # coherence: mean rel to the distinct other chosen entities, E(T) - {e} (ECIR'16 Eq. 7):
            # the same entity chosen for a nested spot does not vote for itself
            others = [related.rel(choice.sense.node, node) for node in sorted(chosen - {choice.sense.node})]
            coherence = sum(others) / len(others) if others else 0.0
            rho = (choice.spot.link_probability + coherence) / 2
            if rho >= self.params.rho_na:
                kept.append(ScoredMention(choice.spot.mention, choice.sense.entity, rho, choice.sense.commonness))
        return sorted(kept, key=lambda t: (t.mention.start, t.mention.end, t.entity))

    # --- API ----------------------------------------------------------------------------------

    def annotate_tokens(self, tokens: list[str]) -> list[ScoredMention]:
        """TAGME's annotations (mention, entity, score = ρ) of normalized query tokens (of the
        whitelist's entities only, with one)."""
        spots = self.spots(tokens)
        related = QueryRelatedness(self.relatedness, spots, self.params.tau)
        annotations = self.prune(self.disambiguate(spots, related), related)
        if self.whitelist is None:
            return annotations
        return [a for a in annotations if a.entity in self.whitelist]

    def annotate(self, query: str) -> list[ScoredMention]:
        """TAGME's annotations of a query (methods.md §3 normalization), by span; they may overlap."""
        tokens = query_tokens(check_query_text(query))
        check_query_length(tokens, self.max_query_tokens)
        return self.annotate_tokens(tokens)

    @staticmethod
    def interpretations(annotations: list[ScoredMention]) -> list[Interpretation]:
        """The single interpretation of the annotations (overlaps dropped in ρ order), or []."""
        kept: list[ScoredMention] = []
        for triple in sorted(annotations, key=triple_order):
            if not any(triple.mention.overlaps(k.mention) for k in kept):
                kept.append(triple)
        return [interpretation(kept)] if kept else []

    def link(self, query: str) -> list[Interpretation]:
        """Interpretation finding: one interpretation, or none (methods.md §6)."""
        return self.interpretations(self.annotate(query))

    def result(self, query: str, qid: str = "") -> LinkResult:
        """Everything ``elquery link`` writes for one query: the annotations as scored mentions,
        the single interpretation, and the annotated entities ranked by ρ (semantic mapping)."""
        normalized = tokenize(check_query_text(query, qid or None))
        tokens = [t.text for t in normalized]
        check_query_length(tokens, self.max_query_tokens)
        annotations = self.annotate_tokens(tokens)
        return LinkResult(qid, query, tuple(t.text for t in normalized), tuple(annotations),
                          tuple(self.interpretations(annotations)), tuple(rank_entities(annotations)),
                          tuple((t.start, t.end) for t in normalized))

    def rank(self, query: str) -> list[MappedEntity]:
        """Semantic mapping: the annotated entities by ρ, each with its best mention."""
        return list(self.result(query).ranking)

    def factory(self) -> batch.Factory:
        """A picklable maker of this linker, for other processes (each opens the artefact itself)."""
        return partial(TagmeLinker, self.artefact.directory, self.max_query_tokens, self.whitelist, **asdict(self.params))

    def link_many(self, queries: Iterable[tuple[str, str]], workers: int = 1,
                  encode: Callable[[LinkResult], T] = batch._same) -> Iterator[T]:  # type: ignore[assignment]  # T = LinkResult by default: python/mypy#3737
        """``encode(result)`` (default: the :class:`LinkResult`) of ``(qid, query)`` pairs, in input
        order; ``workers`` > 1 spreads them over that many processes (:meth:`factory`)."""
        yield from batch.link_many(self, self.factory(), queries, workers, encode)

    def describe(self) -> str:
        """The method and its parameters, e.g. ``TAGME (rho_na=0.1, tau=0.02, ...)``."""
        return "TAGME (" + ", ".join(f"{name}={value:g}" for name, value in asdict(self.params).items()) + ")"

    def close(self) -> None:
        self.artefact.close()

    def __enter__(self) -> TagmeLinker:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
