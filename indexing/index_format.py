"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.index_format`; import from
there."""

from __future__ import annotations

from elquery.kb.index_format import *  # noqa: F403  (re-exported: the names of __all__)

__all__ = [
    "ANALYZER_NAME",
    "ENTITY_COUNTS",
    "FIELDS",
    "FORMAT_VERSION",
    "IDS_FILE",
    "ID_FIELD",
    "LTR_FIELDS",
    "METADATA_FILE",
    "RELATIONS_FIELD",
    "STORED_FIELDS",
    "TEXT_FIELDS",
    "TYPED_RELATIONS_FIELD",
    "analyzer",
    "count_field",
    "count_file",
    "length_field",
    "length_file",
]
