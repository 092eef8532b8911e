"""Read-only SQLite artefacts shared between threads: one connection per thread.

A Python ``sqlite3`` connection belongs to the thread that made it; sharing one with
``check_same_thread=False`` would serialize every lookup on its mutex. :class:`ReadOnlyDatabase`
opens the file (immutable, read-only) once in each thread that reads it, so lookups from several
threads run in parallel and give the same answers as from one.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class ReadOnlyDatabase:
    """An immutable SQLite file, opened lazily once per thread; :meth:`close` closes them all."""

    def __init__(self, path: Path, pragmas: Iterable[str] = ()) -> None:
        self.uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
        self._pragmas = tuple(pragmas)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (made on first use)."""
        db = getattr(self._local, "db", None)
        if db is None:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            db = sqlite3.connect(self.uri, uri=True, check_same_thread=False)
            for pragma in self._pragmas:
                db.execute(f"PRAGMA {pragma}")
            with self._lock:
                self._connections.append(db)
            self._local.db = db
        return db

    def execute(self, sql: str, parameters: Iterable[Any] = ()) -> sqlite3.Cursor:
        return self.connection().execute(sql, tuple(parameters))

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
            self._closed = True
