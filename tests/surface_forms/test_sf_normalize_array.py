"""``normalize_array`` (the build's normalization of a batch's forms, ASCII by byte table) gives
``normalize`` of every string: each ASCII character alone, between letters, in runs and at the
ends; mixed with non-ASCII strings; on a slice of an array (its buffers start before it)."""

from __future__ import annotations

import random

import pyarrow as pa

from elquery.indexing.surface_forms.aggregate import normalize_array, normalize_joined
from elquery.kb.normalize import normalize


def _texts() -> list[str]:
    chars = [chr(c) for c in range(128)]
    texts = [*chars, *(f"a{c}b" for c in chars), *(f"{c}{c}X{c}{c}y{c}" for c in chars), ""]
    rng = random.Random(7)
    alphabet = "aZ09 -_.'\t\x0b\x1c\x7f\x00é東ß"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(3000)]
    return texts


def test_every_string_as_normalize() -> None:
    texts = _texts()
    assert normalize_array(pa.array(texts, pa.string())).to_pylist() == [normalize(t) for t in texts]


def test_a_slice() -> None:
    texts = _texts()
    sliced = pa.array(texts, pa.string()).slice(100, 500)
    assert normalize_array(sliced).to_pylist() == [normalize(t) for t in texts[100:600]]
    assert normalize_array(pa.array([], pa.string())).to_pylist() == []


def test_non_ascii_joined_as_normalize() -> None:
    """The non-ASCII strings are normalized all at once (``normalize_joined``): the same as one
    ``normalize`` each, for folds that change lengths (ß, ligatures, full-width, combining marks),
    strings of separators only, empty strings, strings holding a newline, across the joins."""
    texts = ["Straße", "ﬁne", "ＮＹＣ", "Cafe\u0301", "—", "", "é—", "—é", "a\nb é", "Ǆemal", "ẞ", "東京 タワー",
             "\u2028x\u2029", "\x85é", "é_é", "  é  ", "İstanbul"]
    rng = random.Random(3)
    alphabet = "aZ09 -_.é東ßﬁＮ\u0301—\t"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(8))) for _ in range(2000)]
    without_newline = [t for t in texts if "\n" not in t]
    for batch in (texts, without_newline, without_newline[5:6], ["é"], ["é", ""]):
        array = pa.array(batch, pa.string())
        assert normalize_joined(array).to_pylist() == [normalize(t) for t in batch]
        assert normalize_array(array).to_pylist() == [normalize(t) for t in batch]
    sliced = pa.array(without_newline, pa.string()).slice(3, 40)
    assert normalize_joined(sliced).to_pylist() == [normalize(t) for t in without_newline[3:43]]


def test_every_code_point_between_letters() -> None:
    """Each code point (a sample of every seventh; surrogates and the newline aside) between
    letters, alone and repeated, in a string that is not ASCII: letters and digits kept, every
    other character a separator, as ``normalize`` has them."""
    points = [point for point in range(128, 0x110000, 7) if not 0xD800 <= point < 0xE000]
    texts = [f"é{chr(point)}x{chr(point) * 2}" for point in points] + [f"{chr(point)}Ab" for point in range(128) if point != 10]
    array = pa.array(texts, pa.string())
    expected = [normalize(t) for t in texts]
    assert normalize_joined(array).to_pylist() == expected
    assert normalize_array(pa.array(["plain ASCII", *texts, "X-Y"], pa.string())).to_pylist() == ["plain ascii", *expected, "x y"]
