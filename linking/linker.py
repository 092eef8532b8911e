"""Entity linking in queries (methods.md §1): mention detection (§3) -> candidate entity ranking
(§4, the method's :class:`~elquery.linking.methods.CandidateRanking`) -> interpretation finding
(§5, GIF or TopRanked), for every method of the registry with finders (CMNS, MLM, MLMc, MLMcg, LTR;
:data:`elquery.linking.methods.METHODS`).

``Linker(index, surface_forms, method="mlmcg").link("new york pizza manhattan")`` returns the
interpretations, ``.rank(query)`` the semantic-mapping ranking, ``.result(query)`` both (and the
scored candidates), ``.link_many(queries, workers=N)`` runs a batch over worker processes.

A parameter not given (the commonness threshold c, GIF's score threshold s, ...) comes from the
params file of ``elquery experiment`` (``params=``, :mod:`elquery.linking.params`) where it has the
method, else from the demo defaults (on the demo KB, :meth:`Linker.demo`), else from the method's
default (:class:`~elquery.linking.methods.MethodValues`); :meth:`LinkerConfig.origin` says which.
Each method's module explains its defaults (e.g. :mod:`elquery.linking.methods.mlmcg`: s = 20 over
all of DBpedia, 0.25 on the demo KB); on any other knowledge base choose s by cross-validation
(methods.md §7, ``elquery experiment``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from elquery.base import ElqueryError
from elquery.kb.normalize import tokenize
from elquery.linking import batch
from elquery.linking.gif import gif, top_ranked
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS, check_query_length, check_query_limit
from elquery.linking.methods import DEFAULT_METHOD, GIF, METHODS, TOP_RANKED, LinkingMethod, MethodValues, RankingInputs
from elquery.linking.methods.method import ARTEFACTS, SYMBOLS
from elquery.linking.params import LinkingParams, load_params
from elquery.linking.types import Interpretation, LinkResult, MappedEntity
from elquery.retrieval.queries import check_query_text

T = TypeVar("T")

_SHORT = {symbol: name for name, symbol in SYMBOLS.items()}


@dataclass(frozen=True)
class LinkerConfig:
    """The settings of a :class:`Linker`; with artefact paths, enough to rebuild it in a worker.
    ``given`` holds the method's parameter values given (validated by the registry)."""

    index: Path | None
    surface_forms: Path | None
    method: str = DEFAULT_METHOD
    given: Mapping[str, Any] = field(default_factory=dict)
    top_ranked: bool = False
    whitelist: frozenset[str] | None = None
    max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS
    params: LinkingParams | None = None
    """Tuned thresholds, used where none is given (:mod:`elquery.linking.params`)."""
    demo_defaults: bool = False
    """The demo knowledge base's defaults (a parameter's ``demo_default``)."""

    def __post_init__(self) -> None:
        check_query_limit(self.max_query_tokens)
        entry = METHODS.get(self.method)
        if entry.ranking is None:
            raise ElqueryError(f"method {self.method} finds its own interpretations, not through a Linker; "
                               "open its linker with elquery.linking.open_linker")
        values = MethodValues(entry, self.given, self.params, self.demo_defaults)
        object.__setattr__(self, "given", values.given)
        if self.top_ranked and values.given.get(entry.score_threshold) is not None:
            raise ElqueryError("a GIF threshold does not apply to TopRanked")

    @property
    def entry(self) -> LinkingMethod:
        return METHODS.get(self.method)

    @property
    def values(self) -> MethodValues:
        """The method's parameter values and where they come from."""
        return MethodValues(self.entry, self.given, self.params, self.demo_defaults)

    @property
    def c(self) -> float:
        """Commonness threshold c: the given one, else the params file's, else the method's default."""
        return self.values.value("commonness_threshold")

    @property
    def s(self) -> float:
        """GIF threshold s: the given one, else the params file's, else the demo's or the method's default."""
        return self.values.value("gif_threshold")

    def origin(self, threshold: str) -> str:
        """Where threshold ``"c"`` or ``"s"`` (or any parameter, by name) comes from: ``given``,
        ``params file PATH``, ``demo default`` or ``default``."""
        return self.values.origin(_SHORT.get(threshold, threshold))

    @property
    def shown(self) -> tuple[str, ...]:
        """The tuned parameters that apply (GIF's s not with TopRanked)."""
        entry = self.entry
        return tuple(n for n in entry.tuned if not (self.top_ranked and n == entry.score_threshold))

    def origins(self) -> str:
        """``c: default, s: params file PATH`` (c only for TopRanked)."""
        return self.values.origins(self.shown)


