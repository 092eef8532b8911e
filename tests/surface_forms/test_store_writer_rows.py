"""The store writer's multi-row inserts: every row, in order, whatever the number of rows against
the rows a statement takes (a multiple of it, a remainder, fewer, none)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from elquery.indexing.surface_forms.store_writer import ROWS_PER_INSERT, candidate_order, insert_rows


@pytest.mark.parametrize("rows", [0, 1, ROWS_PER_INSERT - 1, ROWS_PER_INSERT, 2 * ROWS_PER_INSERT + 345])
def test_every_row_in_order(rows: int) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, text TEXT NOT NULL, data BLOB NOT NULL)")
    expected = [(n, f"form {n} é", bytes([n % 256, 7]) * (n % 3)) for n in range(rows)]
    insert_rows(db, "t", [[r[0] for r in expected], [r[1] for r in expected], [r[2] for r in expected]])
    assert db.execute("SELECT id, text, data, typeof(text), typeof(data) FROM t ORDER BY rowid").fetchall() == [
        (*row, "text", "blob") for row in expected]


@pytest.mark.parametrize("form_span, largest_rank, largest_count, packed", [
    (3_000, 1_000, 5, True), (3_000, 2**29, 2**40, True), (2**31, 2**29, 2**40, False), (40, 1_000, 5, True)])
def test_candidate_order_is_lexsorts(form_span: int, largest_rank: int, largest_count: int, packed: bool) -> None:
    rng = np.random.default_rng(7)
    pairs = np.unique(np.sort(rng.integers(0, form_span, 10_000)) << 32 | rng.integers(0, largest_rank, 10_000))
    forms, ranks = pairs >> 32, pairs & 0xFFFFFFFF  # each (form, rank) once, forms ascending
    counts = np.minimum(rng.zipf(1.3, len(forms)), largest_count)
    counts[:3] = largest_count
    bits = int(forms.max()).bit_length() + (len(np.unique(counts)) - 1).bit_length() + int(ranks.max()).bit_length()
    assert (bits <= 63) == packed
    assert candidate_order(forms, counts, ranks).tolist() == np.lexsort((ranks, -counts, forms)).tolist()
    assert candidate_order(forms[:0], counts[:0], ranks[:0]).tolist() == []
