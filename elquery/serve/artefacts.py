"""The artefacts one worker process of the service serves, opened once: the entity index, the
surface-form store, the TAGME artefact and the LTR model file (both optional), the searcher, and
the linkers of the methods of the registry (:data:`elquery.linking.methods.METHODS`) that these
artefacts serve. A method's parameter naming a file of a kind of artefact (LTR's ``model``) is the
served file of that kind, never a request's."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.formats.link_output import EntityIds
from elquery.kb.entity_index import EntityIndex
from elquery.kb.identifiers import IdentifierTable, Identifiers, table_of_index
from elquery.kb.provenance import run_metadata
from elquery.kb.surface_forms.store import SurfaceFormStore
from elquery.linking.batch import ResultLinker
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.linking.methods import DEFAULT_METHOD, METHODS, LinkingMethod, LinkOptions
from elquery.linking.methods.method import ARTEFACTS, SYMBOLS
from elquery.linking.mlm_scores import IndexScorer
from elquery.linking.params import LinkingParams
from elquery.retrieval.searcher import Searcher
from elquery.serve.example import Example, candidate_queries, find_example
from elquery.serve.warm_up import WARM_UP_SECONDS, WarmUp, warm_up, warm_up_queries

SERVE_FLAGS = {"index": "--index", "surface_forms": "--surface-forms", "tagme": "--tagme", "model": "--model"}
"""The options of ``elquery serve`` giving each kind of artefact a method may read."""
MAX_LINKERS = 64


@dataclass
class Artefacts:
    """The artefacts of one worker, opened once: index, surface forms, TAGME and model (optional)."""

    index: Path
    surface_forms: Path
    tagme: Path | None = None
    demo_thresholds: bool = False
    params: LinkingParams | None = None
    """Tuned thresholds (``elquery serve --params``), used where a request gives none."""
    model: Path | None = None
    """The LTR model file (``elquery serve --model``), trained on features of these artefacts."""

    def __post_init__(self) -> None:
        self.scorer = IndexScorer(self.index)
        self.entity_index: EntityIndex = self.scorer.index  # one open index: one id map, one set of Java caches
        self.store = SurfaceFormStore(self.surface_forms)
        self.searcher = Searcher(self.entity_index)
        self.identifiers = table_of_index(self.index)
        """The index's identifiers table (docs/identifiers.md); None when it has none."""
        self.entity_ids: EntityIds | None = None if self.identifiers is None else KeptIds(self.identifiers)
        """Entities -> their identifiers, from the table opened here (not
        :class:`~elquery.kb.identifiers.EntityIds`, which finds the table by its path, resolved and
        checked on disk, at every call: a sixth of a served answer's identifiers time)."""
        self._open: dict[str, object] = {"index": self.scorer, "surface_forms": self.store}
        if self.tagme is not None:
            self._open["tagme"] = self.tagme
        if self.model is not None:
            self._open["model"] = self.model
        self._linkers: dict[tuple[Any, ...], ResultLinker] = {}
        self._lock = threading.Lock()
        self.provenance = run_metadata("serve", {"index": self.index, "surface_forms": self.surface_forms,
                                                 "tagme": self.tagme})
        self._example: Example | None = None
        self.warmed: WarmUp | None = None
        """What :meth:`warm_up` did; None before it has run (``/ready`` answers 503)."""
        self.model_info = None if self.model is None else model_metadata(self.model)
        for method in self.methods():  # each default linker opened now: a bad artefact stops the start
            self.linker(method)

    def missing(self, method: LinkingMethod) -> str | None:
        """What the service lacks to link with ``method`` (its option, or the kind of artefact), if anything."""
        kind = next((kind for kind in method.artefacts if kind not in self._open), None)
        return None if kind is None else SERVE_FLAGS.get(kind, ARTEFACTS.get(kind, kind))

    def methods(self) -> list[LinkingMethod]:
        """The methods of the registry these artefacts serve, in its order."""
        return [method for method in METHODS if self.missing(method) is None]

    def menu(self) -> list[LinkingMethod]:
        """The methods served, the default one first, then the others in the registry's order:
        the page's menu."""
        return sorted(self.methods(), key=lambda method: method.name != DEFAULT_METHOD)

    def linker(self, method: LinkingMethod, given: Mapping[str, Any] | None = None, top_ranked: bool = False,
               max_query_tokens: int = DEFAULT_MAX_QUERY_TOKENS) -> ResultLinker:
        """The linker of ``method`` with the ``given`` parameter values, made once (a linker is
        thread-safe; they share the open artefacts); at most :data:`MAX_LINKERS` settings are
        kept. A value not given comes from the params file, else the demo's or the method's
        default (:class:`~elquery.linking.methods.MethodValues`)."""
        missing = self.missing(method)
        if missing is not None:
            raise ElqueryError(f"method {method.name}: the service was started without {missing}")
        given = {**(given or {}), **self.files(method)}
        key = (method.name, tuple(sorted(given.items())), top_ranked, max_query_tokens)
        with self._lock:
            linker = self._linkers.get(key)
            if linker is None:
                if len(self._linkers) >= MAX_LINKERS:
                    self._linkers.pop(next(iter(self._linkers)))
                options = LinkOptions(top_ranked, None, max_query_tokens, self.params, self.demo_thresholds)
                linker = self._linkers[key] = method.open(self._open, given, options)
        return linker

    def files(self, method: LinkingMethod) -> dict[str, object]:
        """The served files that are ``method``'s parameters: each parameter naming a file of a kind
        of artefact the service has (LTR's ``model``)."""
        return {p.name: self._open[p.name] for p in method.parameters
                if p.kind is Path and p.name in ARTEFACTS and p.name in self._open}

    def thresholds(self) -> dict[str, Any]:
        """Per method served, the value of each tuned parameter a request that gives none links
        with (``c``, ``s``, ``rho_na``), and where it comes from (params file, demo default or default)."""
        table: dict[str, Any] = {}
        for method in self.methods():
            values = method.values(self.files(method), self.params, self.demo_thresholds)
            table[method.name] = {SYMBOLS.get(name, name): {"value": values.value(name), "origin": values.origin(name)}
                                  for name in method.tuned}
        return table

    def warm_up(self, seconds: float = WARM_UP_SECONDS) -> WarmUp:
        """Warm this worker up for ``seconds`` (:mod:`elquery.serve.warm_up`): its artefacts' files
        read into the page cache as memory allows, the entity-id map,
        the searcher's tie order and the page's example are made (each holds the GIL for up to
        seconds over all of DBpedia: a request would stall every other one of the worker), the
        linker of every method served, with the service's thresholds, links queries made of the
        index's entity titles, and the searcher ranks some of them."""
        linkers = [self.linker(method).result for method in self.methods()]
        served = [path for path in (self.index, self.surface_forms, self.tagme, self.model) if path is not None]
        self.warmed = warm_up(served, [self.entity_index.prepare, self.searcher.prepare, self.example], linkers,
                              self.searcher.rank, warm_up_queries(self.entity_index), seconds)
        return self.warmed

    def example(self) -> Example:
        """The page's starting query, found once (:mod:`elquery.serve.example`)."""
        if self._example is None:
            candidates = candidate_queries(self.entity_index, self.store, self.demo_thresholds)
            # the methods of the menu that find interpretations in the Linker pipeline, in its order
            linkers = [(method.name, self.linker(method)) for method in self.menu() if method.finders]
            self._example = find_example(candidates, linkers)
        return self._example


