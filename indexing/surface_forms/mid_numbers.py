"""Freebase mids -> entity numbers in two sorted arrays (step 2 of
:mod:`elquery.indexing.surface_forms.build`): 16 bytes per mapped mid in files that the FACC readers
map read-only, where a dictionary of Python strings took about 100 bytes per mid in every reader.

A canonical mid ``/m/`` + up to :data:`MAX_CODE_CHARS` characters of ``[0-9a-z_]`` is encoded as
the integer whose base-38 digits are its characters (``0``-``9`` 1-10, ``a``-``z`` 11-36, ``_``
37, 0 after its end): distinct mids get distinct codes, below 2^63. A batch's mids are encoded
with numpy and found with one ``searchsorted``. A mapped mid too long to encode is kept in a
dictionary beside the arrays (Freebase's are 5 to 11 characters long, so it stays empty).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

MAX_CODE_CHARS = 12
_PREFIX = "/m/"
_WIDTH = len(_PREFIX) + MAX_CODE_CHARS
_DIGITS = np.zeros(256, np.int64)  # byte -> base-38 digit, 0 for a byte no mid holds
for _value, _char in enumerate(b"0123456789abcdefghijklmnopqrstuvwxyz_", 1):
    _DIGITS[_char] = _value
CODES_FILE, NUMBERS_FILE, LONG_FILE = "mid-codes.npy", "mid-numbers.npy", "mid-long.json"
_CHUNK = 1 << 20


def _ascii(texts: Sequence[str]) -> np.ndarray:
    """``texts`` as fixed-width bytes; a text that is not ASCII becomes empty (no mid is)."""
    try:
        return np.array(texts, dtype=f"S{_WIDTH}")
    except UnicodeEncodeError:
        return np.array([text if text.isascii() else "" for text in texts], dtype=f"S{_WIDTH}")


def mid_codes(mids: Sequence[str]) -> np.ndarray:
    """The code of each mid (int64), -1 for one that is not ``/m/`` + 1 to ``MAX_CODE_CHARS``
    characters of ``[0-9a-z_]``."""
    codes = np.full(len(mids), -1, np.int64)
    for start in range(0, len(mids), _CHUNK):
        part = mids[start:start + _CHUNK]
        lengths = np.fromiter(map(len, part), np.int64, len(part))
        chars = _ascii(part).view(np.uint8).reshape(len(part), _WIDTH)
        digits = _DIGITS[chars[:, len(_PREFIX):]]
        encoded = np.zeros(len(part), np.int64)
        for column in range(MAX_CODE_CHARS):
            encoded = encoded * 38 + digits[:, column]
        ok = (lengths > len(_PREFIX)) & (lengths <= _WIDTH) & (np.count_nonzero(digits, axis=1) == lengths - len(_PREFIX))
        ok &= (chars[:, 0] == ord("/")) & (chars[:, 1] == ord("m")) & (chars[:, 2] == ord("/"))
        codes[start:start + len(part)] = np.where(ok, encoded, -1)
    return codes


class MidNumbers:
    """The entity number of each mapped mid; ``numbers(mids)`` for a batch, -1 where unmapped."""

    def __init__(self, codes: np.ndarray, numbers: np.ndarray, long: dict[str, int]) -> None:
        self.codes, self._numbers, self._long = codes, numbers, long

    @classmethod
    def of(cls, mids: Mapping[str, int]) -> MidNumbers:
        keys = list(mids)
        codes = mid_codes(keys)
        numbers = np.fromiter(mids.values(), np.int64, len(keys))
        long = {key: number for key, number, code in zip(keys, numbers.tolist(), codes.tolist()) if code < 0}
        keep = codes >= 0
        order = np.argsort(codes[keep], kind="stable")
        return cls(codes[keep][order], numbers[keep][order], long)

    def numbers(self, mids: Sequence[str]) -> np.ndarray:
        """Each mid's entity number (int64), -1 for a mid that is not mapped."""
        codes = mid_codes(mids)
        at = np.minimum(np.searchsorted(self.codes, codes), max(len(self.codes) - 1, 0))
        found = (codes >= 0) & (self.codes[at] == codes) if len(self.codes) else np.zeros(len(mids), bool)
        numbers = np.where(found, self._numbers[at] if len(self.codes) else -1, -1)
        if self._long:
            for index in np.flatnonzero(codes < 0).tolist():
                numbers[index] = self._long.get(mids[index], -1)
        return numbers

    def save(self, directory: Path) -> None:
        np.save(directory / CODES_FILE, self.codes)
        np.save(directory / NUMBERS_FILE, self._numbers)
        (directory / LONG_FILE).write_text(json.dumps(self._long), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> MidNumbers:
        """The arrays :meth:`save` wrote, mapped read-only (shared through the page cache)."""
        return cls(np.load(directory / CODES_FILE, mmap_mode="r"), np.load(directory / NUMBERS_FILE, mmap_mode="r"),
                   json.loads((directory / LONG_FILE).read_text(encoding="utf-8")))


Mids = Mapping[str, int] | MidNumbers
"""What maps a reader's mids to entity numbers."""


def entity_numbers(mids: Mids, keys: Sequence[str]) -> np.ndarray:
    """The entity number of each of ``keys`` (int64, -1: unmapped), through a dictionary or a :class:`MidNumbers`."""
    if isinstance(mids, MidNumbers):
        return mids.numbers(keys)
    return np.fromiter((mids.get(key, -1) for key in keys), np.int64, len(keys))
