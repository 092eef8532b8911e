"""A form's candidates as one blob of the surface-form store (format ``elquery-surface-forms/2``),
and reading it back without numpy (the writer encodes whole shards at once:
:func:`elquery.indexing.surface_forms.store_writer.encode_candidates`).

Layout of the blob of a form with K candidates, little-endian, in candidate order (commonness
descending, then entity id):

- one byte: the width code of the FACC counts in the low three bits, of the anchor counts in the
  next three; a code indexes :data:`WIDTHS` (0, 1, 2, 4 or 8 bytes a count: the fewest that hold
  the form's largest count; 0 when every count of that source is 0);
- K unsigned 32-bit words ``entity << 3 | sources``: the entity's number (``entities.id``, below
  2^29) and the sources of the pair as a bitmask (1 KB alias, 2 FACC, 4 anchors: a count above 0);
- K FACC counts, then K anchor counts, each of its width.

So K = (size - 1) / (4 + FACC width + anchor width). A form's total per source (the denominator
of commonness, methods.md §3 Eq. 9) is the sum of its counts: the build keeps totals over the
pairs it keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from struct import unpack_from

WIDTHS = (0, 1, 2, 4, 8)
"""Bytes a count, by width code."""
_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
SOURCE_BITS = 3
"""Low bits of a word that hold the pair's sources; the entity number is above them."""


@dataclass(frozen=True, slots=True)
class Candidates:
    """A decoded blob: per candidate, in candidate order, the entity number, the sources bitmask
    (1 KB alias, 2 FACC, 4 anchors), its FACC count and its anchor count."""

    entities: list[int]
    sources: list[int]
    facc: list[int]
    anchors: list[int]


def _unsigned(blob: bytes, start: int, count: int, width: int) -> tuple[int, ...]:
    if width == 0:
        return (0,) * count
    return unpack_from(f"<{count}{_CODES[width]}", blob, start)


def _layout(blob: bytes) -> tuple[int, int, int]:
    """(candidates, FACC width, anchor width) of a blob."""
    head = blob[0]
    facc_width, anchor_width = WIDTHS[head & 7], WIDTHS[head >> 3]
    return (len(blob) - 1) // (4 + facc_width + anchor_width), facc_width, anchor_width


def counted(blob: bytes) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The words (``entity << 3 | sources``) of a form's candidates and their counts n(m, e) for
    commonness (methods.md §3, Eq. 9): the FACC counts when the form has any, else the anchor
    counts (which then follow the words)."""
    count, facc_width, anchor_width = _layout(blob)
    return _unsigned(blob, 1, count, 4), _unsigned(blob, 1 + 4 * count, count, facc_width or anchor_width)


_ODD = bytes(byte & 1 for byte in range(256))
"""A translation table: a word's low byte to 1 when its KB-alias bit is set, else to 0."""


@dataclass(frozen=True, slots=True)
class Kept:
    """The candidates of a form kept at a commonness threshold (:func:`kept`): their words and
    counts (as :func:`counted` gives them), the form's total count and its number of candidates."""

    words: tuple[int, ...]
    counts: tuple[int, ...]
    total: int
    size: int


def kept(blob: bytes, min_commonness: float) -> Kept:
    """The candidates mention detection keeps at ``min_commonness`` (methods.md §3, Eq. 8-10):
    those of commonness n(m, e) / total at least it (a prefix, as candidates come by commonness),
    then the KB aliases after them; all of them at 0. Only the kept words are unpacked: the KB
    bits of the others are read from their low bytes at C speed (a form of thousands of
    candidates costs its counts' sum and its few kept ones)."""
    size, facc_width, anchor_width = _layout(blob)
    counts = _unsigned(blob, 1 + 4 * size, size, facc_width or anchor_width)
    total = sum(counts)
    if min_commonness <= 0.0:
        return Kept(unpack_from(f"<{size}I", blob, 1), counts, total, size)
    keep = 0
    for count in counts:
        if not (count and count / total >= min_commonness):
            break
        keep += 1
    words: tuple[int, ...] = unpack_from(f"<{keep}I", blob, 1)
    if keep == size:
        return Kept(words, counts, total, size)
    bits = blob[1 + 4 * keep : 1 + 4 * size : 4].translate(_ODD)  # the low byte of each word after them
    aliases = []
    at = bits.find(1)
    while at >= 0:
        aliases.append(keep + at)
        at = bits.find(1, at + 1)
    return Kept(words + tuple(unpack_from("<I", blob, 1 + 4 * at)[0] for at in aliases),
                counts[:keep] + tuple(counts[at] for at in aliases), total, size)


def decode(blob: bytes) -> Candidates:
    """Everything a blob holds (the layout above)."""
    count, facc_width, anchor_width = _layout(blob)
    words = _unsigned(blob, 1, count, 4)
    return Candidates(
        [word >> SOURCE_BITS for word in words],
        [word & 7 for word in words],
        list(_unsigned(blob, 1 + 4 * count, count, facc_width)),
        list(_unsigned(blob, 1 + (4 + facc_width) * count, count, anchor_width)),
    )


def form_ids(blob: bytes) -> list[int]:
    """The form ids an ``entity_forms`` row holds (little-endian uint32)."""
    return list(_unsigned(blob, 0, len(blob) // 4, 4))
