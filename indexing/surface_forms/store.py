"""Kept for compatibility (one release): the surface-form store's reader moved to
:mod:`elquery.kb.surface_forms.store` (format names: :mod:`elquery.kb.surface_forms.layout`), its
writer to :mod:`elquery.indexing.surface_forms.store_writer`; import from there."""

from __future__ import annotations

from elquery.indexing.surface_forms.store_writer import (
    INDEXES,
    SCHEMA,
    append_shard,
    commonness_counts,
    create,
    finish,
    write_shard,
)
from elquery.kb.surface_forms.layout import ANCHORS, FACC, FORMAT, KB
from elquery.kb.surface_forms.store import (
    LONGEST_FORM_KEY,
    Alias,
    FormEntity,
    SurfaceFormStore,
    longest_form_tokens,
    query_spans,
)

__all__ = [
    "ANCHORS",
    "Alias",
    "FACC",
    "FORMAT",
    "FormEntity",
    "INDEXES",
    "KB",
    "LONGEST_FORM_KEY",
    "SCHEMA",
    "SurfaceFormStore",
    "append_shard",
    "commonness_counts",
    "create",
    "finish",
    "longest_form_tokens",
    "query_spans",
    "write_shard",
]
