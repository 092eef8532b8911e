"""pyarrow arrays to and from numpy and Python through their buffers, for the surface-form build.

pyarrow imports pandas (about 0.3 s of CPU) the first time it converts a Python or numpy value
(``Array.to_numpy``, ``pa.array``, ``pa.scalar``, a ``take`` of numpy indices, a string option
made a scalar), and the build's every spawned worker would pay it. These do the same through the
arrays' buffers, which pyarrow hands over without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

_NUMPY_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
                pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64}


def numpy_of(array: pa.Array) -> np.ndarray:
    """The values of an integer array without nulls (a read-only view of its buffer)."""
    if array.null_count:
        raise ValueError("an array with nulls has no plain numpy view")
    dtype = _NUMPY_TYPES[array.type]
    if not len(array):
        return np.zeros(0, dtype)
    return np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * np.dtype(dtype).itemsize)


def int64_array(values: np.ndarray) -> pa.Array:
    """``values`` as a pyarrow int64 array (indices for ``take``)."""
    values = np.ascontiguousarray(values, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def string_array(texts: Sequence[str]) -> pa.Array:
    """``texts`` (strings that are valid UTF-8: no lone surrogates) as a pyarrow string array."""
    encoded = [text.encode("utf-8") for text in texts]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return string_array_of(offsets, np.frombuffer(b"".join(encoded), np.uint8))


def string_array_of(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """The pyarrow string array of ``len(offsets) - 1`` strings ``data[offsets[i]:offsets[i + 1]]``
    (UTF-8; ``offsets`` from 0, int64)."""
    count = len(offsets) - 1
    if offsets[-1] < 2**31:
        return pa.StringArray.from_buffers(count, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
    return pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data)).cast(pa.string())


def string_buffers(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (int32 or int64, ``len(texts) + 1``, into the data) and the data (uint8) of a
    string array without nulls, read-only views of its buffers."""
    if texts.null_count:
        raise ValueError("an array with nulls has no plain string buffers")
    width = 8 if pa.types.is_large_string(texts.type) else 4
    if not len(texts):
        return np.zeros(1, f"<i{width}"), np.zeros(0, np.uint8)
    offsets = np.frombuffer(texts.buffers()[1], f"<i{width}", len(texts) + 1, texts.offset * width)
    data = texts.buffers()[2]
    return offsets, np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
