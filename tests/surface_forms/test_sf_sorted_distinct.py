"""``_sorted_distinct`` (a partition's forms ranked by one sort of its rows) gives Python's sorted
distinct strings and each row's index among them: duplicates, prefixes, empty strings, non-ASCII
strings whose UTF-8 bytes order them as code points do, one row, none."""

from __future__ import annotations

import random

import pyarrow as pa

from elquery.indexing.surface_forms.aggregate import _sorted_distinct


def _check(texts: list[str]) -> None:
    names, ranks = _sorted_distinct(pa.array(texts, pa.string()))
    expected = sorted(set(texts))
    assert names.to_pylist() == expected
    assert ranks.tolist() == [expected.index(text) for text in texts]


def test_ranks_as_python_sorts() -> None:
    rng = random.Random(5)
    alphabet = ["a", "b", "ab", " ", "é", "東", "\U0001f600", "z", "ß"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(4))) for _ in range(3000)]
    _check(texts)
    _check(["b", "a", "b", "", "", "ab", "a"])
    _check(["x"])
    _check(["x", "x"])
    _check([])
