"""Writing entity documents into a Lucene index through elquery's Java helper (via pyjnius)."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elquery.indexing.entity_documents import EntityDocument
from elquery.kb.index_format import (
    ENTITY_COUNTS,
    FIELDS,
    ID_FIELD,
    LTR_FIELDS,
    RELATIONS_FIELD,
    STORED_FIELDS,
    TYPED_RELATIONS_FIELD,
    analyzer,
)
from elquery.kb.jvm import java_class

RAM_BUFFER_MB = 256.0
BATCH = 1000
"""Documents handed to Java per call: one Python -> Java crossing per batch, not per field."""
_LINE_BREAKS = re.compile(r"[\t\r\n]")


@dataclass
class WrittenDocuments:
    """What a writer added, in docid order: entity ids, exact per-field lengths (the text
    fields, and :data:`RELATIONS_FIELD` when the writer adds it) and, with the LTR fields, the
    :data:`ENTITY_COUNTS`; the numbers as int32 arrays (4 bytes an entity and field, where lists
    of Python ints took up to 36, for seven fields and two counts of millions of entities)."""

    entities: list[str] = field(default_factory=list)
    lengths: dict[str, array[int]] = field(default_factory=lambda: {f: array("i") for f in FIELDS})
    counts: dict[str, array[int]] = field(default_factory=dict)

    def extend(self, other: WrittenDocuments) -> None:
        self.entities += other.entities
        for name, lengths in other.lengths.items():
            self.lengths.setdefault(name, array("i")).extend(lengths)
        for name, counts in other.counts.items():
            self.counts.setdefault(name, array("i")).extend(counts)


def field_text(values: Sequence[str]) -> str:
    """A field's text: one value per line (a value's own tabs and line ends become spaces), so no
    token spans two values and the field's tokens are those of its values one by one."""
    return "\n".join(_LINE_BREAKS.sub(" ", value) for value in values)


class EntityIndexWriter:
    """Adds :class:`EntityDocument` objects to a new Lucene index at ``path``.

    Documents go to ``org.elquery.index.EntityWriter`` (``indexing/java``) a batch at a time; it
    analyzes each field once, counting the exact field length on the very tokens it indexes, and
    stores the length as doc values. Only :data:`STORED_FIELDS` (and the id) are stored. With
    ``relations``, each document's (related entity id, predicate) pairs go into the keyword
    fields :data:`RELATIONS_FIELD` and :data:`TYPED_RELATIONS_FIELD` (the pairs stored, one
    ``id TAB predicate`` per line, if :data:`RELATIONS_FIELD` is one of :data:`STORED_FIELDS`).
    With ``ltr``, the text fields :data:`LTR_FIELDS` follow ``names`` and ``content``, and the
    :data:`ENTITY_COUNTS` are numeric doc values ``<name>_count``."""

    def __init__(self, path: Path, *, relations: bool = False, ltr: bool = False) -> None:
        text_fields = (*FIELDS, *LTR_FIELDS) if ltr else FIELDS
        self._writer = java_class("org.elquery.index.EntityWriter")(
            str(path), analyzer(), RAM_BUFFER_MB, list(text_fields), [name in STORED_FIELDS for name in text_fields]
        )
        self._text_fields = text_fields
        self._fields: tuple[str, ...] = text_fields
        self._relations = relations
        if relations:
            self._writer.setRelations(RELATIONS_FIELD, TYPED_RELATIONS_FIELD, RELATIONS_FIELD in STORED_FIELDS)
            self._fields = (*text_fields, RELATIONS_FIELD)
        self._counts: tuple[str, ...] = ENTITY_COUNTS if ltr else ()
        if ltr:
            self._writer.setCounts(list(ENTITY_COUNTS))
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._count_values: list[int] = []
        self.written = WrittenDocuments(lengths={f: array("i") for f in self._fields},
                                        counts={c: array("i") for c in self._counts})

    def add(self, document: EntityDocument) -> None:
        self._ids.append(document.entity)
        self._texts += (field_text(getattr(document, name)) for name in self._text_fields)
        if self._relations:
            self._texts.append("\n".join(f"{entity}\t{predicate}" for entity, predicate in document.relations))
        self._count_values += (getattr(document, name) for name in self._counts)
        if len(self._ids) >= BATCH:
            self._flush()

    def add_all(self, documents: Iterable[EntityDocument]) -> None:
        for document in documents:
            self.add(document)

    def add_partition(self, documents: Any) -> None:
        """Add a partition's documents (``org.elquery.index.PartitionDocuments``, from
        :func:`~elquery.indexing.entity_documents.partition_documents`, with relations exactly
        when this writer has them) in one call: Java hands them to Lucene itself, and gives back
        their ids (one string) and exact lengths (one array)."""
        self._flush()
        ids = documents.write(self._writer, ID_FIELD)
        if not ids:
            return
        self._record(ids.split("\n"), documents.lengths(), documents.counts())

    def _record(self, ids: list[str], lengths: Sequence[int], counts: Sequence[int]) -> None:
        width = len(self._fields)
        for f, name in enumerate(self._fields):
            self.written.lengths[name].extend(lengths[f::width])
        for c, name in enumerate(self._counts):
            self.written.counts[name].extend(counts[c::len(self._counts)])
        self.written.entities += ids

    def _flush(self) -> None:
        if not self._ids:
            return
        lengths = self._writer.add(ID_FIELD, self._ids, self._texts, self._count_values)
        self._record(self._ids, lengths, self._count_values)
        self._ids, self._texts, self._count_values = [], [], []

    def add_indexes(self, paths: Sequence[Path]) -> None:
        """Append whole indexes, in the given order, after the documents added so far."""
        self._flush()
        self._writer.addIndexes([str(p) for p in paths])

    def close(self, *, merge: bool = True) -> None:
        """Commit; with ``merge`` the index becomes one segment (docid order kept)."""
        self._flush()
        self._writer.close(merge)

    def abort(self) -> None:
        self._writer.abort()
