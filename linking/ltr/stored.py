"""Stored field values of many entities in one Java call (``org.elquery.retrieval.StoredValues``):
the titles and short abstracts that the LTR features' string tests read for the entities of a
query, where :meth:`EntityIndex.document` reads one entity per call."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from elquery.kb.entity_index import EntityIndex
from elquery.kb.jvm import java_class

ENTRY_CLASS = "org.elquery.retrieval.StoredValues"


@functools.cache
def _helper() -> Any:
    return java_class(ENTRY_CLASS)


def stored_values(index: EntityIndex, docids: Sequence[int], fields: Sequence[str]) -> list[tuple[str, ...]]:
    """Per docid, the stored value of each of ``fields`` ("" when the document has none; a field
    of several values holds them one per line)."""
    if not docids:
        return []
    flat = list(_helper().values(index.leaf, [int(d) for d in docids], list(fields)))
    width = len(fields)
    return [tuple(flat[n * width:(n + 1) * width]) for n in range(len(docids))]
