"""What a linking method is: a :class:`LinkingMethod` entry of the registry
(:data:`elquery.linking.methods.METHODS`), its typed parameters and how their values are resolved
(:class:`MethodValues`: given, else a params file's, else the demo's default, else the default).

A method either ranks candidates for the :class:`~elquery.linking.linker.Linker` pipeline
(methods.md §1: mention detection and candidate ranking by the method's :class:`CandidateRanking`,
then interpretation finding by GIF or TopRanked, ``finders``), or finds its own interpretations
(TAGME, ``finders == ()``, with its own linker). Every door (``elquery link``, the Python API,
params files, experiment configs, the service) reads the entry, so each accepts and refuses the
same values with the same message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from elquery.base import ElqueryError
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.linking.ranking import rank_entities
from elquery.linking.types import Interpretation, MappedEntity, ScoredMention
from elquery.registry import Parameter, require_parameters, validate_parameters

if TYPE_CHECKING:
    from elquery.linking.batch import OpenLinker
    from elquery.linking.params import LinkingParams

GIF, TOP_RANKED = "gif", "top-ranked"
FINDERS = (GIF, TOP_RANKED)
"""The interpretation finders of the Linker pipeline (methods.md §5): GIF and TopRanked."""
FINDER_LABELS = {GIF: "GIF", TOP_RANKED: "TopRanked"}

ARTEFACTS = {"index": "an entity index", "surface_forms": "a surface-form store", "tagme": "a TAGME artefact",
             "model": "a model file"}
"""The kinds of artefact a method reads, as messages name them."""

SYMBOLS = {"commonness_threshold": "c", "gif_threshold": "s"}
"""The short names of thresholds in summaries (``GIF-MLMcg (c=0.1, s=20)``) and metavars."""


def commonness_threshold(default: float) -> Parameter:
    """The commonness threshold c of web matches (methods.md §3, Eq. 10)."""
    return Parameter("commonness_threshold", float, default, "commonness threshold c of web matches, '>=' "
                     "(methods.md §3)", minimum=0.0, maximum=1.0)


def gif_threshold(default: float, demo: float | None = None) -> Parameter:
    """GIF's score threshold s (methods.md §5), with the demo knowledge base's default."""
    return Parameter("gif_threshold", float, default, "GIF score threshold s (methods.md §5)", demo_default=demo,
                     minimum=0.0)


class CandidateRanking(Protocol):
    """A method's candidate ranking over its open artefacts (methods.md §4): the scored
    (mention, entity) triples of a query, the input of interpretation finding."""

    def scored(self, query: str, tokens: Sequence[str]) -> list[ScoredMention]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class RankingInputs:
    """What a method's :class:`CandidateRanking` is made of: the artefacts (paths, opened and closed
    by it, or open objects), the resolved parameter values, the whitelist and the query limit."""

    artefacts: Mapping[str, object]
    values: Mapping[str, Any]
    whitelist: frozenset[str] | None = None
    max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS


@dataclass(frozen=True)
class LinkOptions:
    """The settings of a linker besides its method's parameters: TopRanked instead of GIF, the
    entity whitelist, the query limit, tuned thresholds (a params file) and the demo's defaults."""

    top_ranked: bool = False
    whitelist: frozenset[str] | None = None
    max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS
    params: LinkingParams | None = None
    demo: bool = False


Factory = Callable[["LinkingMethod", Mapping[str, object], Mapping[str, Any], LinkOptions], "OpenLinker"]


@dataclass(frozen=True)
class LinkingMethod:
    """One linking method of the registry.

    ``parameters`` are its typed parameters (defaults, the demo's, ranges, help); ``artefacts``
    the kinds of :data:`ARTEFACTS` it reads; ``finders`` the interpretation finders it works with
    (:data:`FINDERS`, or ``()`` when it finds its own interpretations, then ``interpretations``
    finds them from its scored triples and a score threshold); ``factory`` builds its linker from
    artefacts, the given parameter values and :class:`LinkOptions`; ``ranking`` builds the
    candidate ranking the Linker pipeline runs (methods with finders). ``longest_spans`` applies
    Eq. 11's rule to the semantic-mapping ranking (CMNS). ``tuned`` names the parameters an
    experiment tunes and a params file holds; ``score_threshold`` the one applied to the scored
    triples after candidate ranking (GIF's s; TAGME's rho_NA), which an experiment sweeps over
    cached triples. ``option`` is the repeatable ``NAME=VALUE`` flag that carries the parameters on
    the command line (TAGME's ``--tagme-param``; None: a flag per parameter). ``check`` checks the
    files its parameters name against the artefacts, before any work (LTR's model)."""

    name: str
    display: str
    summary: str
    parameters: tuple[Parameter, ...]
    artefacts: tuple[str, ...]
    finders: tuple[str, ...]
    factory: Factory
    ranking: Callable[[RankingInputs], CandidateRanking] | None = None
    longest_spans: bool = False
    tuned: tuple[str, ...] = ("commonness_threshold", "gif_threshold")
    score_threshold: str = "gif_threshold"
    interpretations: Callable[[Sequence[ScoredMention], float], list[Interpretation]] | None = None
    option: str | None = None
    check: Callable[[Mapping[str, object], Mapping[str, Any]], None] | None = None

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called ``name``, if the method has one."""
        return next((p for p in self.parameters if p.name == name), None)

    def rank(self, triples: Sequence[ScoredMention]) -> list[MappedEntity]:
        """Semantic mapping (methods.md §1, §4) of the method's scored triples."""
        return rank_entities(triples, self.longest_spans)

    def label(self, finder: str | None) -> str:
        """The method's name in results: ``GIF-MLMcg``, ``TopRanked-CMNS``, ``TAGME``."""
        return self.display if finder is None else f"{FINDER_LABELS[finder]}-{self.display}"

    def values(self, given: Mapping[str, Any], params: LinkingParams | None = None, demo: bool = False) -> MethodValues:
        """The parameter values of a linker given ``given`` (validated here), ``params`` and ``demo``."""
        return MethodValues(self, given, params, demo)

    def open(self, artefacts: Mapping[str, object], given: Mapping[str, Any] | None = None,
             options: LinkOptions = LinkOptions()) -> OpenLinker:
        """The method's linker over ``artefacts`` (kind -> path or open object) with the ``given``
        parameter values (the others resolved by :class:`MethodValues`)."""
        if options.top_ranked and TOP_RANKED not in self.finders:
            raise ElqueryError(f"{self.name} finds its own interpretations; TopRanked does not apply")
        for kind in self.artefacts:  # an artefact a parameter names (LTR's model) is that parameter's
            if self.parameter(kind) is None and artefacts.get(kind) is None:
                raise ElqueryError(f"method {self.name} needs {ARTEFACTS[kind]}")
        return self.factory(self, artefacts, dict(given or {}), options)


