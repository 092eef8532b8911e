"""The store writer's multi-row inserts: every row, in order, whatever the number of rows against
the rows a statement takes (a multiple of it, a remainder, fewer, none); the forms and candidate
blobs SQLite cuts out of one JSON array and one blob (``insert_forms``) are the rows bound one by
one: non-ASCII forms, blobs of every size, several statements, forms JSON would escape."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from elquery.indexing.surface_forms import store_writer
from elquery.indexing.surface_forms.arrow_arrays import string_buffers
from elquery.indexing.surface_forms.store_writer import ROWS_PER_INSERT, candidate_order, insert_forms, insert_rows


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


@pytest.mark.parametrize("per_insert, blob_bytes, odd", [(1 << 20, 1 << 28, ""), (7, 1 << 28, ""), (1 << 20, 50, ""),
                                                         (1 << 20, 1 << 28, 'a "quoted" form'), (5, 30, "back\\slash"),
                                                         (1 << 20, 1 << 28, "tab\tand\nline")])
def test_forms_cut_by_sqlite(per_insert: int, blob_bytes: int, odd: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_writer, "FORMS_PER_INSERT", per_insert)
    monkeypatch.setattr(store_writer, "BLOB_BYTES_PER_INSERT", blob_bytes)
    rng = np.random.default_rng(3)
    forms = [f"form {n} {'é東ß'[: n % 4]}" for n in range(300)] + ([odd] if odd else []) + ["last"]
    blobs = [rng.integers(0, 256, rng.integers(1, 90)).astype(np.uint8).tobytes() for _ in forms]
    blobs[5] = bytes(200)  # one larger than a statement's bytes
    db = store_writer.create(Path(":memory:"))
    text_offsets, text = string_buffers(pa.array(forms, pa.string()))
    insert_forms(db, text_offsets, text, b"".join(blobs), np.r_[0, np.cumsum([len(b) for b in blobs])], 41)
    assert db.execute("SELECT id, form, candidates, typeof(form), typeof(candidates) FROM forms ORDER BY id").fetchall() == [
        (n, form, blob, "text", "blob") for n, (form, blob) in enumerate(zip(forms, blobs), 41)]
    insert_forms(db, np.zeros(1, np.int32), np.zeros(0, np.uint8), b"", np.zeros(1, np.int64), 1000)
    assert db.execute("SELECT count(*) FROM forms").fetchone() == (len(forms),)
