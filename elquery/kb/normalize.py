"""Surface-form normalization (docs/methods.md §3): the one normalization of surface forms, query
text and TAGME phrases, shared by the surface-form store, mention detection and TAGME.

Unicode NFKC first (so decomposed "Cafe\\u0301", full-width "ＮＹＣ" and ligatures match their
composed, plain forms), then casefolding; every character that is not a letter or digit
(Unicode-aware) separates tokens. ``"Obama's"`` -> ``"obama s"``; accents are kept.

:func:`normalize` is the fast path (whole strings: dumps, FACC, anchors); :func:`tokenize` gives
the same tokens with their character offsets in the original text (queries: mentions point back
into what the user typed).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Python's Unicode \w is exactly str.isalnum() plus "_": so [\W_] is "not a letter or digit".
_NOT_LETTER_OR_DIGIT = re.compile(r"[\W_]+")
_LETTERS_OR_DIGITS = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """NFKC, then casefold: the character-level part of the normalization."""
    return unicodedata.normalize("NFKC", text).casefold()


def normalize(text: str) -> str:
    """The normalized form of ``text``: its tokens joined by single spaces."""
    return _NOT_LETTER_OR_DIGIT.sub(" ", fold(text)).strip()


@dataclass(frozen=True, slots=True)
class Token:
    """A normalized token and the character span ``[start, end)`` of ``text[start:end]`` it came from."""

    text: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """The tokens of :func:`normalize` with their character offsets in ``text``.

    Characters are folded one cluster at a time (a character with the combining marks that follow
    it), so every token maps back to whole clusters of the original text. A text already in NFKC,
    without combining marks, whose casefolding maps each character to one is folded whole (the
    same tokens and offsets: each character is its own cluster and folds to itself casefolded)."""
    if text.isascii() or _folds_in_place(text):
        return [Token(m.group(), m.start(), m.end()) for m in _LETTERS_OR_DIGITS.finditer(text.casefold())]
    return _tokenize_clusters(text)


def _folds_in_place(text: str) -> bool:
    """Whether :func:`fold` maps each character of ``text`` to one character, on its own: the
    text is in NFKC (so is each of its characters alone: a character that NFKC changes never
    occurs in NFKC text), none of its characters is a combining mark (each is a cluster) and
    casefolding keeps its length (no character folds to several)."""
    return (unicodedata.is_normalized("NFKC", text) and not any(map(unicodedata.combining, text))
            and len(text.casefold()) == len(text))


def _tokenize_clusters(text: str) -> list[Token]:
    """:func:`tokenize` folding one cluster at a time."""
    tokens: list[Token] = []
    chars: list[str] = []
    start = end = 0
    for cluster_start, cluster in _clusters(text):
        for char in fold(cluster):
            if char.isalnum():
                if not chars:
                    start = cluster_start
                chars.append(char)
                end = cluster_start + len(cluster)
            elif chars:
                tokens.append(Token("".join(chars), start, end))
                chars = []
    if chars:
        tokens.append(Token("".join(chars), start, end))
    return tokens


def _clusters(text: str) -> list[tuple[int, str]]:
    """(offset, cluster): each character with the combining marks that follow it."""
    clusters: list[tuple[int, str]] = []
    for i, char in enumerate(text):
        if clusters and unicodedata.combining(char):
            offset, cluster = clusters[-1]
            clusters[-1] = (offset, cluster + char)
        else:
            clusters.append((i, char))
    return clusters


def query_tokens(text: str) -> list[str]:
    """The normalized tokens of ``text`` (query n-grams are built over them, §3)."""
    return normalize(text).split()
