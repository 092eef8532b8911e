"""An open-addressing hash table of mid codes -> entity numbers, in numpy arrays that the FACC
readers map read-only (step 2 of :mod:`elquery.indexing.surface_forms.build`).

A batch's codes are found with about 1.5 probes each (a load factor of at most 0.6, linear
probing), in a compiled loop (:func:`~elquery.indexing.surface_forms.kernels.find_codes`); a binary search (``searchsorted``) takes about
log2(n) dependent reads per code, most of them cache misses once the mapping outgrows the cache.
Slot ``h(code)``, ``h(code) + 1``, ... (wrapping) holds the code or, first, an empty slot (-1):
codes are never negative. ``h`` is Fibonacci hashing: the top bits of ``code * 2^64 / phi``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from elquery.indexing.surface_forms.kernels import find_codes

EMPTY = -1
MAX_LOAD = 0.6
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
KEYS_FILE, VALUES_FILE = "mid-table-keys.npy", "mid-table-values.npy"


def _slots(codes: np.ndarray, bits: int) -> np.ndarray:
    """The first slot of each code in a table of 2^bits slots."""
    if bits == 0:
        return np.zeros(len(codes), np.int64)
    return ((codes.astype(np.uint64) * _GOLDEN) >> np.uint64(64 - bits)).astype(np.int64)


class MidTable:
    """Mid codes (distinct, non-negative) -> entity numbers; ``find(codes)`` gives -1 where absent."""

    def __init__(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys, self.values = keys, values
        self._bits = len(keys).bit_length() - 1
        self._mask = len(keys) - 1

    @classmethod
    def of(cls, codes: np.ndarray, numbers: np.ndarray) -> MidTable:
        """The table of ``codes`` (distinct, >= 0) and their ``numbers`` (below 2^31): the fewest
        2^k slots that hold them at a load factor of at most :data:`MAX_LOAD`,
        filled a round at a time (each pending code claims its next slot if empty; of several
        claims on one slot the first wins, the others move one slot on)."""
        size = 2
        while len(codes) > MAX_LOAD * size:
            size *= 2
        keys = np.full(size, EMPTY, np.int64)
        values = np.full(size, -1, np.int32)
        pending = np.arange(len(codes))
        slots = _slots(codes, size.bit_length() - 1)
        while len(pending):
            at = slots[pending]
            free = keys[at] == EMPTY
            claimed, first = np.unique(at[free], return_index=True)
            winners = pending[free][first]
            keys[claimed], values[claimed] = codes[winners], numbers[winners]
            placed = np.zeros(len(codes), bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + 1) & (size - 1)
        return cls(keys, values)

    def find(self, codes: np.ndarray) -> np.ndarray:
        """The number of each code, -1 for a code not in the table (or negative): a code's slots
        probed in turn (:func:`find_codes`) until the code or an empty slot."""
        return find_codes(np.asarray(codes, np.int64), self.keys, self.values, self._bits)

    def save(self, directory: Path) -> None:
        np.save(directory / KEYS_FILE, self.keys)
        np.save(directory / VALUES_FILE, self.values)

    @classmethod
    def load(cls, directory: Path) -> MidTable:
        """The arrays :meth:`save` wrote, mapped read-only (shared through the page cache)."""
        return cls(np.load(directory / KEYS_FILE, mmap_mode="r"), np.load(directory / VALUES_FILE, mmap_mode="r"))
