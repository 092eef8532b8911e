"""The entity ids of a store build by number, in a file the merge workers map read-only (step 3
of :mod:`elquery.indexing.surface_forms.build`): the page cache holds one copy that every worker
shares, where each spawned worker would otherwise receive and hold the whole list (millions of
ids at full scale)."""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from pathlib import Path
from typing import overload

import numpy as np

IDS_FILE = "entity-ids.bin"
"""The ids' UTF-8 bytes, one after another."""
ENDS_FILE = "entity-ids.ends.npy"
"""Where each id's bytes end in :data:`IDS_FILE` (int64)."""


def write_entity_names(directory: Path, names: Sequence[str]) -> None:
    """Write ``names`` (the id of entity number ``i`` at ``i``) into ``directory``."""
    lengths = np.fromiter(map(len, map(str.encode, names)), np.int64, len(names))
    np.save(directory / ENDS_FILE, np.cumsum(lengths))
    (directory / IDS_FILE).write_bytes(b"".join(map(str.encode, names)))


class MappedEntityNames(Sequence[str]):
    """The ids written by :func:`write_entity_names`, read from the mapped files."""

    def __init__(self, directory: Path) -> None:
        self._ends = np.load(directory / ENDS_FILE, mmap_mode="r")
        with open(directory / IDS_FILE, "rb") as file:
            empty = file.seek(0, 2) == 0
            self._ids = b"" if empty else mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self._ends)

    def take(self, numbers: np.ndarray) -> list[str]:
        """The ids of entity ``numbers`` (an int array), in one pass (``[]`` costs a lookup each)."""
        numbers = np.asarray(numbers, np.int64)
        ends = np.asarray(self._ends[numbers])
        starts = np.where(numbers > 0, np.asarray(self._ends[np.maximum(numbers - 1, 0)]), 0)
        ids = self._ids
        return [ids[start:end].decode("utf-8") for start, end in zip(starts.tolist(), ends.tolist())]

    @overload
    def __getitem__(self, number: int) -> str: ...

    @overload
    def __getitem__(self, numbers: slice) -> list[str]: ...

    def __getitem__(self, number: int | slice) -> str | list[str]:
        if isinstance(number, slice):
            return [self[n] for n in range(*number.indices(len(self)))]
        if not -len(self) <= number < len(self):
            raise IndexError(f"entity number {number} out of range")
        number %= len(self)
        start = int(self._ends[number - 1]) if number else 0
        return self._ids[start:int(self._ends[number])].decode("utf-8")
