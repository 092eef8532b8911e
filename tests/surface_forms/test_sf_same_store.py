"""The store's rows do not depend on how the aggregation runs: a build of the real DBpedia sample
(KB aliases, anchors) with FACC counts of every shape (three spellings of an id, case, punctuation
and full-width variants, non-ASCII forms, forms that normalize to nothing, unmapped and malformed
ids, malformed rows, pairs repeated across files, a file of canonical ids only) has, in every table, the very rows of the same
build through the previous aggregation (python_aggregate_reference: Python strings per row, the
block reader), in one partition and in many, with one worker and with two."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms import build as build_module
from elquery.indexing.surface_forms import facc
from elquery.indexing.surface_forms.facc import read_facc_blocks
from elquery.indexing.surface_forms.memory import partition_input_bytes
from elquery.indexing.provenance import META_KEY

import python_aggregate_reference as reference

FORMS = ["Rome", "ROME", "rome!", "  Rome  ", "São Paulo", "SÃO PAULO", "ＮＹＣ", "nyc", "Café", "Cafe\u0301",
         "Obama's", "obama s", "!!!", "—", "New-York City.", "new york city", "A", "x_y", "東京", "l'été"]


def _facc(folder: Path, mids: list[str]) -> tuple[Path, ...]:
    """Two count files of the FACC layout over ``mids`` (as the sample links them)."""
    folder.mkdir()
    spellings = ("/m/{}", "m.{}", "http://rdf.freebase.com/ns/m.{}")
    rows = []
    for i, mid in enumerate(mids):
        for j in range(i % 7 + 1):
            rows.append(f"{FORMS[(i * 3 + j) % len(FORMS)]} {j % 3 or ''}".rstrip() + f"\t{spellings[(i + j) % 3].format(mid)}\t{(i * j) % 5 + 1}")
        rows.append(f"{FORMS[i % len(FORMS)]}\t/m/{mid}\t{i + 1}")
    rows += ["unknown\t/m/0zzzzz\t5", "bad count\t/m/0zzzzz\tfive", "two fields\t/m/0zzzzz", "bad id\tQ42\t3"]
    half = len(rows) // 2  # the last four rows (one unmapped id, three malformed rows) in both files
    (folder / "a.tsv").write_text("\n".join(rows[:half] + rows[-4:]) + "\n", encoding="utf-8")
    (folder / "b.tsv").write_text("\n".join(rows[half:] + rows[:40]) + "\n", encoding="utf-8")
    canonical = [row for row in rows if "\t/m/" in row and not row.startswith(("bad", "two"))]  # read from the column's buffers
    unmapped = [f"{FORMS[i]}\t/m/0unknown{i % 7}\t{i + 1}" for i in range(12)]
    (folder / "c.tsv").write_text("\n".join(canonical[:30] + unmapped + canonical[30:]) + "\n", encoding="utf-8")
    (folder / "d.tsv").write_text("\n".join(rows[:-3]) + "\n", encoding="utf-8")  # well-formed, three spellings
    return (folder,)


def _mids(sample: Path) -> list[str]:
    import bz2

    with bz2.open(sample / "freebase_links_en.ttl.bz2", "rt", encoding="utf-8") as handle:
        return [line.split("/ns/m.", 1)[1].split(">", 1)[0] for line in handle if "/ns/m." in line]


def _rows(db: Path) -> dict[str, list[tuple]]:
    with sqlite3.connect(db) as connection:
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = {table: sorted(connection.execute(f"SELECT * FROM {table}"), key=repr) for table in tables}
    connection.close()
    rows["meta"] = [row for row in rows["meta"] if row[0] != META_KEY]  # provenance: file times
    return rows


@pytest.fixture(scope="module")
def options(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> BuildOptions:
    facc = _facc(tmp_path_factory.mktemp("facc") / "counts", _mids(dbpedia_sample))
    return BuildOptions(dumps=(dbpedia_sample,), facc=facc, anchors=True, min_count=2, progress=False)


@pytest.mark.parametrize("memory_mb", [1, 512])
def test_every_table_has_the_rows_of_the_previous_aggregation(options: BuildOptions, memory_mb: int, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    built, canonical_batches = {}, []
    read_canonical = facc._canonical_batch
    monkeypatch.setattr(facc, "_canonical_batch", lambda *args: canonical_batches.append(read_canonical(*args)) or canonical_batches[-1])
    for workers in (1, 2):
        out = tmp_path / f"new-{workers}.db"
        report = build_store(out, BuildOptions(**{**options.__dict__, "workers": workers, "memory_mb": memory_mb}))
        built[workers] = (report.to_json(), _rows(out))
    assert [batch is not None for batch in canonical_batches] == [True, False]  # c.tsv, d.tsv (a, b: malformed rows, read by block)
    with monkeypatch.context() as patch:
        patch.setattr(build_module, "PairChunk", reference.PairChunk)
        patch.setattr(build_module, "merge_partition", reference.merge_partition)
        patch.setattr(build_module, "read_facc", read_facc_blocks)
        report = build_store(tmp_path / "old.db", BuildOptions(**{**options.__dict__, "workers": 1, "memory_mb": memory_mb}))
    expected = (report.to_json(), _rows(tmp_path / "old.db"))
    partitions = build_module._partitions(
        [*build_module.facc_files(list(options.facc)), *build_module.dump_files(options.dumps)], memory_mb)
    assert (partitions > 3) == (memory_mb == 1) and memory_mb * 2**20 // 12 == partition_input_bytes(memory_mb)
    assert report.facc.malformed_rows == 6 and report.facc.unmapped_rows == 2 + 12 + 1 + 1 and report.facc.empty_form_rows > 0
    assert report.dumps.anchor_links > 0 and report.dumps.kb_aliases > 0 and report.pairs > 100
    assert built[1] == expected
    assert built[2] == expected