class Linker:
    """Links queries against one knowledge base with a method of the registry that has finders:
    its candidate ranking (:attr:`LinkingMethod.ranking <elquery.linking.methods.LinkingMethod.ranking>`)
    over the artefacts it reads, then GIF or TopRanked.

    ``index`` and ``surface_forms`` are paths (opened here; close them with :meth:`close` or
    ``with``) or open objects (the MLM methods take a
    :class:`~elquery.linking.methods.mlm.CandidateScorer` as the index, mention detection a
    :class:`~elquery.linking.methods.detection.SpanMatcher` as the store); CMNS needs no index
    (``None``). ``commonness_threshold``, ``gif_threshold`` and the method's other ``parameters``
    (LTR's ``model``) not given come from ``params`` (a params file of ``elquery experiment`` or
    its :class:`LinkingParams`) where it has the method, else from the method's defaults (with
    ``demo_defaults``, the demo knowledge base's); ``top_ranked`` replaces GIF by the TopRanked
    baseline; ``whitelist`` keeps only the listed entities; a query longer than
    ``max_query_tokens`` normalized tokens is refused (:class:`ElqueryError`). A value the method's
    registry entry refuses is one :class:`ElqueryError` line, as on the command line.

    Mention detection costs O(query length x the store's longest form) in time and memory.
    A linker is safe to share between threads (the store opens one SQLite connection per thread,
    the index answers from static Java calls).
    """

    def __init__(
        self,
        index: Path | str | object | None,
        surface_forms: Path | str | object | None,
        method: str = DEFAULT_METHOD,
        commonness_threshold: float | None = None,
        gif_threshold: float | None = None,
        top_ranked: bool = False,
        whitelist: Iterable[str] | None = None,
        max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS,
        params: LinkingParams | Path | str | None = None,
        demo_defaults: bool = False,
        **parameters: Any,
    ) -> None:
        given = {"commonness_threshold": commonness_threshold, "gif_threshold": gif_threshold, **parameters}
        self.config = LinkerConfig(
            index=_path_of(index),
            surface_forms=_path_of(surface_forms),
            method=method,
            given={name: value for name, value in given.items() if value is not None},
            top_ranked=top_ranked,
            whitelist=frozenset(whitelist) if whitelist is not None else None,
            max_query_tokens=max_query_tokens,
            params=load_params(params) if isinstance(params, str | Path) else params,
            demo_defaults=demo_defaults,
        )
        entry = self.config.entry
        artefacts = {"index": index, "surface_forms": surface_forms}
        for kind, artefact in artefacts.items():
            if kind in entry.artefacts and artefact is None:
                raise ElqueryError(f"method {method} needs {ARTEFACTS[kind]}")
        assert entry.ranking is not None  # LinkerConfig refuses a method without
        self._entry = entry
        self._gif_threshold: float = self.config.s  # resolved once: MethodValues validates on every build
        self._ranking = entry.ranking(RankingInputs({k: v for k, v in artefacts.items() if k in entry.artefacts},
                                                    self.config.values.as_dict(), self.config.whitelist,
                                                    self.config.max_query_tokens))

    def close(self) -> None:
        """Close the artefacts this linker opened from paths."""
        self._ranking.close()

    def __enter__(self) -> Linker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @classmethod
    def from_config(cls, config: LinkerConfig) -> Linker:
        return cls(config.index, config.surface_forms, config.method, top_ranked=config.top_ranked,
                   whitelist=config.whitelist, max_query_tokens=config.max_query_tokens, params=config.params,
                   demo_defaults=config.demo_defaults, **config.given)

    @classmethod
    def demo(cls, method: str = DEFAULT_METHOD, commonness_threshold: float | None = None,
             gif_threshold: float | None = None, top_ranked: bool = False,
             whitelist: Iterable[str] | None = None, max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS,
             params: LinkingParams | Path | str | None = None, **parameters: Any) -> Linker:
        """A linker over the bundled demo knowledge base (its index and surface forms are built
        on first use), with the demo's defaults (e.g. GIF-MLMcg's s = 0.25)."""
        from elquery.indexing.demo import demo_artefacts

        index, surface_forms = demo_artefacts()
        return cls(index, surface_forms, method, commonness_threshold, gif_threshold, top_ranked, whitelist,
                   max_query_tokens, params, demo_defaults=True, **parameters)

    def describe(self) -> str:
        """The method and its settings, e.g. ``GIF-MLMcg (c=0.1, s=20)``."""
        config = self.config
        values = config.values
        settings = ", ".join(f"{SYMBOLS.get(name, name)}={values.value(name):g}" for name in config.shown)
        return f"{config.entry.label(TOP_RANKED if config.top_ranked else GIF)} ({settings})"

    # --- one query ------------------------------------------------------------------------------

    def result(self, query: str, qid: str = "") -> LinkResult:
        """Mentions, scored candidates, interpretations and ranking of one query; a blank query is
        an :class:`ElqueryError` (:func:`~elquery.retrieval.queries.check_query_text`)."""
        check_query_text(query, qid or None)
        config = self.config
        normalized = tokenize(query)
        tokens = [t.text for t in normalized]
        check_query_length(tokens, config.max_query_tokens)
        scored = self._ranking.scored(query, tokens)
        ranking = self._entry.rank(scored)
        interpretations = top_ranked(ranking, scored) if config.top_ranked else gif(scored, self._gif_threshold)
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
        config = self.config
        paths = {"index": config.index, "surface_forms": config.surface_forms}
        if any(paths[kind] is None for kind in paths if kind in config.entry.artefacts):
            raise ElqueryError("linking in other processes needs a linker built from artefact paths")
        return partial(Linker.from_config, config)

    def link_many(self, queries: Iterable[tuple[str, str]], workers: int = 1,
                  encode: Callable[[LinkResult], T] = batch._same) -> Iterator[T]:  # type: ignore[assignment]  # T = LinkResult by default: python/mypy#3737
        """``encode(result)`` (default: the :class:`LinkResult`) of ``(qid, query)`` pairs, in input
        order; ``workers`` > 1 spreads the queries over that many processes (:meth:`factory`), which
        encode their results themselves (e.g. into a run's text, :class:`~elquery.linking.output.RunFormat`)."""
        workers = batch.worker_count(queries, workers)
        yield from batch.link_many(self, self.factory() if workers > 1 else None, queries, workers, encode)


def _path_of(artefact: object) -> Path | None:
    return Path(artefact) if isinstance(artefact, str | Path) else getattr(artefact, "path", None)
