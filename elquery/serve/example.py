"""What the page at ``/`` starts with, from the served knowledge base: a query that links on it,
the method that links it, and where every threshold of the service comes from.

The query is found by linking candidates: on the demo knowledge base its demo query first; then
the most frequent surface form (:meth:`SurfaceFormStore.aliases`) of each of the index's first
:data:`CANDIDATE_ENTITIES` entities, most frequent first. The page's methods are tried in the
order of its menu (the default method first), each over every candidate, with the service's
thresholds; the first query with an interpretation is the example. When none links (e.g.
GIF-MLMcg's full-scale s = 20 on a small knowledge base, and no candidate reaches CMNS's s
either), the page starts with the first candidate and says that nothing links with these
thresholds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from elquery.linking.batch import ResultLinker

DEMO_QUERY = "new york pizza manhattan"
CANDIDATE_ENTITIES = 200


class _Entities(Protocol):
    @property
    def num_entities(self) -> int: ...

    def entity(self, docid: int) -> str: ...


class _Aliases(Protocol):
    def aliases(self, entity: str) -> Sequence[Any]: ...


@dataclass(frozen=True)
class Example:
    """The page's starting query and method; ``links``: whether linking it finds an interpretation."""

    query: str
    method: str
    links: bool


def candidate_queries(index: _Entities, store: _Aliases, demo: bool, limit: int = CANDIDATE_ENTITIES) -> list[str]:
    """The demo query (on the demo knowledge base), then the most frequent surface form of each of
    the first ``limit`` entities of the index, by decreasing count (then form)."""
    forms: dict[str, int] = {}
    for docid in range(min(limit, index.num_entities)):
        aliases = store.aliases(index.entity(docid))
        if aliases:
            forms[aliases[0].form] = max(forms.get(aliases[0].form, 0), aliases[0].count)
    ranked = sorted(forms, key=lambda form: (-forms[form], form))
    return list(dict.fromkeys(([DEMO_QUERY] if demo else []) + ranked))


def find_example(candidates: Sequence[str], linkers: Sequence[tuple[str, ResultLinker]]) -> Example:
    """The first candidate, over the page's methods in order (``linkers``: each method's name and
    the service's linker of it, with its thresholds), whose linking has an interpretation."""
    for method, linker in linkers:
        for query in candidates:
            if linker.result(query).interpretations:
                return Example(query, method, True)
    return Example(candidates[0] if candidates else "", linkers[0][0] if linkers else "", False)
