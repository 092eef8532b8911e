"""Entity linking in queries (methods.md §1): mention detection (§3) -> candidate entity ranking
(§4) -> interpretation finding (§5, GIF or TopRanked).

``Linker(index, surface_forms, method="mlmcg").link("new york pizza manhattan")`` returns the
interpretations, ``.rank(query)`` the semantic-mapping ranking, ``.result(query)`` both (and the
scored candidates), ``.link_many(queries, workers=N)`` runs a batch over worker processes.

Default GIF thresholds s (methods.md §5; interpretation finding keeps a (mention, entity) pair
whose score is at least s):

* CMNS scores are commonness values, independent of the knowledge base's size: s = 0.1 keeps the
  senses that at least one web annotation in ten gives the mention (:data:`DEFAULT_GIF_THRESHOLD`
  and :data:`DEMO_GIF_THRESHOLD` alike).
* MLM, MLMc and MLMcg scores contain exp(log score(e, q)) of Eq. 16, a likelihood ratio against
  the collection model, so their scale grows with the collection: a query term the entity
  matches scores about P(t|theta_e) / P(t|C), and P(t|C) shrinks as the collection grows. Over
  all of DBpedia the published MLMcg runs used s = 20, elquery's default
  (:data:`DEFAULT_GIF_THRESHOLD`). The bundled demo KB (54 entities) gives ratios two orders of
  magnitude smaller, so :meth:`Linker.demo` (the CLI without ``--index``) uses
  :data:`DEMO_GIF_THRESHOLD`: s = 0.25 for MLMcg (below the weakest intended pair of the demo
  queries, Barack_Obama for "obama's mother" at 0.31, above the wrong senses that survive
  containment pruning) and s = 1 for MLM and MLMc (no commonness factor).

For any other knowledge base choose s by cross-validation (methods.md §7, ``elquery experiment``)
and give the linker its params file (``params=``, :mod:`elquery.linking.params`): a threshold not
given comes from the params file's entry for the method, else from the demo defaults (on the demo
KB), else from the method's default; :meth:`LinkerConfig.origin` says which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol, TypeVar

from elquery.base import ElqueryError
from elquery.linking import batch, methods
from elquery.linking.gif import gif, top_ranked
from elquery.indexing.normalize import tokenize
from elquery.linking.mentions import (DEFAULT_MAX_QUERY_TOKENS, FormEntityLike, check_query_length,
                                      check_query_limit, detect)
from elquery.linking.params import LinkingParams, MethodParams, load_params
from elquery.linking.types import Interpretation, LinkResult, MappedEntity
from elquery.retrieval.queries import check_query_text

T = TypeVar("T")

DEFAULT_METHOD = "mlmcg"
DEFAULT_GIF_THRESHOLD = {"cmns": 0.1, "mlm": 20.0, "mlmc": 20.0, "mlmcg": 20.0}
DEMO_GIF_THRESHOLD = {"cmns": 0.1, "mlm": 1.0, "mlmc": 1.0, "mlmcg": 0.25}


class SpanMatcher(Protocol):
    """What the linker needs from a surface-form store
    (:class:`elquery.indexing.surface_forms.store.SurfaceFormStore`): for every span ``(start, end)`` of
    the normalized tokens that is a known surface form, the entities it may name."""

    def lookup_spans(self, tokens: Sequence[str]) -> Mapping[tuple[int, int], Sequence[FormEntityLike]]: ...


class CandidateScorer(Protocol):
    """What the linker needs from the retrieval scorer: exp(log score(e, q)) of Eq. 16 for each
    candidate entity of a query."""

    def exp_scores(self, query: str, entities: Sequence[str]) -> Mapping[str, float]: ...


@dataclass(frozen=True)
class LinkerConfig:
    """The settings of a :class:`Linker`; with artefact paths, enough to rebuild it in a worker."""

    index: Path | None
    surface_forms: Path | None
    method: str = DEFAULT_METHOD
    commonness_threshold: float | None = None
    gif_threshold: float | None = None
    top_ranked: bool = False
    whitelist: frozenset[str] | None = None
    max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS
    params: LinkingParams | None = None
    """Tuned thresholds, used where none is given (:mod:`elquery.linking.params`)."""
    demo_defaults: bool = False
    """Default GIF thresholds of the demo knowledge base (:data:`DEMO_GIF_THRESHOLD`)."""

    def __post_init__(self) -> None:
        check_query_limit(self.max_query_tokens)
        if self.method not in methods.METHODS:
            raise ElqueryError(f"unknown method {self.method!r}; methods are {', '.join(methods.METHODS)}")
        for name in ("commonness_threshold", "gif_threshold"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ElqueryError(f"{name.replace('_', ' ')} must be a number >= 0, got {value}")
        if self.top_ranked and self.gif_threshold is not None:
            raise ElqueryError("a GIF threshold does not apply to TopRanked")

    @property
    def _tuned(self) -> MethodParams:
        tuned = self.params.of(self.method) if self.params is not None else None
        return tuned if tuned is not None else MethodParams()

    @property
    def c(self) -> float:
        """Commonness threshold c: the given one, else the params file's, else the method's default."""
        for value in (self.commonness_threshold, self._tuned.commonness_threshold):
            if value is not None:
                return value
        return methods.DEFAULT_COMMONNESS_THRESHOLD[self.method]

    @property
    def s(self) -> float:
        """GIF threshold s: the given one, else the params file's, else the demo's or the method's default."""
        for value in (self.gif_threshold, self._tuned.gif_threshold):
            if value is not None:
                return value
        return (DEMO_GIF_THRESHOLD if self.demo_defaults else DEFAULT_GIF_THRESHOLD)[self.method]

    def origin(self, threshold: str) -> str:
        """Where threshold ``"c"`` or ``"s"`` comes from: ``given``, ``params file PATH``,
        ``demo default`` or ``default``."""
        given, tuned = {"c": (self.commonness_threshold, self._tuned.commonness_threshold),
                        "s": (self.gif_threshold, self._tuned.gif_threshold)}[threshold]
        if given is not None:
            return "given"
        if tuned is not None:
            return self.params.origin  # type: ignore[union-attr]
        return "demo default" if threshold == "s" and self.demo_defaults else "default"

    def origins(self) -> str:
        """``c: default, s: params file PATH`` (c only for TopRanked)."""
        return ", ".join(f"{name}: {self.origin(name)}" for name in ("c", "s") if name == "c" or not self.top_ranked)


