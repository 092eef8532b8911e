"""Reading an elquery entity index: the exact statistics MLM needs (methods.md §2).

Per field f: n(t, e_f) (term frequency), |e_f| (exact field length, from the cached ``.npy``
arrays, never from Lucene's lossy norms), cf(t, f) (collection term frequency) and |C_f| (total
tokens); entity id <-> Lucene docid; the index's own analyzer for query text. The fields are
``names`` and ``content``, and in an index built with them the LTR fields (methods.md §9;
:data:`~elquery.kb.index_format.LTR_FIELDS`), whose per-entity counts
(:meth:`EntityIndex.entity_counts`) come beside them; :meth:`EntityIndex.require_fields` refuses,
in one line, an index that lacks what a method needs.

Threads: what a query needs (:meth:`EntityIndex.analyze`, :meth:`~EntityIndex.document`,
:meth:`~EntityIndex.lengths`, :meth:`~EntityIndex.docid`, and the retrieval helper's scoring) may be
called from several threads at once on one open index: every such Java call is a static one (see
``indexing/java`` and ``retrieval/java``). Opening and closing take a lock. The statistics
accessors that walk Lucene's iterators (term and collection frequencies, postings) are for one
thread at a time.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from types import TracebackType
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from elquery.base import ElqueryError
from elquery.kb.entities import canonical_entity_id
from elquery.kb.index_format import (
    ENTITY_COUNTS,
    FIELDS,
    FORMAT_VERSION,
    ID_FIELD,
    IDS_FILE,
    LTR_FIELDS,
    METADATA_FILE,
    RELATIONS_FIELD,
    STORED_FIELDS,
    TEXT_FIELDS,
    TYPED_RELATIONS_FIELD,
    analyzer,
    count_field,
    count_file,
    length_field,
    length_file,
)
from elquery.kb.jvm import java_class, utf8_texts

# pyjnius instance calls (opening and closing an index) must not run in two threads at once
_JAVA_SETUP = threading.Lock()
LOOKUP_COST = 25
"""What one Lucene lookup of an entity id costs, in ids read into the id map (measured over 1M
ids: 59 us a lookup, 2.3 us an id). :meth:`EntityIndex.find_docid` asks Lucene until it has made
as many lookups as the map would cost (the entity count / LOOKUP_COST), then reads the map: rent
until the rent paid equals the price of buying, so the lookups never cost more than the map."""
BATCHED_PER_LOOKUP = 5
"""Ids looked up together (:meth:`EntityIndex.find_docids`) that cost what one lone lookup does, in
the same budget (over 1M ids: 2.2 us an id in a batch of 57, the map 0.45 us an id, against a
lone lookup's 25 ids of the map)."""


def id_rank(entities: Sequence[str]) -> np.ndarray:
    """Per docid (position in ``entities``), its position when the ids are sorted (Python's
    string order: by code point), as int32: the tie order of every ranking. The index writer
    saves it as ``entity_id_rank.npy``; the searcher computes it for an index without that file."""
    by_id = np.array(sorted(range(len(entities)), key=entities.__getitem__), dtype=np.int32)
    rank = np.empty(len(entities), dtype=np.int32)
    rank[by_id] = np.arange(len(entities), dtype=np.int32)
    return rank


def _last_line(path: Path) -> str | None:
    """The last line of a text file (read from its end), or None for an empty file."""
    with path.open("rb") as lines:
        size = lines.seek(0, 2)
        tail = b""
        while size and b"\n" not in tail.rstrip(b"\n") and len(tail) < size:
            step = min(size, len(tail) + 4096)
            lines.seek(size - step)
            tail = lines.read(step)
    return tail.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace") if tail.strip(b"\n") else None


class EntityIndex:
    """An open entity index. Cheap to keep open; close it (or use ``with``) to release files."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        metadata_path = self.path / METADATA_FILE
        if not metadata_path.is_file():
            raise ElqueryError(f"{self.path}: not an elquery index (no {METADATA_FILE}); build one with `elquery index dbpedia`")
        self.metadata: dict[str, Any] = json.loads(metadata_path.read_text(encoding="utf-8"))
        if self.metadata.get("format") != FORMAT_VERSION:
            raise ElqueryError(f"{self.path}: index format {self.metadata.get('format')} is not {FORMAT_VERSION}; rebuild it")
        with _JAVA_SETUP:
            directory = java_class("org.apache.lucene.store.FSDirectory").open(
                java_class("java.nio.file.Paths").get(str(self.path.resolve()))
            )
            self.reader = java_class("org.apache.lucene.index.DirectoryReader").open(directory)
            self._analyzer = analyzer()
            # every per-query call is a static one of elquery's helper (see indexing/java): safe from threads
            self._access = java_class("org.elquery.index.IndexAccess")
            leaves = self.reader.leaves()
            if leaves.size() != 1:
                raise ElqueryError(f"{self.path}: expected a single-segment index, found {leaves.size()}; rebuild it")
            self.leaf = leaves.get(0).reader()
            self._num_entities = int(self.reader.numDocs())
            max_doc = int(self.reader.maxDoc())
            infos = self.leaf.getFieldInfos()
            self.has_relations = infos.fieldInfo(length_field(RELATIONS_FIELD)) is not None
            """Whether the index holds the relations field (``elquery index dbpedia --relations``)."""
            self.text_fields: tuple[str, ...] = tuple(
                f for f in TEXT_FIELDS if f in FIELDS or infos.fieldInfo(length_field(f)) is not None)
            """The index's text fields: ``names``, ``content`` and the LTR fields it was built with."""
            self._counts = frozenset(c for c in ENTITY_COUNTS if infos.fieldInfo(count_field(c)) is not None)
        self._lengths: dict[str, np.ndarray] = {}
        self._count_arrays: dict[str, np.ndarray] = {}
        self._max_doc = max_doc
        last = _last_line(self.path / IDS_FILE)
        if (last is None) != (max_doc == 0) or (last is not None and self._stored_id(max_doc - 1) != last):
            raise self._mismatch()
        self._lookups = 0
        self._map_after = max_doc // LOOKUP_COST if last is not None and self._lookup(last) == max_doc - 1 else 0
        """The Lucene lookups :meth:`find_docid` makes before it reads the whole id map (none if
        the id field answers no lookups)."""

    # --- entities -----------------------------------------------------------------------------

    @property
    def num_entities(self) -> int:
        return self._num_entities

    def _mismatch(self) -> ElqueryError:
        return ElqueryError(f"{self.path}: {IDS_FILE} does not match the Lucene index; rebuild it")

    @cached_property
    def entity_ids(self) -> list[str]:
        """Entity ids in docid order, read on first use (4.6M of them take about a second; opening
        the index checks the file's last line only, this its length)."""
        ids = (self.path / IDS_FILE).read_text(encoding="utf-8").splitlines()
        if len(ids) != self._max_doc:
            raise self._mismatch()
        return ids

    @cached_property
    def _docid_of(self) -> dict[str, int]:
        return dict(zip(self.entity_ids, range(len(self.entity_ids))))

    def prepare(self) -> None:
        """Read the entity-id map now (:meth:`find_docid` would after some lookups): a service
        does before it serves."""
        _ = self._docid_of

    def find_docid(self, entity: str) -> int | None:
        """The docid of an entity named in any form :func:`canonical_entity_id` takes, or None.

        The first lookups ask Lucene's term dictionary of the id field (one Java call each, tens
        of microseconds), as many as reading the whole map would cost (:data:`LOOKUP_COST`); then
        the map is read into a dict (over all of DBpedia a few seconds and several hundred MB,
        which a command linking one query would otherwise pay in full) and answers from then on."""
        found = self._find(entity)
        if found is None:
            canonical = canonical_entity_id(entity)
            found = None if canonical is None or canonical == entity else self._find(canonical)
        return found

    def _find(self, entity: str) -> int | None:
        docids = self.__dict__.get("_docid_of")
        if docids is None and self._lookups < self._map_after:
            self._lookups += 1
            return self._lookup(entity)
        return (docids if docids is not None else self._docid_of).get(entity)

    def _lookup(self, entity: str) -> int | None:
        """The docid of the document whose id field is ``entity`` (a static Java call: safe from threads)."""
        raw = self._access.docids(self.leaf, ID_FIELD, entity).tostring()
        return int.from_bytes(raw[:4], "little") if raw else None

    def find_docids(self, entities: Sequence[str]) -> list[int | None]:
        """:meth:`find_docid` of each of ``entities``, while Lucene answers all of them in one Java
        call (a query's candidates: one crossing, 2-5 us an id, instead of one each, 26 us apiece
        at 4.6M ids); each :data:`BATCHED_PER_LOOKUP` ids count as one lookup of find_docid's
        budget, so the index reads its id map five times later than lone lookups would make it
        (an LTR linker: after some 3,500 queries over 1M entities, 37,000 over 4.6M)."""
        if not entities:
            return []
        found = self._find_many(entities)
        retry = [(at, canonical) for at, (entity, docid) in enumerate(zip(entities, found))
                 if docid is None and (canonical := canonical_entity_id(entity)) is not None and canonical != entity]
        if retry:
            for (at, _), docid in zip(retry, self._find_many([canonical for _, canonical in retry])):
                found[at] = docid
        return found

    def _find_many(self, entities: Sequence[str]) -> list[int | None]:
        docids = self.__dict__.get("_docid_of")
        if docids is None and self._lookups < self._map_after:
            self._lookups += -(-len(entities) // BATCHED_PER_LOOKUP)
            raw = self._access.firstDocids(self.leaf, ID_FIELD, list(entities)).tostring()
            return [None if docid < 0 else docid for docid in np.frombuffer(raw, dtype="<i4").tolist()]
        mapping = docids if docids is not None else self._docid_of
        return [mapping.get(entity) for entity in entities]

    def docid(self, entity: str) -> int:
        """The docid of an entity (any form :func:`canonical_entity_id` takes); an entity not in
        the index is an :class:`ElqueryError`."""
        found = self.find_docid(entity)
        if found is None:
            raise ElqueryError(f"entity {entity!r} is not in the index {self.path}")
        return found

    def entity(self, docid: int) -> str:
        return self.entity_ids[docid]

    # --- what the index holds ------------------------------------------------------------------

    def has_field(self, name: str) -> bool:
        """Whether the index holds ``name``: a text field (:data:`TEXT_FIELDS`), one of the
        relation fields (``--relations``) or an entity count (:data:`ENTITY_COUNTS`)."""
        if name in (RELATIONS_FIELD, TYPED_RELATIONS_FIELD):
            return self.has_relations
        return name in self.text_fields or name in self._counts

    def require_fields(self, names: Iterable[str], purpose: str) -> None:
        """An :class:`ElqueryError` (one line: the missing fields and how to rebuild) unless the
        index holds every one of ``names`` (see :meth:`has_field`); ``purpose`` names what needs
        them ("the LTR features")."""
        self._require(names, f", needed by {purpose}")

    def _require(self, names: Iterable[str], why: str) -> None:
        missing = [n for n in dict.fromkeys(names) if not self.has_field(n)]
        if not missing:
            return
        unknown = [n for n in missing if n not in (*TEXT_FIELDS, *ENTITY_COUNTS, RELATIONS_FIELD, TYPED_RELATIONS_FIELD)]
        if unknown:
            raise ElqueryError(f"unknown field {unknown[0]!r}; fields are {', '.join((*TEXT_FIELDS, *ENTITY_COUNTS))}")
        relations = [n for n in missing if n in (RELATIONS_FIELD, TYPED_RELATIONS_FIELD)]
        if relations == missing:
            self._check_relations()
        rebuild = "without --no-ltr-fields" + (" and with --relations" if relations else "")
        raise ElqueryError(f"{self.path}: the index has no field{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
                           f"{why}; rebuild it with `elquery index dbpedia` or `elquery build` {rebuild}")

    def entity_counts(self, name: str) -> np.ndarray:
        """A per-entity count (:data:`ENTITY_COUNTS`: ``redirects``, ``links``) for every docid
        (int32): the ``.npy`` file the build wrote (memory-mapped) or, if it is missing, the doc
        values read into memory."""
        if name not in ENTITY_COUNTS:
            raise ElqueryError(f"unknown entity count {name!r}; counts are {', '.join(ENTITY_COUNTS)}")
        self._require([name], "")
        cached = self._count_arrays.get(name)
        if cached is None:
            path = self.path / count_file(name)
            loaded = np.load(path, mmap_mode="r") if path.is_file() else self._doc_values(count_field(name))
            cached = self._count_arrays[name] = loaded
        return cached

    def _stored(self, docid: int, fields: tuple[str, ...]) -> list[str]:
        return utf8_texts(self._access.storedValues(self.reader, [docid], list(fields)))

    def _stored_id(self, docid: int) -> str:
        return self._stored(docid, (ID_FIELD,))[0]

    def document(self, entity: str) -> Mapping[str, str] | None:
        """An entity's fields (``id`` and the :attr:`text_fields`: ``names``, ``content``, and the
        LTR fields if the index has them), or None. A stored field (:data:`STORED_FIELDS`: the
        values, one per line) is read from Lucene's stored fields; a field that is not stored gives
        its indexed terms in position order, space-separated, read back from the postings (slow,
        and only when asked for)."""
        docid = self.find_docid(entity)
        if docid is None:
            return None
        stored = (ID_FIELD, *(f for f in STORED_FIELDS if f in self.text_fields))
        return _Document(self, docid, dict(zip(stored, self._stored(docid, stored))))

    def indexed_terms(self, docid: int, field: str) -> list[str]:
        """The terms of field f of one entity in position order, from the postings: every term
        of the field is looked at, so this is for checks and inspection, not per query."""
        self._check_field(field)
        return list(self._access.indexedTerms(self.leaf, docid, field))

    # --- text ---------------------------------------------------------------------------------

    def analyze(self, text: str) -> list[str]:
        """Tokens of ``text`` under the index's analyzer (methods.md §2)."""
        return list(self._access.analyze(self._analyzer, text)) if text else []

    # --- statistics ---------------------------------------------------------------------------

    def _check_field(self, field: str) -> None:
        """A text field of the index (an LTR field the index lacks is refused by :meth:`require_fields`)."""
        if field not in self.text_fields:
            if field not in LTR_FIELDS:
                raise ElqueryError(f"unknown field {field!r}; fields are {', '.join(TEXT_FIELDS)}")
            self._require([field], "")

    def lengths(self, field: str) -> np.ndarray:
        """|e_f| for every docid (int32), exact: the ``.npy`` file the build wrote (memory-mapped),
        or, if it is missing, read from the doc values into memory. Opening an index never writes
        into it (it may be read-only or shared)."""
        self._check_field(field)
        return self._length_array(field)

    def _length_array(self, field: str) -> np.ndarray:
        """The lengths of ``field``: its ``.npy`` file (memory-mapped) or its doc values, loaded once."""
        cached = self._lengths.get(field)
        if cached is None:
            path = self.path / length_file(field)
            loaded = np.load(path, mmap_mode="r") if path.is_file() else self._lengths_from_doc_values(field)
            cached = self._lengths[field] = loaded
        return cached

    def _lengths_from_doc_values(self, field: str) -> np.ndarray:
        return self._doc_values(length_field(field))

    def _doc_values(self, name: str) -> np.ndarray:
        """The numeric doc values ``name`` of every docid (int32; 0 where a document has none)."""
        with _JAVA_SETUP:  # one-time, and walks a Java iterator
            values = self.leaf.getNumericDocValues(name)
            lengths = np.zeros(self.reader.maxDoc(), dtype=np.int32)
            no_more = java_class("org.apache.lucene.search.DocIdSetIterator").NO_MORE_DOCS
            docid = values.nextDoc() if values is not None else no_more
            while docid != no_more:
                lengths[docid] = values.longValue()
                docid = values.nextDoc()
            return lengths

    def field_length(self, field: str, docid: int) -> int:
        return int(self.lengths(field)[docid])

    def _terms(self, field: str) -> Any:
        self._check_field(field)
        return self.leaf.terms(field)

    def collection_length(self, field: str) -> int:
        """|C_f|: total number of tokens in field f."""
        terms = self._terms(field)
        return int(terms.getSumTotalTermFreq()) if terms is not None else 0

    def collection_frequency(self, term: str, field: str) -> int:
        """cf(t, f): occurrences of term t in field f over all entities."""
        self._check_field(field)
        return int(self.reader.totalTermFreq(self._term(field, term)))

    def document_frequency(self, term: str, field: str) -> int:
        self._check_field(field)
        return int(self.reader.docFreq(self._term(field, term)))

    def _term(self, field: str, term: str) -> Any:
        return java_class("org.apache.lucene.index.Term")(field, term)

    def postings(self, term: str, field: str) -> tuple[np.ndarray, np.ndarray]:
        """(docids, n(t, e_f)) of every entity whose field f contains t, docids ascending."""
        self._check_field(field)
        flags = java_class("org.apache.lucene.index.PostingsEnum").FREQS
        postings = self.leaf.postings(self._term(field, term), flags)
        docids: list[int] = []
        freqs: list[int] = []
        if postings is not None:
            no_more = java_class("org.apache.lucene.search.DocIdSetIterator").NO_MORE_DOCS
            docid = postings.nextDoc()
            while docid != no_more:
                docids.append(docid)
                freqs.append(postings.freq())
                docid = postings.nextDoc()
        return np.asarray(docids, dtype=np.int32), np.asarray(freqs, dtype=np.int32)

    def term_frequency(self, term: str, field: str, docid: int) -> int:
        """n(t, e_f) for one entity."""
        flags = java_class("org.apache.lucene.index.PostingsEnum").FREQS
        self._check_field(field)
        postings = self.leaf.postings(self._term(field, term), flags)
        if postings is None or postings.advance(docid) != docid:
            return 0
        return int(postings.freq())

    def field_statistics(self) -> dict[str, dict[str, int]]:
        """Per text field of the index: ``tokens`` (|C_f|) and ``terms`` (vocabulary size)."""
        statistics = {}
        for field in self.text_fields:
            terms = self._terms(field)
            size = int(terms.size()) if terms is not None else 0
            statistics[field] = {"tokens": self.collection_length(field), "terms": size}
        return statistics

    def stats(self) -> dict[str, Any]:
        """What ``elquery index stats`` prints (``relations`` only for an index that has them)."""
        stats: dict[str, Any] = {
            "entities": self.num_entities,
            "fields": self.field_statistics(),
            "analyzer": self.metadata.get("analyzer"),
            "content_predicates": len(self.metadata.get("content_predicates", [])),
            "path": str(self.path),
        }
        if self.has_relations:
            stats["relations"] = self.relation_statistics().as_dict()
        if self._counts:
            stats["entity_counts"] = {name: {"sum": int(np.sum(self.entity_counts(name), dtype=np.int64)),
                                             "entities": int(np.count_nonzero(self.entity_counts(name)))}
                                      for name in ENTITY_COUNTS if name in self._counts}
        return stats

    # --- relations (ELR) -----------------------------------------------------------------------

    def _check_relations(self) -> None:
        if not self.has_relations:
            raise ElqueryError(f"{self.path}: the index has no relations field; rebuild it with "
                               "`elquery index dbpedia --relations` for the ELR models")

    def related_docids(self, entity: str, predicate: str | None = None) -> np.ndarray:
        """Docids (ascending, int32) of the entities whose relations hold ``entity`` (its id
        ``<dbpedia:Title>``), through any predicate or through ``predicate``: one static Java
        call, safe from several threads."""
        self._check_relations()
        if predicate is None:
            raw = self._access.docids(self.leaf, RELATIONS_FIELD, entity)
        else:
            raw = self._access.docids(self.leaf, TYPED_RELATIONS_FIELD, f"{entity}\t{predicate}")
        return np.frombuffer(raw.tostring() if raw is not None else b"", dtype="<i4").astype(np.int32)

    def relating_predicates(self, entity: str) -> list[str]:
        """The predicates through which some entity relates to ``entity``, in IRI order (one
        static Java call)."""
        self._check_relations()
        return utf8_texts(self._access.termsAfter(self.leaf, TYPED_RELATIONS_FIELD, f"{entity}\t"))

    @cached_property
    def _predicate_statistics(self) -> dict[str, RelationStatistics]:
        self._check_relations()
        recorded = self.metadata.get("relation_predicates")
        if recorded is not None:
            return {p: RelationStatistics(n, links, 0) for p, (n, links) in recorded.items()}
        with _JAVA_SETUP:
            lines = utf8_texts(self._access.predicateStatistics(self.leaf, TYPED_RELATIONS_FIELD))
        statistics = {}
        for line in lines:
            predicate, n, links = line.split("\t")
            statistics[predicate] = RelationStatistics(int(n), int(links), 0)
        return statistics

    def predicate_statistics(self) -> dict[str, RelationStatistics]:
        """Per predicate f: N_f (``entities`` relating to some entity through f) and |C_f|
        (``links``: the (entity, related id) pairs through f); ``targets`` is not counted (0).
        Read from ``elquery.json``, or, for an index without them there, from the typed field's
        terms (once)."""
        return self._predicate_statistics

    def relation_lengths(self) -> np.ndarray:
        """|R(e)|, the number of distinct related entities, for every docid (int32; the
        ``.npy`` file, or the doc values)."""
        self._check_relations()
        return self._length_array(RELATIONS_FIELD)

    @cached_property
    def _relation_statistics(self) -> RelationStatistics:
        self._check_relations()
        with _JAVA_SETUP:
            terms = self.leaf.terms(RELATIONS_FIELD)
            if terms is None:
                return RelationStatistics(0, 0, 0)
            return RelationStatistics(int(terms.getDocCount()), int(terms.getSumDocFreq()), int(terms.size()))

    def relation_statistics(self) -> RelationStatistics:
        """The relations field's exact statistics (read once)."""
        return self._relation_statistics

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        with _JAVA_SETUP:
            self.reader.close()

    def __enter__(self) -> EntityIndex:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


@dataclass(frozen=True)
class RelationStatistics:
    """The relations field: ``entities`` with at least one related entity (N_R), ``links`` in
    all (the sum of |R(e)|) and distinct related ``targets``."""

    entities: int
    links: int
    targets: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class _Document(Mapping[str, str]):
    """:meth:`EntityIndex.document`: the stored fields at once, the others when asked for."""

    def __init__(self, index: EntityIndex, docid: int, stored: dict[str, str]) -> None:
        self._index, self._docid, self._values = index, docid, stored

    def __getitem__(self, name: str) -> str:
        if name not in self._values:
            if name not in self._index.text_fields:
                raise KeyError(name)
            self._values[name] = " ".join(self._index.indexed_terms(self._docid, name))
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter((ID_FIELD, *self._index.text_fields))

    def __len__(self) -> int:
        return 1 + len(self._index.text_fields)
