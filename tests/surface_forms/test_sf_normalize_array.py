"""``normalize_array`` (the build's normalization of a batch's forms, ASCII by byte table) gives
``normalize`` of every string: each ASCII character alone, between letters, in runs and at the
ends; mixed with non-ASCII strings; on a slice of an array (its buffers start before it)."""

from __future__ import annotations

import random

import pyarrow as pa

from elquery.indexing.surface_forms.aggregate import normalize_array
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
