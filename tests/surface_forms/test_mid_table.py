"""The mid table (open addressing over numpy arrays) finds every code's number as a binary search
over the sorted codes does, and -1 for codes absent or negative: empty and one-code tables, codes
that crowd into the same slots (long probe runs that wrap around the table's end), a table saved
and mapped back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from elquery.indexing.surface_forms.mid_numbers import mid_codes
from elquery.indexing.surface_forms.mid_table import MidTable, _slots


def _searched(codes: np.ndarray, numbers: np.ndarray, queries: np.ndarray) -> np.ndarray:
    order = np.argsort(codes)
    ordered = codes[order]
    if not len(codes):
        return np.full(len(queries), -1, np.int64)
    at = np.minimum(np.searchsorted(ordered, queries), len(codes) - 1)
    return np.where((queries >= 0) & (ordered[at] == queries), numbers[order][at], -1)


@pytest.mark.parametrize("size", [0, 1, 2, 3, 1000, 100_000])
def test_finds_as_a_binary_search(size: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(size)
    codes = np.unique(rng.integers(0, 2**62, size))
    rng.shuffle(codes)
    numbers = rng.permutation(len(codes))
    queries = np.r_[codes, rng.integers(0, 2**62, 5000), -1, 0, 2**63 - 1]
    rng.shuffle(queries)
    table = MidTable.of(codes, numbers)
    assert len(codes) <= 0.6 * len(table.keys) and (len(codes) <= 1 or len(codes) > 0.3 * len(table.keys))
    np.testing.assert_array_equal(table.find(queries), _searched(codes, numbers, queries))
    table.save(tmp_path)
    np.testing.assert_array_equal(MidTable.load(tmp_path).find(queries), _searched(codes, numbers, queries))


def test_codes_crowding_one_slot_wrap_around() -> None:
    bits = 11  # the table of 1,000 codes: 2,048 slots (1,024 would be loaded above 0.6)
    rng = np.random.default_rng(3)
    candidates = np.unique(rng.integers(0, 2**62, 400_000))
    at_end = _slots(candidates, bits) == (1 << bits) - 1
    crowded = candidates[at_end][:150]  # all hash to the last slot: their run wraps to the first slots
    assert len(crowded) == 150
    codes = np.r_[crowded, candidates[~at_end][:850]]
    absent = candidates[~at_end][-50:]
    table = MidTable.of(codes, np.arange(len(codes)))
    assert len(table.keys) == 1 << bits and (table.keys[:100] != -1).sum() > 50
    queries = np.r_[codes, absent, candidates[at_end][-20:]]
    np.testing.assert_array_equal(table.find(queries), _searched(codes, np.arange(len(codes)), queries))


def test_real_mids() -> None:
    mids = ["/m/0abc", "/m/02mjmr", "/m/0_x", "/m/0zzzzzzzzzzz"]
    codes = mid_codes(mids)
    table = MidTable.of(codes, np.array([7, 8, 9, 10]))
    assert table.find(mid_codes(["/m/02mjmr", "/m/0abd", "/m/0_x", "/m/0abc"])).tolist() == [8, -1, 9, 7]
