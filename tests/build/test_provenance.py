"""Provenance records (elquery.indexing.provenance): checksums, identity, reuse of recorded
checksums by size and mtime, storage in folders and SQLite files, bad records."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

import elquery.indexing.provenance as provenance
from elquery.base import ElqueryError
from elquery.indexing.provenance import BuildPlan, Provenance, read_provenance, write_provenance


@pytest.fixture(autouse=True)
def fresh_checksums(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provenance, "_checksums", {})


def _file(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


def test_a_record_holds_the_checksums_and_its_id_digests_the_identity(tmp_path: Path) -> None:
    a = _file(tmp_path / "a.nt", b"<a> <b> <c> .\n" * 1000)
    b = _file(tmp_path / "b.nt", b"")
    record = BuildPlan("entity index", (a, b), {"n": 3, "skip": ("x", "y")}).record({"entities": 2})
    assert [(f.name, f.size, f.sha256) for f in record.inputs] == [
        ("a.nt", 14000, hashlib.sha256(a.read_bytes()).hexdigest()),
        ("b.nt", 0, hashlib.sha256(b"").hexdigest())]
    identity = {"kind": "entity index", "elquery_version": provenance.elquery_version(),
                "options": {"n": 3, "skip": ["x", "y"]},
                "inputs": [["a.nt", 14000, hashlib.sha256(a.read_bytes()).hexdigest()],
                           ["b.nt", 0, hashlib.sha256(b"").hexdigest()]]}
    assert record.identity() == identity
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    assert record.id == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert Provenance.from_json(record.to_json(), "x") == record


def test_moved_inputs_keep_the_identity_changed_content_does_not(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = BuildPlan("k", (_file(tmp_path / "one" / "a.nt", b"x\n"),), {}).record({})
    second = BuildPlan("k", (_file(tmp_path / "two" / "a.nt", b"x\n"),), {}).record({})
    assert first.id == second.id and first.inputs[0].path != second.inputs[0].path
    assert BuildPlan("k", (tmp_path / "two" / "a.nt",), {}).difference(first) is None
    _file(tmp_path / "two" / "a.nt", b"y\n")
    assert BuildPlan("k", (tmp_path / "two" / "a.nt",), {}).difference(first) == "inputs changed: a.nt"
    assert BuildPlan("k", (tmp_path / "one" / "a.nt",), {"n": 1}).difference(first) == "options changed: n"
    assert BuildPlan("k", (tmp_path / "one" / "a.nt",), {}).difference(None) == "no provenance record"


def test_a_recorded_checksum_is_reused_when_size_and_mtime_match(tmp_path: Path) -> None:
    path = _file(tmp_path / "dump.nt", b"content\n")
    record = BuildPlan("k", (path,), {}).record({})
    stale = Provenance.from_json({**record.to_json(), "inputs": [{**record.to_json()["inputs"][0], "sha256": "f" * 64}]}, "x")
    provenance._checksums.clear()
    assert provenance.fingerprints([path], stale)[0].sha256 == "f" * 64  # not read again
    provenance._checksums.clear()
    os.utime(path, ns=(0, 1))  # another mtime: read again
    assert provenance.fingerprints([path], stale)[0].sha256 == hashlib.sha256(b"content\n").hexdigest()


def test_stored_in_a_folder_and_in_a_store(tmp_path: Path) -> None:
    record = BuildPlan("k", (_file(tmp_path / "in.nt", b"x"),), {"a": 1}).record({"n": 1})
    folder = tmp_path / "artefact"
    folder.mkdir()
    assert read_provenance(folder) is None
    write_provenance(folder, record)
    assert read_provenance(folder) == record
    assert json.loads((folder / "provenance.json").read_text())["id"] == record.id
    store = tmp_path / "store.db"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.close()
    assert read_provenance(store) is None
    write_provenance(store, record)
    write_provenance(store, record)  # replaced, not added
    assert read_provenance(store) == record
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM meta").fetchone() == (1,)
    db.close()


def test_bad_records(tmp_path: Path) -> None:
    with pytest.raises(ElqueryError, match="no such artefact"):
        read_provenance(tmp_path / "missing")
    _file(tmp_path / "text.db", b"not sqlite at all, just text" * 10)
    with pytest.raises(ElqueryError, match="not an elquery artefact"):
        read_provenance(tmp_path / "text.db")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "provenance.json").write_text('{"format": "elquery-provenance/1", "kind": "k"}')
    with pytest.raises(ElqueryError, match="malformed provenance record"):
        read_provenance(folder)
    (folder / "provenance.json").write_text("[1, 2]")
    with pytest.raises(ElqueryError, match="not an elquery provenance record"):
        read_provenance(folder)
