"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.tagme.artefact`; import from
there."""

from __future__ import annotations

from elquery.kb.tagme.artefact import TagmeArtefact

__all__ = ["TagmeArtefact"]