@dataclass(frozen=True)
class MethodValues:
    """The parameter values a linker of ``method`` uses: each ``given`` one (validated by the
    registry), else the params file's entry for the method (``params``), else the demo knowledge
    base's default (``demo``), else the method's default. A required parameter must be given."""

    method: LinkingMethod
    given: Mapping[str, Any] = field(default_factory=dict)
    params: LinkingParams | None = None
    demo: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "given", validate_parameters(self.method, self.given))
        require_parameters(self.method, self.given)

    def _tuned(self, name: str) -> Any:
        tuned = self.params.of(self.method.name) if self.params is not None else None
        return None if tuned is None or name not in self.method.tuned else tuned.value(name)

    def value(self, name: str) -> Any:
        """The value of parameter ``name`` (see the class docstring)."""
        parameter = self.method.parameter(name)
        if parameter is None:
            raise ElqueryError(f"{self.method.name} has no parameter {name}")
        for value in (self.given.get(name), self._tuned(name)):
            if value is not None:
                return value
        return parameter.default_for(self.demo)

    def origin(self, name: str) -> str:
        """Where the value of ``name`` comes from: ``given``, ``params file PATH``, ``demo default``
        or ``default``."""
        if self.given.get(name) is not None:
            return "given"
        if self._tuned(name) is not None:
            return self.params.origin  # type: ignore[union-attr]  # _tuned is None without params
        parameter = self.method.parameter(name)
        return "demo default" if self.demo and parameter is not None and parameter.demo_default is not None else "default"

    def origins(self, names: Sequence[str]) -> str:
        """``c: default, s: params file PATH``: the origin of each of ``names``."""
        return ", ".join(f"{SYMBOLS.get(name, name)}: {self.origin(name)}" for name in names)

    def as_dict(self) -> dict[str, Any]:
        """Every parameter's value."""
        return {p.name: self.value(p.name) for p in self.method.parameters}


def demo_artefacts(kinds: Sequence[str]) -> dict[str, Path]:
    """The bundled demo knowledge base's artefacts of ``kinds`` (built on first use)."""
    from elquery.indexing.demo import demo_artefacts as index_and_surface_forms, demo_tagme

    found: dict[str, Path] = {}
    if {"index", "surface_forms"} & set(kinds):
        found["index"], found["surface_forms"] = index_and_surface_forms()
    if "tagme" in kinds:
        found["tagme"] = demo_tagme()
    return found


def pipeline(method: LinkingMethod, artefacts: Mapping[str, object], given: Mapping[str, Any],
             options: LinkOptions) -> OpenLinker:
    """The factory of the methods with finders: a :class:`~elquery.linking.linker.Linker`."""
    from elquery.linking.linker import Linker

    return Linker(artefacts.get("index"), artefacts.get("surface_forms"), method.name,
                  top_ranked=options.top_ranked, whitelist=options.whitelist, max_query_tokens=options.max_query_tokens,
                  params=options.params, demo_defaults=options.demo, **given)


class OwnedArtefacts:
    """The artefacts a candidate ranking opened from paths (and closes), beside the open ones it
    was given (closed by whoever opened them)."""

    def __init__(self) -> None:
        self._owned: list[Any] = []

    def open(self, given: object, opener: Callable[[Any], Any]) -> Any:
        """``given`` itself if it is open, else ``opener(given)``, closed by :meth:`close`."""
        if not isinstance(given, str | Path):
            return given
        opened = opener(given)
        self._owned.append(opened)
        return opened

    def close(self) -> None:
        for artefact in reversed(self._owned):
            artefact.close()
        self._owned = []
