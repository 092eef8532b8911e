"""Where a build writes, and how it replaces what was there: the one implementation every
artefact build (entity index, surface-form store, TAGME artefact) uses.

* ``--overwrite`` replaces only an elquery artefact of the same kind: a plain file, or a folder
  that is not such an artefact, is refused with one line before any work, and nothing is deleted.
* A build works in ``.NAME.building-PID`` beside its output (:func:`work_folder`) and removes it
  on every way out, whole (a signal cannot cut the removal short); a later build of the same output removes
  the work folders of builds whose process is gone (killed outright), and says so.
* The final replacement cannot be cut in half by Ctrl-C or SIGTERM: a signal arriving during it
  is held until it is done, and the build then ends successfully, as the disk shows.
  :func:`take_held_signal` tells a caller that goes on to more work (``elquery build``) that one
  arrived, so that it can stop there.
* An output folder a build creates is removed again when the build fails while it is still empty
  (:func:`created_folder`).

What each kind of artefact is on disk (:data:`KINDS`) is read-side knowledge, in
:mod:`elquery.kb.artefacts`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from elquery.base import ElqueryError
from elquery.files import process_alive
from elquery.kb.artefacts import KINDS

__all__ = ["KINDS", "WORK_MARK", "check_output", "remove_stale_work", "work_folder", "remove_work", "signals_held",
           "take_held_signal", "created_folder", "replace"]

WORK_MARK = ".building-"


def check_output(out: Path, kind: str, overwrite: bool) -> None:
    """Refuse, before any work, an output that exists unless ``overwrite`` and it is an elquery
    artefact of ``kind``; its folder must exist."""
    if out.exists() or out.is_symlink():
        if not overwrite:
            raise ElqueryError(f"{out}: already exists (use --overwrite to replace it)")
        if not KINDS[kind](out):
            raise ElqueryError(f"{out}: not an elquery {kind}: --overwrite replaces only one (nothing was deleted)")
    if not out.parent.is_dir():
        raise ElqueryError(f"{out}: output folder {out.parent} does not exist")


def remove_stale_work(out: Path) -> list[str]:
    """Remove the work folders beside ``out`` (``.NAME.building-PID``, with any suffix, e.g.
    ``-old``) of builds whose process is gone; returns a line about each."""
    lines = []
    for stale in sorted(out.parent.glob(f".{out.name}{WORK_MARK}*")):
        pid = re.match(r"\d*", stale.name[len(f".{out.name}{WORK_MARK}"):]).group()  # type: ignore[union-attr]  # \d* matches any string
        if not pid or (int(pid) != os.getpid() and not process_alive(int(pid))):
            remove_work(stale)
            lines.append(f"removed {stale}, left by an earlier build (process {pid or 'unknown'}) that did not finish")
    return lines


@contextmanager
def work_folder(out: Path) -> Iterator[Path]:
    """This build's work folder beside ``out``, made after removing those of dead builds (a line on
    stderr about each), and removed whole on every way out of the block (:func:`remove_work`)."""
    for line in remove_stale_work(out):
        print(line, file=sys.stderr)
    work = out.parent / f".{out.name}{WORK_MARK}{os.getpid()}"
    try:
        remove_work(work)
        work.mkdir()
        yield work
    finally:
        remove_work(work)


def remove_work(work: Path) -> None:
    """Remove a work folder (or file) whole: SIGINT and SIGTERM are held meanwhile, so an interrupt
    cannot leave part of it (gigabytes of spill files) behind."""
    with signals_held():
        if work.is_dir() and not work.is_symlink():
            shutil.rmtree(work, ignore_errors=True)
        else:
            work.unlink(missing_ok=True)


_held: list[int] = []
"""Signals :func:`signals_held` swallowed since :func:`take_held_signal` last looked."""


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM (main thread) until the block is done; one that arrived meanwhile is
    dropped (the block's work is finished and stands) and noted for :func:`take_held_signal`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, lambda number, frame: _held.append(number)) for number in held}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def take_held_signal() -> bool:
    """Whether a signal arrived during a :func:`signals_held` block since the last call."""
    arrived = bool(_held)
    _held.clear()
    return arrived


@contextmanager
def created_folder(folder: Path) -> Iterator[None]:
    """``folder`` created (with its missing parents) for the block; when the block fails, those
    of them that are still empty are removed again (a folder that holds something stays)."""
    missing = []
    for path in (folder, *folder.parents):
        if path.exists() or path.is_symlink():
            break
        missing.append(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        yield
    except BaseException:
        with signals_held():
            for path in missing:
                try:
                    path.rmdir()
                except OSError:
                    break
        raise


def replace(built: Path, out: Path) -> None:
    """Move ``built`` to ``out``, replacing an artefact already there (already checked by
    :func:`check_output`); uninterruptible, leaves nothing beside ``out``."""
    with signals_held():
        if out.exists():
            old = out.parent / f".{out.name}{WORK_MARK}{os.getpid()}-old"
            out.rename(old)
            built.rename(out)
            remove_work(old)
        else:
            built.rename(out)