class Linker:
    """Links queries against one knowledge base: an entity index (for MLM scores) and a
    surface-form store (for candidates and commonness).

    ``index`` and ``surface_forms`` are paths (opened here; close them with :meth:`close` or
    ``with``) or open objects implementing :class:`CandidateScorer` / :class:`SpanMatcher`; CMNS
    needs no index (``None``). ``commonness_threshold`` and ``gif_threshold`` not given come from
    ``params`` (a params file of ``elquery experiment`` or its :class:`LinkingParams`) where it has
    the method, else default per method (:data:`methods.DEFAULT_COMMONNESS_THRESHOLD`,
    :data:`DEFAULT_GIF_THRESHOLD`, or with ``demo_defaults`` :data:`DEMO_GIF_THRESHOLD`); ``top_ranked``
    replaces GIF by the TopRanked baseline; ``whitelist`` keeps only the listed entities; a query
    longer than ``max_query_tokens`` normalized tokens is refused (:class:`ElqueryError`).

    Mention detection costs O(query length x the store's longest form) in time and memory.
    A linker is safe to share between threads (the store opens one SQLite connection per thread,
    the index answers from static Java calls).
    """

    def __init__(
        self,
        index: Path | str | CandidateScorer | None,
        surface_forms: Path | str | SpanMatcher,
        method: str = DEFAULT_METHOD,
        commonness_threshold: float | None = None,
        gif_threshold: float | None = None,
        top_ranked: bool = False,
        whitelist: Iterable[str] | None = None,
        max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS,
        params: LinkingParams | Path | str | None = None,
        demo_defaults: bool = False,
    ) -> None:
        self.config = LinkerConfig(
            index=_path_of(index),
            surface_forms=_path_of(surface_forms),
            method=method,
            commonness_threshold=commonness_threshold,
            gif_threshold=gif_threshold,
            top_ranked=top_ranked,
            whitelist=frozenset(whitelist) if whitelist is not None else None,
            max_query_tokens=max_query_tokens,
            params=load_params(params) if isinstance(params, str | Path) else params,
            demo_defaults=demo_defaults,
        )
        self._matcher = _open_matcher(surface_forms)
        self._scorer = _open_scorer(index, method) if methods.uses_mlm(method) else None
        opened = ((self._matcher, surface_forms), (self._scorer, index))
        self._owned = [source for source, given in opened if source is not None and isinstance(given, str | Path)]

    def close(self) -> None:
        """Close the artefacts this linker opened from paths."""
        for artefact in self._owned:
            artefact.close()
        self._owned = []

    def __enter__(self) -> Linker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def from_config(cls, config: LinkerConfig) -> Linker:
        assert config.surface_forms is not None
        return cls(config.index, config.surface_forms, config.method, config.commonness_threshold,
                   config.gif_threshold, config.top_ranked, config.whitelist, config.max_query_tokens,
                   config.params, config.demo_defaults)

    @classmethod
    def demo(cls, method: str = DEFAULT_METHOD, commonness_threshold: float | None = None,
             gif_threshold: float | None = None, top_ranked: bool = False,
             whitelist: Iterable[str] | None = None, max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS,
             params: LinkingParams | Path | str | None = None) -> Linker:
        """A linker over the bundled demo knowledge base (its index and surface forms are built
        on first use), with the demo's GIF thresholds (:data:`DEMO_GIF_THRESHOLD`) by default."""
        from elquery.indexing.demo import demo_artefacts

        index, surface_forms = demo_artefacts()
        return cls(index, surface_forms, method, commonness_threshold, gif_threshold, top_ranked, whitelist,
                   max_query_tokens, params, demo_defaults=True)

    def describe(self) -> str:
        """The method and its settings, e.g. ``GIF-MLMcg (c=0.1, s=20)``."""
        config = self.config
        name = {"cmns": "CMNS", "mlm": "MLM", "mlmc": "MLMc", "mlmcg": "MLMcg"}[config.method]
        if config.top_ranked:
            return f"TopRanked-{name} (c={config.c:g})"
        return f"GIF-{name} (c={config.c:g}, s={config.s:g})"

    # --- one query ------------------------------------------------------------------------------

    def result(self, query: str, qid: str = "") -> LinkResult:
        """Mentions, scored candidates, interpretations and ranking of one query; a blank query is
        an :class:`ElqueryError` (:func:`~elquery.retrieval.queries.check_query_text`)."""
        check_query_text(query, qid or None)
        config = self.config
        normalized = tokenize(query)
        tokens = [t.text for t in normalized]
        check_query_length(tokens, config.max_query_tokens)
        candidates = detect(tokens, self._matcher.lookup_spans(tokens), config.c, config.whitelist)
        mlm_scores: Mapping[str, float] = {}
        if self._scorer is not None:
            # MLM scores the whole query: once per entity; entities outside the index drop out
            mlm_scores = self._scorer.exp_scores(query, sorted({c.entity for c in candidates})) if candidates else {}
            candidates = [c for c in candidates if c.entity in mlm_scores]
        scored = methods.score(config.method, candidates, mlm_scores)
        ranking = methods.rank_entities(config.method, scored)
        interpretations = top_ranked(config.method, scored) if config.top_ranked else gif(scored, config.s)
        return LinkResult(qid, query, tuple(tokens), tuple(scored), tuple(interpretations), tuple(ranking),
                          tuple((t.start, t.end) for t in normalized))

    def link(self, query: str) -> list[Interpretation]:
        """Interpretation finding (methods.md §1): the query's interpretations, best first."""
        return list(self.result(query).interpretations)

    def rank(self, query: str) -> list[MappedEntity]:
        """Semantic mapping (methods.md §1): the entities the query mentions, best first."""
        return list(self.result(query).ranking)

    # --- batches --------------------------------------------------------------------------------

    def factory(self) -> batch.Factory:
        """A picklable maker of this linker, for other processes (each opens the artefacts itself,
        so the linker must have been built from paths)."""
        if self.config.surface_forms is None or (self._scorer is not None and self.config.index is None):
            raise ElqueryError("linking in other processes needs a linker built from artefact paths")
        return partial(Linker.from_config, self.config)

    def link_many(self, queries: Iterable[tuple[str, str]], workers: int = 1,
                  encode: Callable[[LinkResult], T] = batch._same) -> Iterator[T]:  # type: ignore[assignment]
        """``encode(result)`` (default: the :class:`LinkResult`) of ``(qid, query)`` pairs, in input
        order; ``workers`` > 1 spreads the queries over that many processes (:meth:`factory`), which
        encode their results themselves (e.g. into a run's text, :class:`~elquery.linking.output.RunFormat`)."""
        workers = batch.worker_count(queries, workers)
        yield from batch.link_many(self, self.factory() if workers > 1 else None, queries, workers, encode)


def _path_of(artefact: object) -> Path | None:
    return Path(artefact) if isinstance(artefact, str | Path) else getattr(artefact, "path", None)


def _open_matcher(surface_forms: Path | str | SpanMatcher) -> SpanMatcher:
    if not isinstance(surface_forms, str | Path):
        return surface_forms
    from elquery.indexing.surface_forms.store import SurfaceFormStore

    return SurfaceFormStore(surface_forms)


def _open_scorer(index: Path | str | CandidateScorer | None, method: str) -> CandidateScorer:
    if index is None:
        raise ElqueryError(f"method {method} needs an entity index")
    if not isinstance(index, str | Path):
        return index
    from elquery.linking.mlm_scores import IndexScorer

    return IndexScorer(index)
