"""Dense integer numbers for DBpedia pages, with redirects resolved (methods.md §6).

Pages are numbered in the order they are first seen. A redirect page keeps its number but
:meth:`NodeIds.resolve` maps it to its target's, so anchors and links that point at a redirect
count for the entity it redirects to (one hop: the transitive redirects dataset is already
closed). Memory grows with the number of pages (about 100 bytes each), not with links.
"""

from __future__ import annotations

from array import array

from elquery.kb.entities import DBPEDIA_RESOURCE


class NodeIds:
    """Page title (the part of the URI after ``http://dbpedia.org/resource/``) <-> node number."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self.titles: list[str] = []
        self._redirect = array("i")

    def __len__(self) -> int:
        return len(self.titles)

    def node(self, iri: str) -> int | None:
        """The node of a DBpedia resource IRI (numbered on first sight); None for other IRIs."""
        if not iri.startswith(DBPEDIA_RESOURCE) or len(iri) == len(DBPEDIA_RESOURCE):
            return None
        title = iri[len(DBPEDIA_RESOURCE):]
        node = self._ids.get(title)
        if node is None:
            node = self._ids[title] = len(self.titles)
            self.titles.append(title)
        return node

    def known(self, iri: str) -> int | None:
        """The node of a resource IRI seen before, or None (never numbers a new one)."""
        return self._ids.get(iri[len(DBPEDIA_RESOURCE):]) if iri.startswith(DBPEDIA_RESOURCE) else None

    def add_redirect(self, source: int, target: int) -> None:
        if source == target:
            return
        if len(self._redirect) <= source:
            self._redirect.extend([-1] * (source + 1 - len(self._redirect)))
        self._redirect[source] = target

    def is_redirect(self, node: int) -> bool:
        return node < len(self._redirect) and self._redirect[node] >= 0

    def resolve(self, node: int) -> int:
        """The node itself, or the target of the redirect page it is."""
        if node < len(self._redirect):
            target = self._redirect[node]
            if target >= 0:
                return target
        return node

    def resolve_iri(self, iri: str) -> int | None:
        node = self.node(iri)
        return None if node is None else self.resolve(node)

    def entity(self, node: int) -> str:
        """``<dbpedia:Title>`` of a node (methods.md §2)."""
        return f"<dbpedia:{self.titles[node]}>"
