"""A model's compiled forest (:func:`elquery.linking.ltr.forest.compile_forest`) in a file,
memory-mapped read-only, so that the processes that load the same model (the workers of
``elquery serve --workers 2 --model M``) share one copy of it in the page cache instead of each
holding its own.

The file is ``<cache>/ltr-forests/<the model file's SHA-256>.forest`` (``<cache>``:
``$ELQUERY_CACHE`` or ``~/.cache/elquery``): a JSON header line (the layout's version, the model's
checksum, each array's name, dtype, shape and offset, the SHA-256 of what follows the header),
padded to :data:`HEADER_BYTES`, then the arrays at 64-byte-aligned offsets. The first process to load a model writes it, atomically (a
temporary file renamed when complete), under a lock on the folder, so processes starting together
compile the forest once; the others map it. A file that does not match (another layout, another
model, cut short, altered: its checksum is verified when mapped, as the kernels trust the offsets
it holds) is written again; where the cache cannot be written, the forest is compiled in memory as
before. The folder keeps the :data:`KEPT_FORESTS` most recently written files: writing one removes
the older ones (a process that maps a removed file keeps its pages; its model compiles again at its
next load).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from elquery.files import write_bytes_atomically
from elquery.kb.demo import cache_dir
from elquery.linking.ltr.forest import COMPILED_ARRAYS, ForestArrays, compile_forest

LAYOUT = "elquery-ltr-compiled/1"
"""The compiled layout's version (:mod:`elquery.linking.ltr.forest_kernels`): a file of another is
written again."""
HEADER_BYTES = 4096
ALIGN = 64
FOLDER = "ltr-forests"
KEPT_FORESTS = 8
"""The compiled forests the cache folder keeps (the most recently written)."""


def forest_path(model_sha256: str) -> Path:
    """Where the compiled forest of the model with this checksum is kept."""
    return cache_dir() / FOLDER / f"{model_sha256}.forest"


def shared_forest(arrays: ForestArrays, model_sha256: str) -> Mapping[str, np.ndarray]:
    """The compiled arrays of the model with checksum ``model_sha256`` (whose forest is ``arrays``),
    read-only views of its file, written first if missing or not matching; compiled in memory
    when the cache folder cannot be written."""
    path = forest_path(model_sha256)
    mapped = _mapped(path, model_sha256)
    if mapped is not None:
        return mapped
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.parent):
            mapped = _mapped(path, model_sha256)  # written by another process meanwhile
            if mapped is None:
                write_bytes_atomically(path, _file_bytes(compile_forest(arrays), model_sha256))
                mapped = _mapped(path, model_sha256)
                _prune(path.parent, path)
    except OSError:
        mapped = None
    return compile_forest(arrays) if mapped is None else mapped


def _file_bytes(compiled: Mapping[str, np.ndarray], model_sha256: str) -> bytes:
    arrays = [np.ascontiguousarray(compiled[name]) for name in COMPILED_ARRAYS]
    entries: list[list[object]] = []
    starts: list[int] = []
    offset = HEADER_BYTES
    for name, array in zip(COMPILED_ARRAYS, arrays):
        entries.append([name, array.dtype.str, list(array.shape), offset])
        starts.append(offset)
        offset += -(-array.nbytes // ALIGN) * ALIGN
    data = bytearray(offset)
    for start, array in zip(starts, arrays):
        data[start:start + array.nbytes] = array.tobytes()
    body = hashlib.sha256(memoryview(data)[HEADER_BYTES:]).hexdigest()
    header = json.dumps({"layout": LAYOUT, "model": model_sha256, "arrays": entries, "bytes": offset,
                         "sha256": body}).encode() + b"\n"
    if len(header) > HEADER_BYTES:
        raise ValueError("compiled forest header too long")
    data[:len(header)] = header
    return bytes(data)


def _mapped(path: Path, model_sha256: str) -> dict[str, np.ndarray] | None:
    """The arrays of the file at ``path``, read-only and memory-mapped; None if there is none or it
    is not the compiled forest of this model in this layout."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < HEADER_BYTES:
                return None
            memory = mmap.mmap(file.fileno(), size, access=mmap.ACCESS_READ)
    except OSError:
        return None
    try:
        header = json.loads(memory[:HEADER_BYTES].split(b"\n", 1)[0])
        if header.get("layout") != LAYOUT or header.get("model") != model_sha256 or header.get("bytes") != size:
            return None
        if hashlib.sha256(memoryview(memory)[HEADER_BYTES:]).hexdigest() != header.get("sha256"):
            return None
        arrays = {}
        for name, dtype, shape, offset in header["arrays"]:
            count = int(np.prod(shape, dtype=np.int64))
            arrays[name] = np.frombuffer(memory, dtype=np.dtype(dtype), count=count, offset=offset).reshape(shape)
    except (ValueError, KeyError, TypeError):
        return None
    return arrays if set(arrays) == set(COMPILED_ARRAYS) else None


def _prune(folder: Path, written: Path) -> None:
    """Remove the forest files of ``folder`` older than its :data:`KEPT_FORESTS` most recently
    written (never ``written``), and the lock files earlier releases left beside them."""
    for lock in folder.glob("*.forest.lock"):
        lock.unlink(missing_ok=True)
    forests = sorted(folder.glob("*.forest"), key=lambda file: (file != written, -file.stat().st_mtime_ns, file.name))
    for old in forests[KEPT_FORESTS:]:
        old.unlink(missing_ok=True)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on the folder while the block runs (nothing is left in it); none where the
    platform has no ``fcntl``."""
    try:
        import fcntl
    except ImportError:  # not POSIX: two processes may both write the file, each atomically
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock
