"""Freebase mids -> entity numbers in a hash table of numpy arrays (step 2 of
:mod:`elquery.indexing.surface_forms.build`, :mod:`~elquery.indexing.surface_forms.mid_table`):
20 to 40 bytes per mapped mid in files that the FACC readers map read-only, where a dictionary of
Python strings took about 100 bytes per mid in every reader.

A canonical mid ``/m/`` + up to :data:`MAX_CODE_CHARS` characters of ``[0-9a-z_]`` is encoded as
the integer whose base-38 digits are its characters (``0``-``9`` 1-10, ``a``-``z`` 11-36, ``_``
37, 0 after its end): distinct mids get distinct codes, below 2^63. A batch's mids are encoded
with numpy and found in the table; a pyarrow column of mids is encoded from its
buffers (:func:`arrow_mid_codes`), without a Python string per row. A mapped mid too long to
encode is kept in a dictionary beside the arrays (Freebase's are 5 to 11 characters long, so it
stays empty).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from elquery.indexing.surface_forms.arrow_arrays import string_buffers
from elquery.indexing.surface_forms.kernels import mid_codes_of
from elquery.indexing.surface_forms.mid_table import MidTable

MAX_CODE_CHARS = 12
_PREFIX = "/m/"
_PREFIX_BYTES = np.frombuffer(_PREFIX.encode(), np.uint8)
_WIDTH = len(_PREFIX) + MAX_CODE_CHARS
_DIGITS = np.zeros(256, np.int64)  # byte -> base-38 digit, 0 for a byte no mid holds
for _value, _char in enumerate(b"0123456789abcdefghijklmnopqrstuvwxyz_", 1):
    _DIGITS[_char] = _value
LONG_FILE = "mid-long.json"
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


def arrow_mid_codes(mids: pa.Array) -> np.ndarray | None:
    """:func:`mid_codes` of a pyarrow string array, read from its buffers (:func:`mid_codes_of`);
    None if any of them is not ``/m/`` + 1 to ``MAX_CODE_CHARS`` characters of ``[0-9a-z_]`` (the
    caller then reads the mids as strings)."""
    if mids.null_count:
        return None
    return mid_codes_of(*string_buffers(mids), _PREFIX_BYTES, MAX_CODE_CHARS)


class MidNumbers:
    """The entity number of each mapped mid; ``numbers(mids)`` for a batch, -1 where unmapped."""

    def __init__(self, table: MidTable, long: dict[str, int]) -> None:
        self.table, self._long = table, long

    def numbers(self, mids: Sequence[str]) -> np.ndarray:
        """Each mid's entity number (int64), -1 for a mid that is not mapped."""
        codes = mid_codes(mids)
        numbers = self.table.find(codes)
        if self._long:
            for index in np.flatnonzero(codes < 0).tolist():
                numbers[index] = self._long.get(mids[index], -1)
        return numbers

    def numbers_of_codes(self, codes: np.ndarray) -> np.ndarray:
        """The entity number of each mid code (:func:`mid_codes`; int64), -1 for a code not mapped
        or negative (no code: a mid too long for one is looked up by :meth:`numbers`)."""
        return self.table.find(codes)

    def save(self, directory: Path) -> None:
        self.table.save(directory)
        (directory / LONG_FILE).write_text(json.dumps(self._long), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> MidNumbers:
        """The table :meth:`save` wrote, mapped read-only (shared through the page cache)."""
        return cls(MidTable.load(directory), json.loads((directory / LONG_FILE).read_text(encoding="utf-8")))


class FreebaseLinks:
    """The dumps' links from Freebase mids to entity numbers as they are read, in link order: mids
    encoded (:func:`mid_codes`) a batch at a time into two int64 arrays, 16 bytes a link where a
    dictionary of Python strings took about 200 (the main process holds them while it reads the
    dumps); a mid without a code is kept as a string."""

    def __init__(self) -> None:
        self._codes, self._numbers = array("q"), array("q")
        self._pending: list[str] = []
        self._pending_numbers: list[int] = []
        self._long: list[tuple[str, int]] = []

    def add_batch(self, mids: list[str], numbers: list[int]) -> None:
        """Link each of ``mids`` to its entity number, in order."""
        self._pending.extend(mids)
        self._pending_numbers.extend(numbers)
        if len(self._pending) >= _CHUNK:
            self._encode()

    def _encode(self) -> None:
        codes = mid_codes(self._pending)
        for index in np.flatnonzero(codes < 0).tolist():
            self._long.append((self._pending[index], self._pending_numbers[index]))
        self._codes.extend(codes[codes >= 0].tolist())
        self._numbers.extend(np.array(self._pending_numbers, np.int64)[codes >= 0].tolist())
        self._pending, self._pending_numbers = [], []

    def __len__(self) -> int:
        return len(self._codes) + len(self._long) + len(self._pending)

    def resolve(self, names: Sequence[str]) -> tuple[MidNumbers, int]:
        """The mapping, where a mid linked to several entities keeps the one whose id (in
        ``names``, by number) is smallest, and the conflicts: the links, in link order, naming
        another entity than the one their mid has kept so far."""
        self._encode()
        codes, numbers = np.frombuffer(self._codes, np.int64), np.frombuffer(self._numbers, np.int64)
        order = np.argsort(codes, kind="stable")
        codes, numbers = codes[order], numbers[order]
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.zeros(0, np.int64)
        kept = numbers[starts].copy()
        conflicts = 0
        if len(codes):
            mixed = np.flatnonzero(np.minimum.reduceat(numbers, starts) != np.maximum.reduceat(numbers, starts))
            ends = np.r_[starts[1:], len(codes)]
            for group in mixed.tolist():
                kept[group], found = _kept(numbers[starts[group]:ends[group]].tolist(), names)
                conflicts += found
        by_mid: dict[str, list[int]] = {}
        for mid, number in self._long:
            by_mid.setdefault(mid, []).append(number)
        long = {}
        for mid, linked in by_mid.items():
            long[mid], found = _kept(linked, names)
            conflicts += found
        return MidNumbers(MidTable.of(codes[starts], kept), long), conflicts


def _kept(numbers: list[int], names: Sequence[str]) -> tuple[int, int]:
    """The entity a mid keeps from its links (``numbers``, in link order) and the conflicts among them."""
    known, conflicts = numbers[0], 0
    for number in numbers[1:]:
        if number != known:
            conflicts += 1
            if names[number] < names[known]:
                known = number
    return known, conflicts


Mids = Mapping[str, int] | MidNumbers
"""What maps a reader's mids to entity numbers."""


def entity_numbers(mids: Mids, keys: Sequence[str]) -> np.ndarray:
    """The entity number of each of ``keys`` (int64, -1: unmapped), through a dictionary or a :class:`MidNumbers`."""
    if isinstance(mids, MidNumbers):
        return mids.numbers(keys)
    return np.fromiter((mids.get(key, -1) for key in keys), np.int64, len(keys))
