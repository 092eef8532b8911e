"""FACC count files (methods.md §3): hand-written files, summed after normalization, mapped to
DBpedia through owl:sameAs, malformed rows and unmapped ids counted and reported."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms.facc import FaccReport, canonical_mid, facc_files, read_facc
from elquery.kb.surface_forms.store import SurfaceFormStore
from conftest import write_compressed as _write  # tests/conftest.py, on the path as pytest loads it

SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"
LINKS = {
    "Barack_Obama": "m.02mjmr",
    "Tokyo": "m.07dfk",
    "Café_Müller": "m.0cafe",
    "Straße": "m.0str",
    "Sisyphus": "m.0sis",
    "Obama_(disambiguation)": "m.0dis",
    "Old_Tokyo": "m.0old",
}


def _dumps(root: Path) -> Path:
    dumps = root / "dumps"
    dumps.mkdir()
    (dumps / "freebase_links_en.ttl").write_text(
        "".join(f"<http://dbpedia.org/resource/{t}> {SAME_AS} <http://rdf.freebase.com/ns/{m}> .\n" for t, m in LINKS.items()),
        encoding="utf-8",
    )
    (dumps / "transitive_redirects_en.ttl").write_text(
        "<http://dbpedia.org/resource/Old_Tokyo> <http://dbpedia.org/ontology/wikiPageRedirects> "
        "<http://dbpedia.org/resource/Tokyo> .\n",
        encoding="utf-8",
    )
    return dumps


def _pairs(db: Path) -> dict[tuple[str, str], int]:
    with SurfaceFormStore(db) as store:
        return {(p.form, p.entity): p.facc for p in store.pairs()}


def _build(tmp_path: Path, files: list[Path], **options) -> tuple[Path, object]:
    out = tmp_path / "sf.db"
    report = build_store(out, BuildOptions(dumps=(_dumps(tmp_path),), facc=tuple(files), kb_aliases=False, progress=False, **options))
    return out, report


def test_canonical_mid_accepts_the_three_spellings() -> None:
    assert canonical_mid("/m/0abc") == canonical_mid("m.0abc") == canonical_mid("http://rdf.freebase.com/ns/m.0abc") == "/m/0abc"
    for bad in ("Q42", "/m/", "m.0ABC", "/g/11abc", "0abc", "http://rdf.freebase.com/ns/g.11abc"):
        assert canonical_mid(bad) is None


def test_case_variants_and_id_spellings_are_summed(tmp_path: Path) -> None:
    facc = _write(tmp_path / "a.tsv", "Barack Obama\t/m/02mjmr\t10\nbarack obama\tm.02mjmr\t5\nBARACK  OBAMA\thttp://rdf.freebase.com/ns/m.02mjmr\t1\n")
    out, report = _build(tmp_path, [facc])
    assert _pairs(out) == {("barack obama", "<dbpedia:Barack_Obama>"): 16}
    assert report.facc.rows == 3 and report.facc.mapped_rows == 3


def test_the_same_row_in_two_files_counts_twice(tmp_path: Path) -> None:
    row = "Tokyo\t/m/07dfk\t7\n"
    files = [_write(tmp_path / "a.tsv", row), _write(tmp_path / "b.tsv.gz", row), _write(tmp_path / "c.tsv.bz2", row)]
    out, report = _build(tmp_path, files)
    assert _pairs(out) == {("tokyo", "<dbpedia:Tokyo>"): 21}
    assert report.facc.files == 3


def test_unmapped_ids_are_counted_reported_and_dropped(tmp_path: Path) -> None:
    facc = _write(tmp_path / "a.tsv", "Tokyo\t/m/07dfk\t7\nNowhere\t/m/0zzz\t4\nNowhere\tm.0zzz\t2\nElsewhere\t/m/0yyy\t1\n")
    out, report = _build(tmp_path, [facc])
    assert _pairs(out) == {("tokyo", "<dbpedia:Tokyo>"): 7}
    assert (report.facc.unmapped_rows, report.facc.unmapped_count) == (3, 7)
    assert report.facc.unmapped_examples == ["/m/0zzz", "/m/0yyy"]
    assert any("unmapped" in line and "/m/0zzz" in line for line in report.summary_lines())


def test_malformed_rows_are_counted_skipped_and_reported(tmp_path: Path) -> None:
    text = (
        "Tokyo\t/m/07dfk\t7\n"  # 1 ok
        "Tokyo\t/m/07dfk\n"  # 2 two fields
        "Tokyo\t/m/07dfk\tseven\n"  # 3 count not a number
        "Tokyo\t/m/07dfk\t-3\n"  # 4 negative
        "Tokyo\tQ42\t3\n"  # 5 not a Freebase id
        "Tokyo\t/m/07dfk\t2\textra\n"  # 6 four fields
        "\n"  # 7 blank: skipped, not a row
        "Tokyo\t/m/07dfk\t0\n"  # 8 zero
        "tokyo\t/m/07dfk\t1\r\n"  # 9 ok (CRLF)
    )
    facc = _write(tmp_path / "bad.tsv", text)
    out, report = _build(tmp_path, [facc])
    assert _pairs(out) == {("tokyo", "<dbpedia:Tokyo>"): 8}
    assert report.facc.rows == 8 and report.facc.malformed_rows == 6
    assert [e.split(": ", 1)[0] for e in report.facc.errors] == [f"{facc}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "expected 3 tab-separated fields, found 2" in report.facc.errors[0]
    assert "not a Freebase id: 'Q42'" in report.facc.errors[3]


def test_a_malformed_id_in_a_well_formed_block_is_reported_with_its_line(tmp_path: Path) -> None:
    facc = _write(tmp_path / "a.tsv", "Tokyo\t/m/07dfk\t7\nTokyo\t/x/07dfk\t1\n")
    _, report = _build(tmp_path, [facc])
    assert report.facc.malformed_rows == 1 and report.facc.unmapped_rows == 0
    assert report.facc.errors == [f"{facc}:2: not a Freebase id: '/x/07dfk'"]


def test_unicode_forms(tmp_path: Path) -> None:
    facc = _write(
        tmp_path / "u.tsv",
        "Café Müller\t/m/0cafe\t3\nCAFÉ MÜLLER\t/m/0cafe\t1\nSTRASSE\t/m/0str\t2\nStraße\t/m/0str\t5\n"
        "ΣΊΣΥΦΟΣ\t/m/0sis\t1\nσίσυφος\t/m/0sis\t1\n東京\t/m/07dfk\t4\nObama's\t/m/02mjmr\t2\n",
    )
    out, _ = _build(tmp_path, [facc])
    assert _pairs(out) == {
        ("café müller", "<dbpedia:Café_Müller>"): 4,
        ("strasse", "<dbpedia:Straße>"): 7,
        ("σίσυφοσ", "<dbpedia:Sisyphus>"): 2,
        ("東京", "<dbpedia:Tokyo>"): 4,
        ("obama s", "<dbpedia:Barack_Obama>"): 2,
    }
    with SurfaceFormStore(out) as store:
        assert [c.entity for c in store.lookup("Café-Müller")] == ["<dbpedia:Café_Müller>"]


def test_an_empty_file_and_empty_forms(tmp_path: Path) -> None:
    files = [_write(tmp_path / "empty.tsv", ""), _write(tmp_path / "a.tsv", "!!!\t/m/07dfk\t3\nTokyo\t/m/07dfk\t1\n")]
    out, report = _build(tmp_path, files)
    assert _pairs(out) == {("tokyo", "<dbpedia:Tokyo>"): 1}
    assert (report.facc.files, report.facc.rows, report.facc.empty_form_rows) == (2, 2, 1)


def test_ids_of_redirects_count_for_the_target_and_disambiguation_pages_are_dropped(tmp_path: Path) -> None:
    facc = _write(tmp_path / "a.tsv", "old tokyo\t/m/0old\t2\ntokyo\t/m/07dfk\t1\nobama\t/m/0dis\t9\n")
    out, report = _build(tmp_path, [facc])
    assert _pairs(out) == {("old tokyo", "<dbpedia:Tokyo>"): 2, ("tokyo", "<dbpedia:Tokyo>"): 1}
    assert report.facc.unmapped_rows == 1


def test_fast_and_line_by_line_paths_agree(tmp_path: Path) -> None:
    mids = {"/m/07dfk": 0, "/m/02mjmr": 1}
    rows = "".join(f"{form}\t{mid}\t{n}\n" for n, (form, mid) in enumerate([("Tokyo", "/m/07dfk"), ("Obama", "m.02mjmr"), ("X", "/m/0none")] * 50, 1))
    clean = _write(tmp_path / "clean.tsv", rows)
    dirty = _write(tmp_path / "dirty.tsv", rows + "bad row\n")
    results = []
    for path in (clean, dirty):
        report = FaccReport()
        parsed = list(read_facc(path, mids, report))
        results.append(([f for r in parsed for f in r.forms], np.concatenate([r.entities for r in parsed]).tolist(),
                        np.concatenate([r.counts for r in parsed]).tolist(), report.unmapped_rows, report.unmapped_count))
    assert results[0] == results[1]
    assert results[0][3] == 50


def test_facc_requires_a_freebase_mapping(tmp_path: Path) -> None:
    facc = _write(tmp_path / "a.tsv", "Tokyo\t/m/07dfk\t7\n")
    dumps = tmp_path / "only-labels"
    dumps.mkdir()
    (dumps / "labels_en.ttl").write_text(
        '<http://dbpedia.org/resource/Tokyo> <http://www.w3.org/2000/01/rdf-schema#label> "Tokyo"@en .\n', encoding="utf-8"
    )
    with pytest.raises(ElqueryError, match="no owl:sameAs links to Freebase"):
        build_store(tmp_path / "sf.db", BuildOptions(dumps=(dumps,), facc=(facc,), progress=False))


def test_facc_directories_and_missing_files(tmp_path: Path) -> None:
    directory = tmp_path / "facc"
    directory.mkdir()
    for name in ("b.tsv", "a.tsv.gz", "c.bz2", "notes.txt"):
        (directory / name).write_bytes(b"")
    assert [p.name for p in facc_files([directory])] == ["a.tsv.gz", "b.tsv", "c.bz2"]
    with pytest.raises(ElqueryError, match="no such file"):
        facc_files([tmp_path / "missing.tsv"])
    (tmp_path / "none").mkdir()
    with pytest.raises(ElqueryError, match="no FACC count files"):
        facc_files([tmp_path / "none"])


def test_a_corrupt_compressed_file_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.tsv.gz"
    broken.write_bytes(gzip.compress(b"Tokyo\t/m/07dfk\t7\n" * 1000)[:50])
    with pytest.raises(ElqueryError, match="truncated or corrupt"):
        _build(tmp_path, [broken])


def test_the_pyarrow_batches_match_the_block_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from elquery.indexing.surface_forms import facc as facc_module
    from elquery.indexing.surface_forms.facc import read_facc_blocks, read_facc_coded

    mids = {f"/m/0{i}": i for i in range(20)}
    good = ["Tokyo{}\t/m/0{}\t{}\n", "Café {}\tm.0{}\t{}\n", "  x_{} \thttp://rdf.freebase.com/ns/m.0{}\t{}\n"]
    bad = ["\n", "a\t/m/01\n", "a\t/m/01\t3\tx\n", "a\t/m/01\t0\n", "a\t/m/01\t+5\n", "a\t/m/01\t0x10\n", "a\t/m/01\t 5\n",
           "a\t/m/01\t3\r\n", "a\rb\t/m/01\t3\n", "a\tQ42\t1\n", "a\tm.ABC\t1\n", "\ufeffa\t/m/01\t2\n", "a\t/m/01\t99999999999999999999\n"]
    rng = random.Random(7)
    monkeypatch.setattr(facc_module, "BLOCK_CHARS", 64)
    for trial in range(200):
        monkeypatch.setattr(facc_module, "BATCH_BLOCKS", rng.choice([1, 2, 5]))
        lines = [rng.choice(good).format(rng.randrange(9), rng.randrange(25), rng.randrange(1, 9)) for _ in range(rng.randrange(60))]
        for _ in range(rng.choice([0, 0, 1, 3])):
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(bad))
        path = tmp_path / f"t{trial}.tsv"
        path.write_bytes("".join(lines).encode("utf-8"))
        results = []
        for read in (read_facc_blocks, read_facc_coded):
            report = FaccReport()
            parsed = list(read(path, mids, report))
            results.append(([f for r in parsed for f in r.forms], [e for r in parsed for e in r.entities.tolist()],
                            [c for r in parsed for c in r.counts.tolist()], report))
        assert results[0] == results[1]


def test_normalize_array_is_normalize() -> None:
    import pyarrow as pa

    from elquery.kb.normalize import normalize
    from elquery.indexing.surface_forms.aggregate import normalize_array

    texts = ["Barack  Obama", "Obama's", "__x__", "", "!!!", "A1-b2", "Café-Müller", "STRASSE", "Straße", "ΣΊΣΥΦΟΣ", "東京", "x\u00a0y", "\tq\x1f"]
    assert normalize_array(pa.array(texts)).to_pylist() == [normalize(t) for t in texts]


@pytest.mark.parametrize("long_chars", [100_000, 10_000_000], ids=["inside-a-block", "10MB"])
def test_an_over_long_row_is_reported_and_skipped(tmp_path: Path, long_chars: int) -> None:
    """A line longer than 64 Ki characters is one malformed row named by its line; the rows around
    it count; a BOM at the start is no part of the first form."""
    text = ("\ufeffTokyo\t/m/07dfk\t7\n" + "x" * long_chars + "\t/m/07dfk\t1\n" + "Tokyo\t/m/07dfk\t2\n"
            + "Tokyo\tQ42\t3\n")
    facc = _write(tmp_path / "long.tsv", text)
    out, report = _build(tmp_path, [facc])
    assert _pairs(out) == {("tokyo", "<dbpedia:Tokyo>"): 9}
    assert report.facc.malformed_rows == 2
    assert report.facc.errors[0] == f"{facc}:2: line longer than 65536 characters"
    assert report.facc.errors[1].startswith(f"{facc}:4: not a Freebase id")
