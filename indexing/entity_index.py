"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.entity_index`; import from
there."""

from __future__ import annotations

from elquery.kb.entity_index import EntityIndex, RelationStatistics

__all__ = ["EntityIndex", "RelationStatistics"]
