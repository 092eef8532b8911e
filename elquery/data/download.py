"""Downloading, verifying and linking the registered datasets (docs/data.md), over httpx.

A file is fetched into ``.NAME.part`` beside its final place and moved there only once it is
complete and verified (SHA-256 and size against the registry or, for files the publisher gives no
checksum for, against the lock file of a first download). Each mirror is tried in turn; on a
dropped connection or a server error a mirror is retried with exponential backoff, and the
download resumes where the partial file ends (HTTP Range). A server that ignores Range sends the
whole file again, which then replaces the partial one. A 404 (or any other client error) moves on
to the next mirror; a file that fails its checksum is deleted and the next mirror tried. Ctrl-C,
a full disk or a permission error stop the download with the partial file kept, so running the
command again resumes it; nothing incomplete is ever at the final path.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
from tqdm import tqdm

from elquery.base import ElqueryError
from elquery.files import sha256_of
from elquery.data.registry import (LOCK_FILE, Dataset, dataset_dir, datasets_dir, is_local_copy, read_lock,
                                   write_lock)

@dataclass(frozen=True)
class Expected:
    """What a file must be: its SHA-256 and size, where known (``whose``: the size is the one the
    registry publishes, or the one the lock file recorded at the first download)."""

    sha256: str | None = None
    size: int | None = None
    whose: str = "published"

    def matches(self, digest: str, size: int) -> bool:
        """Whether a file of this checksum and size is the one expected (unknown parts match)."""
        return (self.sha256 is None or digest == self.sha256) and (self.size is None or size == self.size)


def expected(data: Dataset, file: str, lock: dict) -> Expected:
    recorded = lock.get(data.name, {}).get(file, {})
    size = data.sizes.get(file)
    return Expected(data.checksums.get(file) or recorded.get("sha256"), recorded.get("size") if size is None else size,
                    "published" if size is not None else "recorded")


def _bar(name: str, total: int | None, initial: int) -> tqdm:
    return tqdm(total=total, initial=initial, unit="B", unit_scale=True, desc=name, file=sys.stderr,
                disable=not sys.stderr.isatty())


DONE, RETRY, NEXT = "done", "retry", "next"
"""What one GET gives: the body ended where it should; a passing fault (retry this mirror); or
this mirror cannot give the file (a 4xx, a redirect loop, an answer that does not decode or is
longer than the file: the next mirror)."""


def _get(client: httpx.Client, url: str, part: Path, want: Expected) -> tuple[str, str]:
    """One GET of ``url`` appended to ``part`` (resumed with Range when part of it is there), never
    past the expected size: the outcome (:data:`DONE`, :data:`RETRY` or :data:`NEXT`) and, for
    :data:`NEXT`, why."""
    offset = part.stat().st_size if part.exists() else 0
    if want.size is not None and offset > want.size:  # longer than the file: start over
        part.unlink()
        offset = 0
    if want.size is not None and offset == want.size:
        return DONE, ""
    headers = {"Accept-Encoding": "identity"} | ({"Range": f"bytes={offset}-"} if offset else {})
    with client.stream("GET", url, headers=headers) as response:
        status = response.status_code
        if status == 416 and offset:
            return DONE, ""  # nothing after the end: the partial file is whole (verification decides)
        if status >= 500 or status == 429:
            return RETRY, ""
        if status >= 400:
            return NEXT, "not there"
        if status == 206:
            start = response.headers.get("content-range", "").removeprefix("bytes ").split("-")[0]
            if start != str(offset):  # not the range asked for: start over
                part.unlink(missing_ok=True)
                return RETRY, ""
        else:
            offset = 0  # 200: the server ignored Range and sends the whole file
        length = response.headers.get("content-length")
        encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
        total = offset + int(length) if length and length.isdigit() and not encoded else None
        if total is not None and want.size is not None and total != want.size:
            return NEXT, f"announces {total} bytes, the {want.whose} size is {want.size}"
        limit = want.size if want.size is not None else total
        written = offset
        with open(part, "ab" if offset else "wb") as out, _bar(part.name[1:-5], limit, offset) as bar:
            try:
                for chunk in response.iter_bytes():  # as received: nothing buffered is lost if the connection drops
                    if limit is not None and written + len(chunk) > limit:
                        out.close()
                        part.unlink()
                        return NEXT, f"sent more than the {want.whose} {limit} bytes"
                    out.write(chunk)
                    written += len(chunk)
                    bar.update(len(chunk))
            except httpx.DecodingError:  # keep what earlier answers gave, drop this one's
                out.truncate(offset)
                if not offset:
                    out.close()
                    part.unlink()
                return NEXT, f"the answer's content-encoding does not decode ({response.headers['content-encoding']})"
    if total is not None and part.stat().st_size < total:
        return RETRY, ""
    return DONE, ""


def fetch(client: httpx.Client, urls: Sequence[str], destination: Path, want: Expected, retries: int = 4,
          backoff: float = 1.0) -> str:
    """Download the first mirror of ``urls`` that gives a verified file to ``destination``;
    returns its SHA-256."""
    part = destination.with_name(f".{destination.name}.part")
    problems: list[str] = []
    try:
        for url in urls:
            for attempt in range(retries):
                try:
                    outcome, problem = _get(client, url, part, want)
                except httpx.TransportError as exc:  # a dropped connection or a timeout: resume
                    outcome, problem = RETRY, ""
                    problems.append(f"{url}: {type(exc).__name__}")
                except httpx.TooManyRedirects:
                    outcome, problem = NEXT, "too many redirects"
                except httpx.InvalidURL as exc:
                    outcome, problem = NEXT, f"not a valid URL ({exc})"
                if outcome == NEXT:
                    problems.append(f"{url}: {problem}")
                    break
                if outcome == RETRY:
                    time.sleep(backoff * 2**attempt)
                    continue
                digest = sha256_of(part)
                size = part.stat().st_size
                if not want.matches(digest, size):
                    part.unlink()
                    problems.append(f"{url}: checksum or size does not match (SHA-256 {digest[:12]}..., {size} bytes)")
                    break
                part.replace(destination)
                return digest
            else:
                problems.append(f"{url}: gave up after {retries} attempts")
    except OSError as exc:
        raise ElqueryError(f"{part}: {exc.strerror or exc}; the partial download is kept: free space or fix "
                           "permissions and run the command again to resume") from None
    raise ElqueryError(f"{destination.name}: could not be downloaded ({'; '.join(problems[-3:])})")


@dataclass(frozen=True)
class FileState:
    """A dataset file on disk: ``ok``, ``missing``, ``unverified`` (no checksum known) or ``bad``."""

    file: str
    state: str
    detail: str = ""


def download(data: Dataset, only: Sequence[str] = (), *, retries: int = 4, backoff: float = 1.0,
             client: httpx.Client | None = None) -> list[FileState]:
    """Fetch the selected files of ``data`` that are not there yet; record the checksum of each
    file the registry has none for in the lock file."""
    directory = dataset_dir(data.name)
    lock = read_lock()
    states = []
    own = client is None
    client = client or httpx.Client(timeout=httpx.Timeout(60.0, connect=20.0), follow_redirects=True)
    try:
        for file in data.selected(only):
            destination = directory / file
            want = expected(data, file, lock)
            if destination.exists() and (want.size is None or destination.stat().st_size == want.size):
                states.append(FileState(file, "ok", "already there"))
                continue
            try:
                destination.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ElqueryError(f"{destination.parent}: {exc.strerror or exc}") from None
            digest = fetch(client, data.urls(file), destination, want, retries, backoff)
            if file not in data.checksums:
                lock.setdefault(data.name, {})[file] = {"sha256": digest, "size": destination.stat().st_size}
                write_lock(lock)
            states.append(FileState(file, "ok", "downloaded"))
    finally:
        if own:
            client.close()
    return states


def verify(data: Dataset, only: Sequence[str] = ()) -> list[FileState]:
    """Each selected file against its published or locked checksum and size."""
    directory = dataset_dir(data.name)
    lock = read_lock()
    states = []
    for file in data.selected(only):
        path = directory / file
        want = expected(data, file, lock)
        if not path.is_file():
            states.append(FileState(file, "missing"))
        elif want.sha256 is None:
            states.append(FileState(file, "unverified", "no checksum published or recorded"))
        elif not want.matches(sha256_of(path), path.stat().st_size):
            states.append(FileState(file, "bad", "checksum or size differs from the one recorded"))
        else:
            states.append(FileState(file, "ok"))
    return states


def located(data: Dataset, folder: Path) -> dict[str, Path]:
    """Where ``folder`` holds each file of ``data`` it holds: under the dataset's name, else under
    the publisher's (:meth:`Dataset.source`: ``folder`` is a clone of the publisher's folder)."""
    found = {}
    for file in data.files:
        path = next((folder / name for name in dict.fromkeys((file, data.source(file))) if (folder / name).is_file()),
                    None)
        if path is not None:
            found[file] = path
    return found


def link(data: Dataset, folder: Path) -> list[FileState]:
    """Use a local copy (data behind a licence agreement, or downloaded by hand). A copy in the
    dataset's layout (its names, as ``elquery data info`` lists them) is linked as it is: the
    dataset's folder becomes a symbolic link to ``folder``. A copy in the publisher's layout (the
    names under its mirrors, ``from`` in ``info``) is linked file by file: the dataset's folder
    becomes a folder of symbolic links, each named as the configs read it. A copy may lack files
    (``missing``); a folder holding none of them, or a file whose checksum differs from the
    published or recorded one, is refused before anything changes. The checksums of its files
    that have none yet are recorded, so later ``verify`` runs check the copy has not changed."""
    folder = folder.resolve()
    if not folder.is_dir():
        raise ElqueryError(f"{folder}: no such folder")
    found = located(data, folder)
    if not found:
        renamed = [data.source(file) for file in data.files if data.source(file) != file]
        such = data.files[0] + (f" or {renamed[0]}" if renamed else "")
        names = ", under their names or the publisher's" if renamed else ""
        raise ElqueryError(f"{folder} holds none of the files of {data.name}{names} (such as {such}); "
                           f"`elquery data info {data.name}` lists them")
    target = dataset_dir(data.name)
    if target.exists() and not is_local_copy(target):
        raise ElqueryError(f"{target}: already holds downloaded files; move it away to use a local copy instead")
    lock = read_lock()
    recorded = lock.setdefault(data.name, {})
    states = []
    for file in data.files:
        if file not in found:
            states.append(FileState(file, "missing"))
            continue
        path = found[file]
        want = expected(data, file, lock)
        digest, size = sha256_of(path), path.stat().st_size
        if not want.matches(digest, size):
            whose = ("published file" if file in data.checksums or file in data.sizes else
                     f"file recorded in {datasets_dir() / LOCK_FILE} (delete its entry there to accept this copy)")
            raise ElqueryError(f"{path}: not the {whose}: SHA-256 {digest[:12]}..., {size} bytes, expected "
                               f"{(want.sha256 or '?')[:12]}..., {want.size or '?'} bytes; nothing was linked")
        if want.sha256 is None:
            recorded[file] = {"sha256": digest, "size": size}
        states.append(FileState(file, "ok"))
    temporary = target.with_name(f".{target.name}.link-{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if all(path == folder / file for file, path in found.items()):
            os.symlink(folder, temporary, target_is_directory=True)
        else:
            for file, path in found.items():
                (temporary / file).parent.mkdir(parents=True, exist_ok=True)
                os.symlink(path, temporary / file)
        _put_in_place(temporary, target)
    except OSError as exc:
        raise ElqueryError(f"{target}: {exc.strerror or exc}") from None
    finally:
        _remove(temporary)
    if recorded:
        write_lock(lock)
    return states


def _put_in_place(made: Path, target: Path) -> None:
    """``made`` (a link, or a folder of links) becomes ``target``, replacing the local copy there."""
    if made.is_symlink() and not (target.exists() and not target.is_symlink()):
        made.replace(target)  # atomic: the dataset's folder is the old link or the new one
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    there = target.is_symlink() or target.exists()
    if there:
        target.rename(old)
    try:
        made.rename(target)
    except BaseException:
        if there:
            old.rename(target)
        raise
    finally:
        _remove(old)


def _remove(path: Path) -> None:
    """Delete a link or a folder of links (never what the links point to)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
