"""Writing entity documents into a Lucene index through Anserini's jar (via pyjnius)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elquery.indexing.entity_documents import EntityDocument
from elquery.indexing.index_format import FIELDS, ID_FIELD, analyzer, length_field
from elquery.indexing.jvm import java_class

RAM_BUFFER_MB = 256.0
_LINE_BREAKS = re.compile(r"[\t\r\n]")


@dataclass
class WrittenDocuments:
    """What a writer added, in docid order: entity ids and exact per-field lengths."""

    entities: list[str] = field(default_factory=list)
    lengths: dict[str, list[int]] = field(default_factory=lambda: {f: [] for f in FIELDS})

    def extend(self, other: WrittenDocuments) -> None:
        self.entities += other.entities
        for name in FIELDS:
            self.lengths[name] += other.lengths[name]


def _open_writer(path: Path) -> Any:
    config = java_class("org.apache.lucene.index.IndexWriterConfig")(analyzer())
    config.setOpenMode(java_class("org.apache.lucene.index.IndexWriterConfig$OpenMode").CREATE)
    config.setRAMBufferSizeMB(RAM_BUFFER_MB)
    # A log merge policy merges adjacent segments only, so docids keep the order of addition.
    config.setMergePolicy(java_class("org.apache.lucene.index.LogByteSizeMergePolicy")())
    config.setUseCompoundFile(False)
    directory = java_class("org.apache.lucene.store.FSDirectory").open(
        java_class("java.nio.file.Paths").get(str(path))
    )
    return java_class("org.apache.lucene.index.IndexWriter")(directory, config)


class EntityIndexWriter:
    """Adds :class:`EntityDocument` objects to a new Lucene index at ``path``.

    One Document and its Field objects are reused for every entity (Lucene allows it), which
    keeps the number of Python -> Java calls per entity small. Exact field lengths are counted
    with the index's own analyzer and stored as doc values."""

    def __init__(self, path: Path) -> None:
        self._writer = _open_writer(path)
        self._analyzer = analyzer()
        self._analyze = java_class("io.anserini.analysis.AnalyzerUtils").analyze
        store = java_class("org.apache.lucene.document.Field$Store").YES
        self._id = java_class("org.apache.lucene.document.StringField")(ID_FIELD, "", store)
        text_field = java_class("org.apache.lucene.document.TextField")
        numeric = java_class("org.apache.lucene.document.NumericDocValuesField")
        self._text = {name: text_field(name, "", store) for name in FIELDS}
        self._length = {name: numeric(length_field(name), 0) for name in FIELDS}
        self._document = java_class("org.apache.lucene.document.Document")()
        for java_field in (self._id, *self._text.values(), *self._length.values()):
            self._document.add(java_field)
        self.written = WrittenDocuments()

    def add(self, document: EntityDocument) -> None:
        self._id.setStringValue(document.entity)
        self.written.entities.append(document.entity)
        for name, values in zip(FIELDS, (document.names, document.content)):
            # One value per line of the stored field (a value's own tabs and line ends become
            # spaces): no token spans a newline, so the tokens are those of the values one by one.
            text = "\n".join(_LINE_BREAKS.sub(" ", value) for value in values)
            length = self._analyze(self._analyzer, text).size() if text else 0
            self._text[name].setStringValue(text)
            self._length[name].setLongValue(length)
            self.written.lengths[name].append(length)
        self._writer.addDocument(self._document)

    def add_all(self, documents: Iterable[EntityDocument]) -> None:
        for document in documents:
            self.add(document)

    def add_indexes(self, paths: Sequence[Path]) -> None:
        """Append whole indexes, in the given order, after the documents added so far."""
        fs = java_class("org.apache.lucene.store.FSDirectory")
        get = java_class("java.nio.file.Paths").get
        self._writer.addIndexes(*[fs.open(get(str(p))) for p in paths])  # Java varargs

    def close(self, *, merge: bool = True) -> None:
        """Commit; with ``merge`` the index becomes one segment (docid order kept)."""
        if merge:
            self._writer.forceMerge(1)
        self._writer.commit()
        self._writer.close()

    def abort(self) -> None:
        self._writer.rollback()
