"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.tagme.layout`; import from
there."""

from __future__ import annotations

from elquery.kb.tagme.layout import (
    DICTIONARY_FILE,
    FORMAT,
    INDICES_FILE,
    INDPTR_FILE,
    META_FILE,
    read_meta,
    write_meta,
)

__all__ = ["DICTIONARY_FILE", "FORMAT", "INDICES_FILE", "INDPTR_FILE", "META_FILE", "read_meta", "write_meta"]
