"""Mention detection for the methods that rank its candidates (CMNS, MLM, MLMc, MLMcg;
methods.md §3): the candidates M = M_kb ∪ M_w of a query over a surface-form store, with the
method's commonness threshold c and the whitelist."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Protocol

from elquery.linking.mentions import FormEntityLike, detect
from elquery.linking.methods.method import OwnedArtefacts, RankingInputs
from elquery.linking.types import Candidate


class SpanMatcher(Protocol):
    """What mention detection needs from a surface-form store
    (:class:`elquery.kb.surface_forms.store.SurfaceFormStore`): for every span ``(start, end)`` of
    the normalized tokens that is a known surface form, the entities it may name."""

    def lookup_spans(self, tokens: Sequence[str]) -> Mapping[tuple[int, int], Sequence[FormEntityLike]]: ...


def open_store(path: Path | str) -> SpanMatcher:
    from elquery.kb.surface_forms.store import SurfaceFormStore

    return SurfaceFormStore(path)


class Detection:
    """The candidates of a query (:func:`elquery.linking.mentions.detect`) over the surface-form
    store of ``inputs`` (a path, opened here, or a :class:`SpanMatcher`)."""

    def __init__(self, inputs: RankingInputs) -> None:
        self.owned = OwnedArtefacts()
        self.matcher: SpanMatcher = self.owned.open(inputs.artefacts["surface_forms"], open_store)
        self.commonness_threshold = inputs.values["commonness_threshold"]
        self.whitelist = inputs.whitelist
        from elquery.kb.surface_forms.store import SurfaceFormStore

        self._lookup_spans: Callable[[Sequence[str]], Mapping[tuple[int, int], Sequence[FormEntityLike]]] = (
            partial(self.matcher.lookup_spans, min_commonness=self.commonness_threshold)  # only what detect keeps is made
            if isinstance(self.matcher, SurfaceFormStore) else self.matcher.lookup_spans)

    def candidates(self, tokens: Sequence[str]) -> list[Candidate]:
        return detect(tokens, self._lookup_spans(tokens), self.commonness_threshold, self.whitelist)

    def close(self) -> None:
        self.owned.close()
