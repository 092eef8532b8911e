"""The backends of experiments. Linking: the linker of each method of the registry
(:data:`elquery.linking.methods.METHODS`: CMNS, MLM, MLMc, MLMcg, LTR through
:class:`elquery.linking.linker.Linker`, TAGME through :class:`elquery.linking.tagme.TagmeLinker`;
methods.md §3-6, §9), and the surface-form store for mention detection (§3), over the artefacts an
experiment description names.

The triples of a method are computed once per (method, c) and the sweep applies each score
threshold afterwards: a method with finders links with TopRanked (the cheapest finder; GIF runs
over the cached triples), a method that applies its threshold itself (TAGME's rho_NA) links with
the threshold at its minimum, so its annotations keep their scores (pruning is the last step of
TAGME, so applying a threshold afterwards equals running it with that threshold). The whitelist
keeps only its entities, in mention detection or, for TAGME and LTR, by post-filtering the
annotations (as the ECIR'16 comparison does), so every method sees the same entities.

Entity retrieval: :class:`SearcherBackend` ranks the whole index with
:class:`elquery.retrieval.searcher.Searcher`, in worker processes as ``elquery rank`` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elquery.kb.surface_forms.store import SurfaceFormStore
from elquery.experiments.config import ExperimentConfig
from elquery.experiments.sweep import Fixed, Progress, file_identity
from elquery.kb.normalize import query_tokens
from elquery.kb.identifiers import table_of_index
from elquery.linking.mentions import detect, read_whitelist
from elquery.linking.methods import METHODS, LinkOptions
from elquery.linking.types import Candidate, LinkResult
from elquery.retrieval.models import Model
from elquery.retrieval.queries import QueryRecord
from elquery.retrieval.searcher import RankedEntity

if TYPE_CHECKING:
    from elquery.retrieval.batch import SearcherPool

CANDIDATES = "candidates"
"""The ``method`` of :meth:`LinkerBackend.identity` that names mention detection."""


class LinkerBackend:
    """Links queries with the configured artefacts, in ``workers`` processes."""

    def __init__(self, config: ExperimentConfig, workers: int = 1) -> None:
        self.config = config
        self.workers = workers
        self.whitelist = None if config.whitelist is None else read_whitelist(config.whitelist, table_of_index(config.index))

    def artefacts(self, method: str) -> dict[str, Path]:
        """The config's artefacts ``method`` reads (``"candidates"``: mention detection)."""
        config = self.config
        paths = {"index": config.index, "surface_forms": config.surface_forms, "tagme": config.tagme}
        kinds = ("surface_forms",) if method == CANDIDATES else METHODS.get(method).artefacts
        return {kind: paths[kind] for kind in kinds if kind in paths}  # type: ignore[misc]  # checked present

    def identity(self, method: str, fixed: Fixed = ()) -> Any:
        """The artefacts ``method`` reads and the files its ``fixed`` parameters name (for the cache keys)."""
        config = self.config
        whitelist = None if config.whitelist is None else file_identity(config.whitelist)
        identity = {kind: file_identity(path) for kind, path in self.artefacts(method).items()}
        identity.update({name: file_identity(Path(value)) for name, value in fixed
                         if METHODS.get(method).parameter(name).kind is Path})  # type: ignore[union-attr]  # fixed names are checked parameters
        return {**identity, "whitelist": whitelist}

    def link(self, method: str, commonness_threshold: float | None, fixed: Fixed, queries: Mapping[str, str],
             progress: Progress) -> Iterator[LinkResult]:
        entry = METHODS.get(method)
        given = dict(fixed)
        if commonness_threshold is not None:
            given["commonness_threshold"] = commonness_threshold
        if not entry.finders:  # the method applies its score threshold itself: keep every triple
            threshold = entry.parameter(entry.score_threshold)
            assert threshold is not None and threshold.minimum is not None
            given[threshold.name] = threshold.minimum
        options = LinkOptions(top_ranked=bool(entry.finders), whitelist=self.whitelist)
        with entry.open(self.artefacts(method), given, options) as linker:
            for result in linker.link_many(queries.items(), workers=self.workers):
                yield result
                progress(1)

    def candidates(self, queries: Mapping[str, str], progress: Progress
                   ) -> Iterator[tuple[str, list[Candidate]]]:
        with SurfaceFormStore(self.config.surface_forms) as store:
            for qid, query in queries.items():
                tokens = query_tokens(query)
                yield qid, detect(tokens, store.lookup_spans(tokens), 0.0, self.whitelist)
                progress(1)


class SearcherBackend:
    """Ranks queries against an entity index in ``workers`` processes (one: in this process),
    with the searchers of ``elquery rank``. The processes start and open the index once, at the
    first ranking (as many as its queries pay for), and serve every run until the backend's
    ``with`` block ends: an experiment's runs do not each start their own."""

    def __init__(self, index: Path, workers: int = 1) -> None:
        self.index = index
        self.workers = workers
        self._opened = ExitStack()
        self._searchers: SearcherPool | None = None

    def __enter__(self) -> SearcherBackend:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._searchers = None
        self._opened.__exit__(*exc)

    def identity(self) -> Any:
        return {"index": file_identity(self.index)}

    def rank(self, model: Model, queries: Mapping[str, str], k: int, progress: Progress, links: Path | None = None
             ) -> Iterator[tuple[str, list[RankedEntity]]]:
        from elquery.retrieval.batch import rank_many, searcher_pool, workers_for
        from elquery.retrieval.links import with_links

        records = [QueryRecord(qid, text) for qid, text in queries.items()]
        if links is not None:
            records = with_links(records, links, self.index)
        if self._searchers is None:
            pool = searcher_pool(str(self.index), workers_for(len(records), self.workers))
            self._searchers = self._opened.enter_context(pool)
        yield from rank_many(str(self.index), records, model, k, self._searchers, progress)
