"""Surface-form normalization (methods.md §3), shared by surface-form building and linking."""

from __future__ import annotations

import re

# Python's Unicode \w is exactly str.isalnum() plus "_": so [\W_] is "not a letter or digit".
_NOT_LETTER_OR_DIGIT = re.compile(r"[\W_]+")


def normalize(text: str) -> str:
    """methods.md §3: casefold; every character that is not a letter or digit (Unicode-aware)
    becomes a space; spaces collapsed. ``"Obama's"`` -> ``"obama s"``; accents are kept."""
    return _NOT_LETTER_OR_DIGIT.sub(" ", text.casefold()).strip()
