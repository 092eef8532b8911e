"""Finishing an entity index on disk: the files beside the Lucene index (the format of
:mod:`elquery.kb.index_format`), written here and nowhere else, by the build, the benchmarks and
the tests that write an index of their own.

* ``entity_ids.txt``: the entity ids in docid order;
* ``entity_id_rank.npy``: per docid, its position in entity-id order (:func:`id_rank`), int32;
* ``<field>_length.npy``: the exact lengths |e_f| of every field written (the text fields, and
  ``relations`` in an index with relations), int32 in docid order;
* ``<name>_count.npy``: the per-entity counts of an index with the LTR fields;
* ``ltr_texts.bin`` / ``ltr_text_offsets.npy``: in an index with the LTR fields, the normalized
  titles and short abstracts the LTR features' string tests read (:func:`write_ltr_texts`);
* ``elquery.json``: format, analyzer, entities, the predicates indexed into ``content``, whether the
  index has relations and the LTR fields (as the lengths written say), the counts' sums, and the
  statistics read back from the finished Lucene index (:func:`index_statistics`: per field its
  tokens and terms; with relations, the field's statistics and per predicate N_f and |C_f|).
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from elquery.indexing.lucene_writer import WrittenDocuments
from elquery.kb.entity_index import EntityIndex, id_rank
from elquery.kb.index_format import (
    ANALYZER_NAME,
    FORMAT_VERSION,
    IDS_FILE,
    ID_RANK_FILE,
    LTR_FIELDS,
    LTR_TEXT_OFFSETS_FILE,
    LTR_TEXTS_FILE,
    METADATA_FILE,
    RELATIONS_FIELD,
    count_file,
    length_file,
)
from elquery.kb.jvm import java_class, utf8_texts
from elquery.kb.normalize import normalize

LTR_TEXTS_BATCH = 4096
"""Documents whose stored title and short abstract :func:`write_ltr_texts` reads per Java call."""


def write_index_files(index: Path, written: WrittenDocuments, content_predicates: Sequence[str] = ()) -> dict[str, Any]:
    """Write the ids, lengths and counts of ``written`` (the documents of the Lucene index at
    ``index``, in docid order) and ``elquery.json`` without the statistics of the Lucene index
    (enough for :class:`~elquery.kb.entity_index.EntityIndex` to open it); returns the metadata
    written."""
    (index / IDS_FILE).write_text("".join(e + "\n" for e in written.entities), encoding="utf-8")
    np.save(index / ID_RANK_FILE, id_rank(written.entities))
    for name, lengths in written.lengths.items():
        np.save(index / length_file(name), np.asarray(lengths, dtype=np.int32))
    for name, counts in written.counts.items():
        np.save(index / count_file(name), np.asarray(counts, dtype=np.int32))
    metadata: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "analyzer": ANALYZER_NAME,
        "entities": len(written.entities),
        "content_predicates": list(content_predicates),
        "entity_id_rank": True,
    }
    if RELATIONS_FIELD in written.lengths:
        metadata["relations"] = True
    if all(field in written.lengths for field in LTR_FIELDS):
        metadata["ltr_fields"] = True
        metadata["entity_counts"] = {
            name: {"sum": int(np.sum(counts, dtype=np.int64)), "entities": int(np.count_nonzero(counts))}
            for name, counts in written.counts.items()
        }
    _write_metadata(index, metadata)
    return metadata


def index_statistics(index: Path) -> dict[str, Any]:
    """The statistics ``elquery.json`` records from a Lucene index with its files written
    (:func:`write_index_files`): ``fields``, and in an index with relations
    ``relation_statistics`` and ``relation_predicates`` (per predicate [N_f, |C_f|]); in an index
    with the LTR fields it also writes their normalized texts (:func:`write_ltr_texts`) and records
    ``ltr_texts``. Opens the index, so Java runs in the calling process."""
    with EntityIndex(index) as opened:
        statistics: dict[str, Any] = {"fields": opened.field_statistics()}
        if opened.metadata.get("ltr_fields"):
            write_ltr_texts(index, opened.leaf, opened.num_entities)
            statistics["ltr_texts"] = True
        if opened.has_relations:
            statistics["relation_statistics"] = opened.relation_statistics().as_dict()
            statistics["relation_predicates"] = {p: [s.entities, s.links]
                                                 for p, s in opened.predicate_statistics().items()}
    return statistics


def write_ltr_texts(index: Path, leaf: Any, documents: int) -> None:
    """``ltr_texts.bin`` and ``ltr_text_offsets.npy`` of :mod:`elquery.kb.index_format` from the
    stored ``title`` and ``short_abstract`` of the ``documents`` of the Lucene ``leaf``: per docid
    ``"\\n".join(non-empty normalize(line) of its title lines)`` and ``normalize(abstract)``, UTF-8.
    Written beside and renamed into place, so no half-written pair remains."""
    read = java_class("org.elquery.index.IndexAccess").storedValues
    offsets = array("q", [0])
    texts_path, offsets_path = index / LTR_TEXTS_FILE, index / LTR_TEXT_OFFSETS_FILE
    partial_texts, partial_offsets = index / (LTR_TEXTS_FILE + ".partial"), index / (LTR_TEXT_OFFSETS_FILE + ".partial")
    try:
        with partial_texts.open("wb") as out:
            for first in range(0, documents, LTR_TEXTS_BATCH):
                values = utf8_texts(read(leaf, list(range(first, min(first + LTR_TEXTS_BATCH, documents))),
                                         ["title", "short_abstract"]))
                for n in range(0, len(values), 2):
                    titles = "\n".join(t for t in map(normalize, values[n].split("\n")) if t).encode("utf-8")
                    abstract = normalize(values[n + 1]).encode("utf-8")
                    out.write(titles)
                    out.write(abstract)
                    offsets.append(offsets[-1] + len(titles))
                    offsets.append(offsets[-1] + len(abstract))
        with partial_offsets.open("wb") as out:
            np.save(out, np.frombuffer(offsets, dtype=np.int64))
        os.replace(partial_texts, texts_path)
        os.replace(partial_offsets, offsets_path)
    finally:
        partial_texts.unlink(missing_ok=True)
        partial_offsets.unlink(missing_ok=True)


def record_statistics(index: Path, metadata: dict[str, Any], statistics: dict[str, Any]) -> None:
    """``elquery.json``: ``metadata`` (as :func:`write_index_files` gave it) and ``statistics``
    (:func:`index_statistics`)."""
    _write_metadata(index, {**metadata, **statistics})


def finish_index(index: Path, written: WrittenDocuments, content_predicates: Sequence[str] = ()) -> None:
    """Write the files beside the finished (closed) Lucene index at ``index``:
    :func:`write_index_files`, then the statistics read back from it (:func:`index_statistics`)."""
    metadata = write_index_files(index, written, content_predicates)
    record_statistics(index, metadata, index_statistics(index))


def _write_metadata(index: Path, metadata: dict[str, Any]) -> None:
    (index / METADATA_FILE).write_text(json.dumps(metadata, indent=1), encoding="utf-8")
