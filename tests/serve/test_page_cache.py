"""A worker's artefacts are read into the page cache before it serves (elquery/serve/page_cache.py):
after page_in a file evicted from the cache is resident again, checked with the kernel's own
mincore(2), files come smallest first, and those beyond the memory budget are left out."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from pathlib import Path

import pytest

from elquery.serve.page_cache import artefact_files, page_in

PAGE = mmap.PAGESIZE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore and posix_fadvise: Linux only")


def _resident_share(path: Path) -> float:
    """The share of ``path``'s pages in the page cache, by mincore(2) over a mapping of it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    size = path.stat().st_size
    pages = -(-size // PAGE)
    with open(path, "rb") as file:
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, file.fileno(), 0)
        assert address not in (None, ctypes.c_void_p(-1).value), os.strerror(ctypes.get_errno())
        try:
            vector = ctypes.create_string_buffer(pages)
            assert libc.mincore(address, size, vector) == 0, os.strerror(ctypes.get_errno())
            return sum(byte & 1 for byte in vector.raw[:pages]) / pages
        finally:
            libc.munmap(address, size)


def _evicted(path: Path) -> Path:
    """``path`` written out and dropped from the page cache (its pages clean, so the kernel drops them)."""
    with open(path, "rb") as file:
        os.fsync(file.fileno())
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return path


def test_a_file_out_of_the_cache_is_resident_after_page_in(tmp_path: Path) -> None:
    path = tmp_path / "postings.bin"
    path.write_bytes(os.urandom(64 * PAGE + 123))
    if _resident_share(_evicted(path)) > 0.5:
        pytest.skip("this file system keeps the file's pages cached whatever posix_fadvise asks (e.g. tmpfs)")
    paged = page_in([path], budget=1 << 30)
    assert (paged.files, paged.left, paged.size) == (1, 0, 64 * PAGE + 123)
    assert _resident_share(path) == 1.0


def test_files_come_smallest_first_and_the_budget_leaves_the_largest_out(tmp_path: Path) -> None:
    index = tmp_path / "index"
    (index / "sub").mkdir(parents=True)
    sizes = {index / "a.doc": 3000, index / "sub" / "b.tim": 1000, index / "c.pos": 5000, tmp_path / "store.db": 2000}
    for path, size in sizes.items():
        path.write_bytes(b"x" * size)
    files = artefact_files([index, tmp_path / "store.db"])
    assert files == [index / "sub" / "b.tim", tmp_path / "store.db", index / "a.doc", index / "c.pos"]
    paged = page_in(files, budget=6500)  # 1000 + 2000 + 3000 fit; 5000 more would not
    assert (paged.files, paged.left, paged.size) == (3, 1, 6000)
    nothing = page_in(files, budget=0)
    assert (nothing.files, nothing.left, nothing.size) == (0, 4, 0)


def test_nothing_is_read_when_the_memory_is_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(b"x" * 100)
    monkeypatch.setattr("elquery.serve.page_cache.available_memory", lambda: None)
    paged = page_in([path])
    assert (paged.files, paged.size, paged.left) == (0, 0, 1)
