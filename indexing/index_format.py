"""The on-disk format of an elquery entity index (a Lucene index plus exact statistics).

``INDEX/`` is a Lucene index (one segment, documents in entity-id order within partitions) with
the fields ``id`` (entity id, stored, not analyzed), ``names`` and ``content`` (analyzed with
:func:`analyzer`, positions; ``names`` stored, see :data:`STORED_FIELDS`) and the exact per-field token counts as numeric doc values
``names_length`` / ``content_length``. Beside the Lucene files:

* ``elquery.json``: format version, analyzer, entity count, per-field token and term counts,
  the predicates indexed into ``content``;
* ``entity_ids.txt``: entity ids in Lucene docid order;
* ``names_length.npy`` / ``content_length.npy``: exact field lengths |e_f| in docid order.

An index built with ``--relations`` also holds two keyword fields (ELR, methods.md §4):
:data:`RELATIONS_FIELD`, per entity the distinct ids ``<dbpedia:Title>`` of the DBpedia resources
it links to through the URI-valued objects of its top predicates, each an unanalyzed term
(documents only), with the number of ids as doc values ``relations_length`` and in
``relations_length.npy``; and :data:`TYPED_RELATIONS_FIELD`, the same per predicate: a term
``id TAB predicate`` per distinct pair and ``TAB predicate`` per distinct predicate.
``elquery.json`` then records ``"relations": true``, the field's statistics and, per predicate,
N_f and |C_f| (``relation_predicates``).
"""

from __future__ import annotations

from typing import Any

from elquery.indexing.jvm import java_class

FORMAT_VERSION = 1
FIELDS = ("names", "content")
STORED_FIELDS = ("names",)
"""Text fields whose text Lucene stores: ``names``, read by ``EntityIndex.document`` for the
service's entity page. ``content`` is indexed only (no feature reads its text; it is most of the
text, and storing it tripled the index): ``EntityIndex.document`` gives its terms back from the
postings."""
ID_FIELD = "id"
RELATIONS_FIELD = "relations"
"""The keyword field of related entity ids (``elquery index dbpedia --relations``); not a text field."""
TYPED_RELATIONS_FIELD = "typed_relations"
"""The keyword field of (related entity id, predicate) pairs and predicates, beside :data:`RELATIONS_FIELD`."""
METADATA_FILE = "elquery.json"
IDS_FILE = "entity_ids.txt"
ANALYZER_NAME = "standard-english-stopwords"


def length_field(field: str) -> str:
    return f"{field}_length"


def length_file(field: str) -> str:
    return f"{field}_length.npy"


def analyzer() -> Any:
    """methods.md §2: Lucene's StandardAnalyzer (Unicode word tokenization, lowercase) with the
    33-word English stop list, no stemming; used for documents and queries alike."""
    english = java_class("org.apache.lucene.analysis.en.EnglishAnalyzer")
    return java_class("org.apache.lucene.analysis.standard.StandardAnalyzer")(english.ENGLISH_STOP_WORDS_SET)
