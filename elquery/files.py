"""The bottom of the stack, beside :mod:`elquery.base`: how every command reads its text inputs and
writes its output files, so they all follow the same conventions.

* ``-`` is standard input (``--queries -``) or standard output (``--out -``);
* an output path is checked before any work starts (its folder exists, it is not a folder);
* an output file is written beside its final name and renamed into place only when complete, with
  the permissions the user's umask gives (0666 & ~umask), never left half-written; the temporary
  files a killed command left beside it (``.NAME.PID-XXXXXXXX.tmp`` of a process that is gone)
  are removed by the next command writing that output, with a line saying so;
* an input is opened with one-line errors naming its path (:func:`open_binary_input`); how its
  text is read, line by line, is :mod:`elquery.formats.lines`.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO

from elquery.base import ElqueryError

STDIO = "-"


def is_stdio(path: Path | str | None) -> bool:
    return path is None or str(path) == STDIO


def check_output(path: Path | str | None) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if path is None or is_stdio(path):
        return
    path = Path(path)
    if path.is_dir():
        raise ElqueryError(f"{path}: is a directory, not an output file")
    if not path.parent.is_dir():
        raise ElqueryError(f"{path}: output directory {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK):
        raise ElqueryError(f"{path}: output directory {path.parent} is not writable")


@contextmanager
def atomic_output(path: Path | str | None) -> Iterator[IO[str]]:
    """Standard output for ``None`` or ``-``; otherwise a new file beside ``path``, renamed to
    ``path`` when the block succeeds and removed when it fails."""
    if path is None or is_stdio(path):
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    temporary = _temporary_beside(path)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_bytes_atomically(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` as :func:`atomic_output` writes text: a new file beside it,
    renamed to ``path`` when complete, removed when the write fails."""
    path = Path(path)
    temporary = _temporary_beside(path)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _temporary_beside(path: Path) -> Path:
    """A new temporary file's name beside the output ``path`` (``.NAME.PID-XXXXXXXX.tmp``), once
    ``path`` is checked and the temporaries of killed processes beside it are removed."""
    check_output(path)
    for line in remove_stale_temporaries(path):
        print(line, file=sys.stderr)
    return path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")


def remove_stale_temporaries(path: Path) -> list[str]:
    """Remove the temporary files of :func:`atomic_output` beside ``path``
    (``.NAME.PID-XXXXXXXX.tmp``) whose process is gone (killed before it could remove them);
    returns a line about each. Those of a running process (another command writing the same
    output) are left alone."""
    own = re.compile(rf"\.{re.escape(path.name)}\.(\d+)-[0-9a-f]{{8}}\.tmp")
    lines: list[str] = []
    try:
        candidates = sorted(path.parent.iterdir())
    except OSError:
        return lines
    for candidate in candidates:
        found = own.fullmatch(candidate.name)
        if found is None or process_alive(int(found.group(1))) or not candidate.is_file():
            continue
        try:
            candidate.unlink()
        except OSError:
            continue  # another command removed it first, or the folder forbids it: not this command's business
        lines.append(f"removed {candidate}, left by an earlier command (process {found.group(1)}) that did not finish")
    return lines


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (this one included; one of another user too)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or a number no process can have
        return False
    except PermissionError:
        return True
    return True


def check_input(path: Path | str, what: str) -> None:
    """Refuse an input file that is missing or a folder (``what``: "query file", ...), before any
    work is done; ``-`` (standard input) passes."""
    if is_stdio(path):
        return
    path = Path(path)
    if path.is_dir():
        raise ElqueryError(f"{path}: is a directory, not a {what}")
    if not path.exists():
        raise ElqueryError(f"{path}: no such {what}")


@contextmanager
def open_binary_input(path: Path | str, what: str) -> Iterator[BinaryIO]:
    """A binary input stream: standard input for ``-``; one-line errors naming the path."""
    if is_stdio(path):
        yield sys.stdin.buffer
        return
    check_input(path, what)
    path = Path(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise ElqueryError(f"{path}: no such {what}") from None
    except PermissionError:
        raise ElqueryError(f"{path}: permission denied") from None
    with handle:
        yield handle


def sha256_of(path: Path | str, progress: Callable[[int], object] | None = None) -> str:
    """SHA-256 (hex) of a file, streamed in 4 MiB blocks; ``progress(n)`` after each block."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
            if progress is not None:
                progress(len(block))
    return digest.hexdigest()


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The table of the TOML file ``path`` (UTF-8, a byte order mark at the start dropped); a
    missing or unreadable file, bytes that are not UTF-8, or text that is not TOML is one line
    naming the file and ``what`` it should be."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ElqueryError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise ElqueryError(f"{path}: not a readable {what} ({exc.strerror or exc})") from None
    try:
        return tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ElqueryError(f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ElqueryError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ElqueryError(f"{path}: not valid TOML (nested too deeply)") from None
