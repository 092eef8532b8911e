"""The entity ids of a store build by number, in a file the merge workers map read-only (step 3
of :mod:`elquery.indexing.surface_forms.build`): the page cache holds one copy that every worker
shares, where each spawned worker would otherwise receive and hold the whole list (millions of
ids at full scale). Beside them, each id's rank in sorted order, so a worker orders candidates
by id (:func:`elquery.indexing.surface_forms.store_writer.write_shard`) without reading an id."""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from pathlib import Path
from typing import overload

import numpy as np
import pyarrow.compute as pc

from elquery.indexing.surface_forms.arrow_arrays import numpy_of, string_array

IDS_FILE = "entity-ids.bin"
"""The ids' UTF-8 bytes, one after another."""
ENDS_FILE = "entity-ids.ends.npy"
"""Where each id's bytes end in :data:`IDS_FILE` (int64)."""
RANKS_FILE = "entity-ids.ranks.npy"
"""Each id's rank among the ids in Python's order of strings (int64)."""


def write_entity_names(directory: Path, names: Sequence[str]) -> None:
    """Write ``names`` (the id of entity number ``i`` at ``i``, distinct) and their ranks into
    ``directory``. The ranks are sorted by pyarrow in UTF-8 byte order, which is code point order:
    Python's order of strings."""
    ids = string_array(names)
    offsets = np.frombuffer(ids.buffers()[1], np.int32, len(ids) + 1).astype(np.int64)
    np.save(directory / ENDS_FILE, offsets[1:])
    (directory / IDS_FILE).write_bytes(ids.buffers()[2].to_pybytes() if len(ids) else b"")
    ranks = np.empty(len(ids), np.int64)
    ranks[numpy_of(pc.sort_indices(ids))] = np.arange(len(ids))
    np.save(directory / RANKS_FILE, ranks)


class MappedEntityNames(Sequence[str]):
    """The ids written by :func:`write_entity_names`, read from the mapped files."""

    def __init__(self, directory: Path) -> None:
        self._ends = np.load(directory / ENDS_FILE, mmap_mode="r")
        self.ranks: np.ndarray = np.load(directory / RANKS_FILE, mmap_mode="r")
        """Each id's rank in sorted order (:data:`RANKS_FILE`), mapped."""
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
