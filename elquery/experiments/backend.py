"""The backends of experiments. Linking: :class:`elquery.linking.linker.Linker` for CMNS, MLM, MLMc and
MLMcg (methods.md §3-4), :class:`elquery.linking.tagme.TagmeLinker` for TAGME (§6), and the surface-form
store for mention detection (§3), over the artefacts an experiment description names.

TAGME runs with rho_NA = 0, so its annotations keep their rho and the sweep applies each rho_NA
threshold afterwards (pruning is the last step of TAGME, so this equals running it with that
threshold). With a whitelist, TAGME's annotations are post-filtered with it (the entities not
listed are dropped, as the ECIR'16 comparison does), so TAGME and GIF see the same entities.

Entity retrieval: :class:`SearcherBackend` ranks the whole index with
:class:`elquery.retrieval.searcher.Searcher`, in worker processes as ``elquery rank`` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from elquery.indexing.surface_forms.store import SurfaceFormStore
from elquery.experiments.config import TAGME, ExperimentConfig
from elquery.experiments.sweep import Progress, file_identity
from elquery.linking.linker import Linker
from elquery.indexing.normalize import query_tokens
from elquery.linking.mentions import detect, read_whitelist
from elquery.linking.methods import uses_mlm
from elquery.linking.tagme import TagmeLinker
from elquery.linking.types import Candidate, LinkResult
from elquery.retrieval.models import Model
from elquery.retrieval.queries import QueryRecord
from elquery.retrieval.searcher import RankedEntity


class LinkerBackend:
    """Links queries with the configured artefacts, in ``workers`` processes."""

    def __init__(self, config: ExperimentConfig, workers: int = 1) -> None:
        self.config = config
        self.workers = workers
        self.whitelist = None if config.whitelist is None else read_whitelist(config.whitelist)

    def identity(self, method: str) -> Any:
        """The artefacts ``method`` reads (``"candidates"``: mention detection)."""
        config = self.config
        whitelist = None if config.whitelist is None else file_identity(config.whitelist)
        if method == TAGME:
            assert config.tagme is not None
            return {"tagme": file_identity(config.tagme), "whitelist": whitelist}
        identity = {"surface_forms": file_identity(config.surface_forms), "whitelist": whitelist}
        if method != "candidates" and uses_mlm(method):
            identity["index"] = file_identity(config.index)
        return identity

    def link(self, method: str, commonness_threshold: float | None, queries: Mapping[str, str],
             progress: Progress) -> Iterator[LinkResult]:
        if method == TAGME:
            assert self.config.tagme is not None
            with TagmeLinker(self.config.tagme, rho_na=0.0) as tagme:
                results = tagme.link_many(queries.items(), workers=self.workers)
                yield from self._results((self._whitelisted(r) for r in results), progress)
            return
        linker = Linker(self.config.index if uses_mlm(method) else None, self.config.surface_forms,
                        method, commonness_threshold=commonness_threshold, whitelist=self.whitelist)
        yield from self._results(linker.link_many(queries.items(), workers=self.workers), progress)

    def _whitelisted(self, result: LinkResult) -> LinkResult:
        """TAGME's annotations and ranking restricted to the whitelist (all of them without one)."""
        if self.whitelist is None:
            return result
        return replace(result, scored=tuple(t for t in result.scored if t.entity in self.whitelist),
                       interpretations=(), ranking=tuple(r for r in result.ranking if r.entity in self.whitelist))

    @staticmethod
    def _results(results: Iterator[LinkResult], progress: Progress) -> Iterator[LinkResult]:
        for result in results:
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
    with the executor and in-order window of ``elquery rank``."""

    def __init__(self, index: Path, workers: int = 1) -> None:
        self.index = index
        self.workers = workers

    def identity(self) -> Any:
        return {"index": file_identity(self.index)}

    def rank(self, model: Model, queries: Mapping[str, str], k: int, progress: Progress, links: Path | None = None
             ) -> Iterator[tuple[str, list[RankedEntity]]]:
        from elquery.retrieval.batch import rank_many
        from elquery.retrieval.links import with_links

        records = [QueryRecord(qid, text) for qid, text in queries.items()]
        if links is not None:
            records = with_links(records, links, self.index)
        yield from rank_many(str(self.index), records, model, k, self.workers, progress)
