"""Writing the SQLite anchor dictionary of the TAGME artefact (methods.md §6; the tables are
described in :mod:`elquery.kb.tagme.store`, which reads it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from elquery.indexing.tagme.dictionary import FormEntry

_SCHEMA = """
CREATE TABLE forms (form TEXT PRIMARY KEY, link INTEGER NOT NULL, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE candidates (form TEXT NOT NULL, node INTEGER NOT NULL, link INTEGER NOT NULL,
                         PRIMARY KEY (form, node)) WITHOUT ROWID;
CREATE TABLE entities (node INTEGER PRIMARY KEY, entity TEXT NOT NULL UNIQUE);
CREATE TABLE page_ids (node INTEGER PRIMARY KEY, page_id INTEGER NOT NULL);
"""
_BATCH = 50_000


class DictionaryWriter:
    """Creates ``dictionary.db``; every write happens in one transaction, committed by
    :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.executescript(_SCHEMA)
        self._db.execute("BEGIN")
        self.forms = 0
        self.pairs = 0

    def add_forms(self, entries: Iterable[FormEntry]) -> None:
        forms: list[tuple[str, int, int]] = []
        pairs: list[tuple[str, int, int]] = []
        for entry in entries:
            forms.append((entry.form, entry.link, 0))
            pairs.extend((entry.form, node, count) for node, count in entry.counts)
            if len(pairs) >= _BATCH:
                self._insert(forms, pairs)
                forms, pairs = [], []
        self._insert(forms, pairs)

    def _insert(self, forms: list[tuple[str, int, int]], pairs: list[tuple[str, int, int]]) -> None:
        self._db.executemany("INSERT INTO forms VALUES (?, ?, ?)", forms)
        self._db.executemany("INSERT INTO candidates VALUES (?, ?, ?)", pairs)
        self.forms += len(forms)
        self.pairs += len(pairs)

    def set_document_frequencies(self, df: Mapping[str, int]) -> None:
        self._db.executemany("UPDATE forms SET df = ? WHERE form = ?", ((n, form) for form, n in sorted(df.items())))

    def add_entities(self, entities: Iterable[tuple[int, str]]) -> None:
        self._db.executemany("INSERT INTO entities VALUES (?, ?)", entities)

    def add_page_ids(self, page_ids: Iterable[tuple[int, int]]) -> None:
        self._db.executemany("INSERT OR IGNORE INTO page_ids VALUES (?, ?)", page_ids)

    def forms_with_df_below_link(self) -> int:
        """How many forms occur in fewer documents than they are linked from (lp(m) > 1)."""
        return self._db.execute("SELECT count(*) FROM forms WHERE df < link").fetchone()[0]

    def forms_in_order(self) -> Iterable[str]:
        return (row[0] for row in self._db.execute("SELECT form FROM forms ORDER BY form"))

    def close(self) -> None:
        self._db.execute("COMMIT")
        self._db.close()