KEPT_IDS = 1 << 15
"""The entities whose identifiers a worker keeps (about 1 KB each)."""


class KeptIds:
    """Entities -> their :class:`~elquery.kb.identifiers.Identifiers`, read from ``table`` and
    kept, the first read first dropped past ``size`` entities: an entity's identifiers never
    change while the service runs, and a /link answer names about 22 distinct entities, whose
    reading (an SQLite query, the Wikipedia title and URL of each) was a tenth of a served LTR
    request's CPU at full scale. Safe to share between threads."""

    def __init__(self, table: IdentifierTable, size: int = KEPT_IDS) -> None:
        self._table, self._size = table, size
        self._kept: dict[str, Identifiers] = {}
        self._lock = threading.Lock()

    def __call__(self, entities: Iterable[str]) -> dict[str, Identifiers]:
        kept = self._kept
        found = {entity: kept.get(entity) for entity in entities}  # a copy: another thread may drop them next
        missing = [entity for entity, identifiers in found.items() if identifiers is None]
        read = self._table.of_many(missing) if missing else {}
        if read:
            with self._lock:
                for entity, identifiers in read.items():
                    if len(kept) >= self._size:
                        kept.pop(next(iter(kept)))
                    kept[entity] = identifiers
        return {entity: read[entity] if identifiers is None else identifiers for entity, identifiers in found.items()}


def model_metadata(model: Path) -> dict[str, Any]:
    """What ``/stats`` shows of the served LTR model (:class:`~elquery.linking.ltr.model.ModelInfo`):
    its file, the number and names of its features, the forest's size, the learner's parameters
    (seed included), the training data and the provenance ids of the artefacts its features came from."""
    from elquery.linking.ltr.model import LtrModel

    info = LtrModel.read_info(model)
    return {"path": str(model), "feature_count": len(info.features), "features": list(info.features),
            "trees": info.forest.get("trees"), "nodes": info.forest.get("nodes"), "seed": info.learner.get("seed"),
            "learner": info.learner, "training": info.training, "artefacts": info.artefacts,
            "commonness_threshold": info.commonness_threshold, "elquery_version": info.elquery_version}
