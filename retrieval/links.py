"""Links files as ``elquery rank --links FILE`` reads them: the format is
:mod:`elquery.formats.links` (TSV or JSON Lines, docs/formats.md, "links"); what the retrieval
layer adds is naming each entity as the index does
(:func:`~elquery.kb.entities.canonical_entity_id`) and checking that the index holds it
(:func:`check_links`): an entity that is not in the index is a one-line error naming the file and
line.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from elquery.base import ElqueryError
from elquery.formats import links as links_format
from elquery.formats.links import WHAT, Link, Links, record_links
from elquery.formats.queries import QueryRecord
from elquery.kb.entities import canonical_entity_id
from elquery.kb.index_format import IDS_FILE

__all__ = ["WHAT", "Link", "check_links", "read_links", "record_links", "with_links"]


def read_links(path: Path | str) -> Links:
    """The links of every qid of a links file, in file order per qid, each entity as
    ``<dbpedia:Title>``."""
    return links_format.read_links(path, canonical_entity_id)


def with_links(queries: list[QueryRecord], path: Path | str, index: Path | str) -> list[QueryRecord]:
    """``queries`` with their linked entities from the links file ``path`` (a query the file
    does not name has none), every entity checked against ``index``."""
    links = read_links(path)
    check_links(links, index)
    return [replace(q, links=tuple((link.entity, link.score) for link in links.get(q.qid, ()))) for q in queries]


def check_links(links: Links, index: Path | str) -> None:
    """Every linked entity must be in the index (read from its id list, no JVM)."""
    known = set((Path(index) / IDS_FILE).read_text(encoding="utf-8").splitlines())
    for query in links.values():
        for link in query:
            if link.entity not in known:
                raise ElqueryError(f"{link.where}: linked entity {link.entity} is not in the index {index}")
