"""A worker's artefacts read into the operating system's page cache before it serves.

A service started on artefacts that are not in memory (after a reboot, or once other work has
evicted them) reads its index, surface-form store and identifiers from disk request by request:
over all of DBpedia (4.6M entities, 7.3 GB of artefacts, 2 workers) the first 10 s after ready
then ran at 584 req/s, p99 63 ms, against 2,515 req/s, p99 22 ms with the files in the page cache
(``bench_serve.py``, load 1.5). The warm-up's queries touch only a small share of the pages.

So each worker first reads its artefacts' files whole (:func:`page_in`), smallest first, while they
fit in a share of the memory the system reports available (:data:`MEMORY_SHARE`): a machine too
small for all of them keeps the most files, and leaves the largest ones to the disk (over all of
DBpedia the index's positions and stored fields, which /link does not read). The reading is ``sendfile`` to ``/dev/null``: the
kernel brings the pages into its cache without copying them to the process (0.03 s of CPU a GB),
and a second worker finds them there.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MEMORY_SHARE = 0.5
"""The share of the available memory (``MemAvailable``) the files read may take."""
CHUNK = 1 << 30


@dataclass(frozen=True)
class PagedIn:
    """What :func:`page_in` did: ``files`` read whole (``size`` bytes) in ``seconds``; ``left``
    files not read because they did not fit in the memory share."""

    files: int
    size: int
    left: int
    seconds: float


def artefact_files(paths: Iterable[Path]) -> list[Path]:
    """The files of ``paths`` (a file, or every file under a folder), smallest first."""
    files: set[Path] = set()
    for path in paths:
        if path.is_dir():
            files.update(p for p in path.rglob("*") if p.is_file())
        else:
            files.add(path)
    return sorted(files, key=lambda p: (p.stat().st_size, str(p)))


def available_memory() -> int | None:
    """The memory the system reports available (``MemAvailable`` of ``/proc/meminfo``), in bytes;
    None where there is no such file."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def page_in(files: Iterable[Path], budget: int | None = None) -> PagedIn:
    """Read ``files`` whole into the page cache, in order, each while the bytes read so far and its
    size stay within ``budget`` (default: :data:`MEMORY_SHARE` of the available memory; nothing
    where that is unknown)."""
    started = time.perf_counter()
    if budget is None:
        available = available_memory()
        budget = 0 if available is None else int(available * MEMORY_SHARE)
    read, count, left = 0, 0, 0
    for path in files:
        size = path.stat().st_size
        if read + size > budget:
            left += 1
            continue
        _read_whole(path, size)
        read, count = read + size, count + 1
    return PagedIn(count, read, left, round(time.perf_counter() - started, 3))


def _read_whole(path: Path, size: int) -> None:
    """The file's pages into the page cache: ``sendfile`` to ``/dev/null``, or reads where the
    system has no such call for files."""
    with open(path, "rb", buffering=0) as source, open(os.devnull, "wb", buffering=0) as sink:
        offset = 0
        try:
            while offset < size:
                sent = os.sendfile(sink.fileno(), source.fileno(), offset, min(CHUNK, size - offset))
                if sent == 0:
                    return
                offset += sent
            return
        except (AttributeError, OSError):  # no sendfile (to a device) here: read instead
            pass
        source.seek(offset)
        buffer = bytearray(1 << 23)
        while source.readinto(buffer):
            pass
