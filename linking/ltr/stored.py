"""The normalized titles and short abstracts the LTR features' string tests read for the entities
of a query (:class:`NormalizedTexts`): from the index's normalized copy of them
(``ltr_texts.bin``, :mod:`elquery.kb.index_format`), memory-mapped, or, in an index built before
it, from the stored fields of many entities in one Java call (``org.elquery.index.IndexAccess.storedValues``,
:func:`stored_values`, which :meth:`EntityIndex.document` calls with one entity), normalized here."""

from __future__ import annotations

import functools
import mmap
from collections.abc import Sequence
from typing import Any

import numpy as np

from elquery.base import ElqueryError
from elquery.kb.entity_index import EntityIndex
from elquery.kb.index_format import LTR_TEXT_OFFSETS_FILE, LTR_TEXTS_FILE
from elquery.kb.jvm import java_class, utf8_texts
from elquery.kb.normalize import normalize

ENTRY_CLASS = "org.elquery.index.IndexAccess"


@functools.cache
def _helper() -> Any:
    return java_class(ENTRY_CLASS)


def stored_values(index: EntityIndex, docids: Sequence[int], fields: Sequence[str]) -> list[tuple[str, ...]]:
    """Per docid, the stored value of each of ``fields`` ("" when the document has none; a field
    of several values holds them one per line)."""
    if not docids:
        return []
    flat = utf8_texts(_helper().storedValues(index.leaf, [int(d) for d in docids], list(fields)))
    width = len(fields)
    return [tuple(flat[n * width:(n + 1) * width]) for n in range(len(docids))]


class NormalizedTexts:
    """Per docid its normalized non-empty titles (the lines of the stored ``title``, each
    normalized, the empty ones dropped) and its normalized short abstract: from the
    index's ``ltr_texts.bin`` when it records ``ltr_texts`` (one line if that file does not match
    the index), else from the stored fields."""

    def __init__(self, index: EntityIndex) -> None:
        self.index = index
        self._offsets: np.ndarray | None = None
        self._texts: mmap.mmap | bytes = b""
        if index.metadata.get("ltr_texts"):
            self._offsets, self._texts = _mapped(index)

    def texts(self, docids: Sequence[int]) -> list[tuple[tuple[str, ...], str]]:
        """Per docid of ``docids``, (its normalized titles, its normalized short abstract)."""
        if not docids:
            return []
        if self._offsets is None:
            return [(tuple(t for t in map(normalize, title.split("\n")) if t), normalize(abstract))
                    for title, abstract in stored_values(self.index, docids, ("title", "short_abstract"))]
        starts = 2 * np.asarray(docids, dtype=np.int64)
        bounds = self._offsets[np.stack((starts, starts + 1, starts + 2), axis=1)].tolist()
        data = self._texts
        found = []
        for start, middle, end in bounds:
            titles = data[start:middle].decode("utf-8")
            found.append((tuple(titles.split("\n")) if titles else (), data[middle:end].decode("utf-8")))
        return found


def _mapped(index: EntityIndex) -> tuple[np.ndarray, mmap.mmap | bytes]:
    """The index's ``ltr_text_offsets.npy`` and ``ltr_texts.bin``, memory-mapped; one line if they
    are missing or do not hold two texts per document."""
    mismatch = ElqueryError(f"{index.path}: {LTR_TEXTS_FILE} does not match the Lucene index; rebuild it")
    try:
        offsets = np.load(index.path / LTR_TEXT_OFFSETS_FILE, mmap_mode="r")
        with (index.path / LTR_TEXTS_FILE).open("rb") as file:
            size = file.seek(0, 2)
            texts = mmap.mmap(file.fileno(), size, access=mmap.ACCESS_READ) if size else b""
    except (OSError, ValueError) as error:
        raise mismatch from error
    if offsets.dtype != np.dtype("<i8") or offsets.shape != (2 * int(index.leaf.maxDoc()) + 1,) or int(offsets[-1]) != size:
        raise mismatch
    return np.asarray(offsets), texts  # a plain view: a gather from np.memmap costs ~3 us more
