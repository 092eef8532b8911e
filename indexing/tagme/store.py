"""Kept for compatibility (one release): the anchor dictionary's reader moved to
:mod:`elquery.kb.tagme.store`, its writer to :mod:`elquery.indexing.tagme.dictionary_writer`;
import from there."""

from __future__ import annotations

from elquery.indexing.tagme.dictionary_writer import DictionaryWriter
from elquery.kb.tagme.store import AnchorDictionary, FormStats, Sense

__all__ = ["AnchorDictionary", "DictionaryWriter", "FormStats", "Sense"]
