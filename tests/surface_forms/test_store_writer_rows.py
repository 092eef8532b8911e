"""The store writer's multi-row inserts: every row, in order, whatever the number of rows against
the rows a statement takes (a multiple of it, a remainder, fewer, none)."""

from __future__ import annotations

import sqlite3

import pytest

from elquery.indexing.surface_forms.store_writer import ROWS_PER_INSERT, insert_rows


@pytest.mark.parametrize("rows", [0, 1, ROWS_PER_INSERT - 1, ROWS_PER_INSERT, 2 * ROWS_PER_INSERT + 345])
def test_every_row_in_order(rows: int) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, text TEXT NOT NULL, data BLOB NOT NULL)")
    expected = [(n, f"form {n} é", bytes([n % 256, 7]) * (n % 3)) for n in range(rows)]
    insert_rows(db, "t", [[r[0] for r in expected], [r[1] for r in expected], [r[2] for r in expected]])
    assert db.execute("SELECT id, text, data, typeof(text), typeof(data) FROM t ORDER BY rowid").fetchall() == [
        (*row, "text", "blob") for row in expected]
