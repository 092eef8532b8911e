"""The on-disk format of an elquery entity index (a Lucene index plus exact statistics).

``INDEX/`` is a Lucene index (one segment, documents in entity-id order within partitions) with
the fields ``id`` (entity id, stored, not analyzed), ``names`` and ``content`` (analyzed with
:func:`analyzer`, positions; ``names`` stored, see :data:`STORED_FIELDS`) and the exact per-field token counts as numeric doc values
``names_length`` / ``content_length``. Beside the Lucene files:

* ``elquery.json``: format version, analyzer, entity count, per-field token and term counts,
  the predicates indexed into ``content``;
* ``entity_ids.txt``: entity ids in Lucene docid order;
* ``names_length.npy`` / ``content_length.npy``: exact field lengths |e_f| in docid order;
* ``entity_id_rank.npy`` (:data:`ID_RANK_FILE`; indexes built since it exists, which record
  ``"entity_id_rank": true``): per docid, its position in entity-id order (the tie order of every
  ranking), so that no reader sorts the ids. An index without it is still served: the order is
  then computed from ``entity_ids.txt`` on first use.

The ``.npy`` files are little-endian int32 arrays of one value per docid; the Java scorer
memory-maps the lengths and the id ranks rather than reading them.

An index built with ``--relations`` also holds two keyword fields (ELR, methods.md §4):
:data:`RELATIONS_FIELD`, per entity the distinct ids ``<dbpedia:Title>`` of the DBpedia resources
it links to through the URI-valued objects of its top predicates, each an unanalyzed term
(documents only), with the number of ids as doc values ``relations_length`` and in
``relations_length.npy``; and :data:`TYPED_RELATIONS_FIELD`, the same per predicate: a term
``id TAB predicate`` per distinct pair and ``TAB predicate`` per distinct predicate.
``elquery.json`` then records ``"relations": true``, the field's statistics and, per predicate,
N_f and |C_f| (``relation_predicates``).

An index built with the LTR fields (the default; ``--no-ltr-fields`` leaves them out, and an
index without them is the one built before they existed) also holds the text fields
:data:`LTR_FIELDS` (methods.md §9), analyzed and with exact lengths as ``names`` and ``content``
(``title`` and ``short_abstract`` stored), and per entity the counts :data:`ENTITY_COUNTS` as
numeric doc values ``<name>_count`` and in ``<name>_count.npy``. ``elquery.json`` then records
``"ltr_fields": true`` and, per count, its sum and the entities with a non-zero count
(``entity_counts``).

Such an index built since they exist also holds the LTR features' string-test texts in docid
order, normalized (:func:`elquery.kb.normalize.normalize`) once at build time rather than read
from Lucene's compressed stored fields and normalized per query: :data:`LTR_TEXTS_FILE`, UTF-8,
per docid its normalized non-empty titles joined by ``"\\n"`` then its normalized short abstract,
and :data:`LTR_TEXT_OFFSETS_FILE`, int64 byte offsets (2 per docid and one more: title i is
``[o[2i], o[2i+1])``, its abstract ``[o[2i+1], o[2i+2])``). ``elquery.json`` records
``"ltr_texts": true``; an index without them is read through the stored fields (slower).
"""

from __future__ import annotations

from typing import Any

from elquery.kb.jvm import java_class

FORMAT_VERSION = 1
FIELDS = ("names", "content")
"""The text fields of every index (MLM's, methods.md §2)."""
LTR_FIELDS = ("title", "short_abstract", "long_abstract", "wiki_links", "categories")
"""The text fields the LTR features read besides ``content`` (methods.md §9), in an index built
with them: the distinct values of rdfs:label, rdfs:comment and dbo:abstract; the titles of the
DBpedia resources dbo:wikiPageWikiLink links to, as text (``Barack_Obama`` -> ``Barack Obama``); the
dct:subject categories as text, ``Category:`` dropped."""
TEXT_FIELDS = (*FIELDS, *LTR_FIELDS)
STORED_FIELDS = ("names", "title", "short_abstract")
"""Text fields whose text Lucene stores: ``names``, read by ``EntityIndex.document`` for the
service's entity page, and ``title`` and ``short_abstract`` for the LTR features' string tests.
``content`` is indexed only (no feature reads its text; it is most of the text, and storing it
tripled the index): ``EntityIndex.document`` gives its terms back from the postings."""
ENTITY_COUNTS = ("redirects", "links")
"""Per-entity counts of an index with the LTR fields: the distinct redirect pages pointing at the
entity, and the distinct DBpedia resources it links to (dbo:wikiPageWikiLink)."""
ID_FIELD = "id"
RELATIONS_FIELD = "relations"
"""The keyword field of related entity ids (``elquery index dbpedia --relations``); not a text field."""
TYPED_RELATIONS_FIELD = "typed_relations"
"""The keyword field of (related entity id, predicate) pairs and predicates, beside :data:`RELATIONS_FIELD`."""
METADATA_FILE = "elquery.json"
IDS_FILE = "entity_ids.txt"
ID_RANK_FILE = "entity_id_rank.npy"
"""Per docid its position in entity-id order (int32); the Java scorer opens it by this name."""
LTR_TEXTS_FILE = "ltr_texts.bin"
LTR_TEXT_OFFSETS_FILE = "ltr_text_offsets.npy"
ANALYZER_NAME = "standard-english-stopwords"


def length_field(field: str) -> str:
    return f"{field}_length"


def length_file(field: str) -> str:
    return f"{field}_length.npy"


def count_field(name: str) -> str:
    return f"{name}_count"


def count_file(name: str) -> str:
    return f"{name}_count.npy"


def analyzer() -> Any:
    """methods.md §2: Lucene's StandardAnalyzer (Unicode word tokenization, lowercase) with the
    33-word English stop list, no stemming; used for documents and queries alike."""
    english = java_class("org.apache.lucene.analysis.en.EnglishAnalyzer")
    return java_class("org.apache.lucene.analysis.standard.StandardAnalyzer")(english.ENGLISH_STOP_WORDS_SET)
