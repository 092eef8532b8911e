"""Where a build writes, and how it replaces what was there: the one implementation every
artefact build (entity index, surface-form store, TAGME artefact) uses.

* ``--overwrite`` replaces only an elquery artefact of the same kind: a plain file, or a folder
  that is not such an artefact, is refused with one line before any work, and nothing is deleted.
* A build works in ``.NAME.building-PID`` beside its output; a later build of the same output
  removes the work folders of builds whose process is gone (killed builds), and says so.
* The final replacement cannot be cut in half by Ctrl-C or SIGTERM: a signal arriving during it
  is held until it is done, and the build then ends successfully, as the disk shows.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from elquery.base import ElqueryError

WORK_MARK = ".building-"


def _is_index(path: Path) -> bool:
    from elquery.indexing.index_format import METADATA_FILE

    return path.is_dir() and (path / METADATA_FILE).is_file()


def _is_surface_forms(path: Path) -> bool:
    from elquery.indexing.surface_forms.store import FORMAT

    if not path.is_file():
        return False
    try:
        with sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True) as db:
            return db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == (FORMAT,)
    except sqlite3.DatabaseError:
        return False


def _is_tagme(path: Path) -> bool:
    from elquery.indexing.tagme.layout import FORMAT, META_FILE

    try:
        return json.loads((path / META_FILE).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


KINDS: dict[str, Callable[[Path], bool]] = {
    "entity index": _is_index, "surface-form store": _is_surface_forms, "TAGME artefact": _is_tagme,
}


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


def work_dir(out: Path) -> Path:
    """This build's work folder beside ``out`` (created), after removing those of dead builds."""
    for stale in out.parent.glob(f".{out.name}{WORK_MARK}*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
            print(f"removed {stale}, left by an earlier build (process {pid}) that did not finish", file=sys.stderr)
    work = out.parent / f".{out.name}{WORK_MARK}{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    return work


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM (main thread) until the block is done; one that arrived meanwhile is
    dropped: the block's work is finished and stands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.signal(number, lambda *_: None) for number in held}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def replace(built: Path, out: Path) -> None:
    """Move ``built`` to ``out``, replacing an artefact already there (already checked by
    :func:`check_output`); uninterruptible, leaves nothing beside ``out``."""
    with signals_held():
        if out.exists():
            old = out.parent / f".{out.name}{WORK_MARK}{os.getpid()}-old"
            out.rename(old)
            built.rename(out)
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
        else:
            built.rename(out)
