"""Kept for compatibility (one release): this module moved to :mod:`elquery.kb.normalize`; import from
there."""

from __future__ import annotations

from elquery.kb.normalize import Token, fold, normalize, query_tokens, tokenize

__all__ = ["Token", "fold", "normalize", "query_tokens", "tokenize"]
