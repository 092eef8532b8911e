"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.surface_forms.layout`; import from
there."""

from __future__ import annotations

from elquery.kb.surface_forms.layout import ANCHORS, FACC, FORMAT, KB, SOURCE_ORDER

__all__ = ["ANCHORS", "FACC", "FORMAT", "KB", "SOURCE_ORDER"]
