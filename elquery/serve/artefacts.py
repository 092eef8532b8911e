"""The artefacts one worker process of the service serves, opened once: the entity index, the
surface-form store, the TAGME artefact (optional), the searcher and the linkers made from them."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elquery.indexing.entity_index import EntityIndex
from elquery.indexing.provenance import run_metadata
from elquery.indexing.surface_forms.store import SurfaceFormStore
from elquery.linking.linker import Linker
from elquery.linking.mentions import DEFAULT_MAX_QUERY_TOKENS
from elquery.linking.mlm_scores import IndexScorer
from elquery.linking.params import TAGME, LinkingParams
from elquery.retrieval.searcher import Searcher
from elquery.serve.example import Example, candidate_queries, find_example, thresholds


@dataclass
class Artefacts:
    """The artefacts of one worker, opened once: index, surface forms, TAGME (optional)."""

    index: Path
    surface_forms: Path
    tagme: Path | None = None
    demo_thresholds: bool = False
    params: LinkingParams | None = None
    """Tuned thresholds (``elquery serve --params``), used where a request gives none."""

    def __post_init__(self) -> None:
        self.entity_index = EntityIndex(self.index)
        self.scorer = IndexScorer(self.index)
        self.store = SurfaceFormStore(self.surface_forms)
        self.searcher = Searcher(self.entity_index)
        self._linkers: dict[tuple[Any, ...], Linker] = {}
        self._lock = threading.Lock()
        self.provenance = run_metadata("serve", {"index": self.index, "surface_forms": self.surface_forms,
                                                 "tagme": self.tagme})
        self.tagme_linker = None
        if self.tagme is not None:
            from elquery.linking.tagme import TagmeLinker

            tuned = self.params.of(TAGME) if self.params is not None else None
            self.tagme_linker = TagmeLinker(self.tagme, **({} if tuned is None else {"rho_na": tuned.rho_na}))
        self._example: Example | None = None

    def linker(self, method: str, commonness_threshold: float | None, gif_threshold: float | None,
               top_ranked: bool, max_query_tokens: int) -> Linker:
        """The linker of these settings, made once (a Linker is thread-safe; they share the
        open artefacts); at most 64 settings are kept. A threshold not given comes from the params
        file, else the demo's or the method's default (:meth:`LinkerConfig.origin`)."""
        key = (method, commonness_threshold, gif_threshold, top_ranked, max_query_tokens)
        with self._lock:
            linker = self._linkers.get(key)
            if linker is None:
                if len(self._linkers) >= 64:
                    self._linkers.pop(next(iter(self._linkers)))
                linker = self._linkers[key] = Linker(self.scorer, self.store, method, commonness_threshold,
                                                     gif_threshold, top_ranked, max_query_tokens=max_query_tokens,
                                                     params=self.params, demo_defaults=self.demo_thresholds)
        return linker

    def _default_linker(self, method: str) -> Linker:
        return self.linker(method, None, None, False, DEFAULT_MAX_QUERY_TOKENS)

    def thresholds(self) -> dict[str, Any]:
        """Per method, the thresholds a request that gives none links with, and where each comes
        from (params file, demo default or default)."""
        tagme = None
        if self.tagme_linker is not None:
            tuned = self.params is not None and self.params.of(TAGME) is not None
            tagme = (self.tagme_linker.params.rho_na, self.params.origin if tuned else "default")  # type: ignore[union-attr]
        return thresholds(self._default_linker, tagme)

    def example(self) -> Example:
        """The page's starting query, found once (:mod:`elquery.serve.example`)."""
        if self._example is None:
            candidates = candidate_queries(self.entity_index, self.store, self.demo_thresholds)
            self._example = find_example(candidates, self._default_linker)
        return self._example
