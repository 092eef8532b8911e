"""The store's format 2 (issue 30: fewer bytes a pair): candidates as entity numbers and counts of
the fewest bytes, the forms of each entity as form ids; a store of format 1 is refused in one line
that says to rebuild it, and a build replaces it."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.indexing.provenance import read_provenance
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms.build import store_plan
from elquery.indexing.surface_forms.store_writer import encode_candidates
from elquery.kb.surface_forms.candidates import decode
from elquery.kb.surface_forms.store import FormEntity, SurfaceFormStore

SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"


def test_candidates_round_trip_at_every_count_width() -> None:
    # form 0: FACC counts of 2 bytes, no anchors; form 1: nothing counted (a KB alias);
    # form 2: counts of 8 and 4 bytes; form 3: 1 and 2 bytes; entity numbers up to 2^29 - 1
    forms = np.array([0, 0, 0, 1, 2, 2, 3])
    entities = np.array([5, 7, 2**29 - 1, 3, 9, 10, 4])
    kb = np.array([1, 0, 1, 1, 0, 1, 0])
    facc = np.array([300, 2, 0, 0, 5, 2**33, 255])
    anchors = np.array([0, 0, 0, 0, 1, 70_000, 256])
    blobs, offsets = encode_candidates(forms, entities, kb, facc, anchors)
    assert [b - a for a, b in zip(offsets, offsets[1:])] == [1 + 3 * (4 + 2), 1 + 4, 1 + 2 * (4 + 8 + 4), 1 + 4 + 1 + 2]
    decoded = [decode(blobs[a:b]) for a, b in zip(offsets, offsets[1:])]
    for form, candidates in enumerate(decoded):
        mine = forms == form
        assert candidates.entities == entities[mine].tolist()
        assert candidates.sources == ((kb > 0) | (facc > 0) << 1 | (anchors > 0) << 2)[mine].tolist()
        assert candidates.facc == facc[mine].tolist()
        assert candidates.anchors == anchors[mine].tolist()
    with pytest.raises(ValueError, match="below 2\\^29"):
        encode_candidates(np.array([0]), np.array([2**29]), np.array([0]), np.array([1]), np.array([0]))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "freebase_links_en.ttl").write_text(
        "".join(f"<http://dbpedia.org/resource/{title}> {SAME_AS} <http://rdf.freebase.com/ns/m.0{n}> .\n"
                for n, title in enumerate(["Rome", "Rome,_Georgia", "A.S._Roma"])), encoding="utf-8")
    facc = tmp_path / "facc.tsv"
    facc.write_text("Rome\t/m/00\t70000\nrome\t/m/01\t3\nROMA\t/m/02\t9\nroma\t/m/00\t1\n", encoding="utf-8")
    out = tmp_path / "sf.db"
    build_store(out, BuildOptions(dumps=(dumps,), facc=(facc,), kb_aliases=False, workers=1, progress=False))
    return out


def test_lookups_aliases_and_pairs(store: Path) -> None:
    with SurfaceFormStore(store) as sf:
        assert sf.lookup("Rome") == [FormEntity("<dbpedia:Rome>", 70000, 70000 / 70003, ("facc",)),
                                     FormEntity("<dbpedia:Rome,_Georgia>", 3, 3 / 70003, ("facc",))]
        assert sf.lookup("roma") == [FormEntity("<dbpedia:A.S._Roma>", 9, 0.9, ("facc",)),
                                     FormEntity("<dbpedia:Rome>", 1, 0.1, ("facc",))]
        assert sf.commonness("ROMA", "<dbpedia:Rome>") == 0.1
        assert sf.commonness("roma", "<dbpedia:Rome,_Georgia>") == 0.0
        assert [(a.form, a.count) for a in sf.aliases("<dbpedia:Rome>")] == [("rome", 70000), ("roma", 1)]
        assert sf.aliases("<dbpedia:Nowhere>") == []
        assert sorted((p.form, p.entity, p.facc, p.anchors, p.kb) for p in sf.pairs()) == [
            ("roma", "<dbpedia:A.S._Roma>", 9, 0, False), ("roma", "<dbpedia:Rome>", 1, 0, False),
            ("rome", "<dbpedia:Rome,_Georgia>", 3, 0, False), ("rome", "<dbpedia:Rome>", 70000, 0, False)]


def _make_old(store: Path) -> None:
    with sqlite3.connect(store) as db:
        db.execute("UPDATE meta SET value = 'elquery-surface-forms/1' WHERE key = 'format'")
    db.close()


def test_a_store_of_format_1_is_refused_in_one_line(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _make_old(store)
    with pytest.raises(ElqueryError, match=r"format elquery-surface-forms/1 is not elquery-surface-forms/2; rebuild it"):
        SurfaceFormStore(store)
    assert elquery(["surface-forms", "lookup", str(store), "rome"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rebuild it" in err and "Traceback" not in err


def test_a_build_replaces_a_store_of_format_1(store: Path) -> None:
    record = read_provenance(store)
    assert record is not None and record.options["format"] == "elquery-surface-forms/2"
    # a store of format 1 carried no format among its options: `elquery build` rebuilds it
    plan = store_plan(BuildOptions(dumps=(store.parent / "dumps",), facc=(store.parent / "facc.tsv",), kb_aliases=False))
    old_options = {k: v for k, v in record.options.items() if k != "format"}
    assert plan.difference(record) is None
    assert plan.difference(replace(record, options=old_options)) == "options changed: format"
    _make_old(store)
    build_store(store, BuildOptions(dumps=(store.parent / "dumps",), facc=(store.parent / "facc.tsv",),
                                    kb_aliases=False, workers=1, progress=False), overwrite=True)
    with SurfaceFormStore(store) as sf:
        assert [c.entity for c in sf.lookup("rome")] == ["<dbpedia:Rome>", "<dbpedia:Rome,_Georgia>"]


def test_entity_ranges_hold_at_most_the_pairs_allowed() -> None:
    from elquery.indexing.surface_forms.store_writer import ENTITY_BUCKET_BITS, entity_ranges

    size = 1 << ENTITY_BUCKET_BITS
    # buckets of 3, 4, 0, 5, 9 (more than allowed: alone), 1 and 1 pairs, at most 7 a range
    assert entity_ranges(np.array([3, 4, 0, 5, 9, 1, 1]), 7) == [
        (0, 3 * size), (3 * size, 4 * size), (4 * size, 5 * size), (5 * size, 7 * size)]
    assert entity_ranges(np.array([2, 2]), 100) == [(0, 2 * size)]
    assert entity_ranges(np.zeros(0, np.int64), 7) == []


def test_entity_forms_do_not_depend_on_the_entity_buckets(store: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from elquery.indexing.surface_forms import build, store_writer

    monkeypatch.setattr(store_writer, "ENTITY_BUCKET_BITS", 0)  # a bucket per entity number
    monkeypatch.setattr(build, "entity_form_pairs", lambda memory_mb: 1)  # and a run of entities per bucket
    again = tmp_path / "again.db"
    build_store(again, BuildOptions(dumps=(store.parent / "dumps",), facc=(store.parent / "facc.tsv",),
                                    kb_aliases=False, workers=1, progress=False))
    tables = []
    for db in (store, again):
        with sqlite3.connect(db) as connection:
            tables.append([connection.execute(f"SELECT * FROM {t} ORDER BY id").fetchall()
                           for t in ("forms", "entities", "entity_forms")])
        connection.close()
    assert tables[0] == tables[1]
    forms = dict(tables[0][0][i][:2] for i in range(len(tables[0][0])))
    names = dict(tables[0][1])
    assert {names[e]: sorted(forms[f] for f in np.frombuffer(blob, "<u4").tolist()) for e, blob in tables[0][2]} == {
        "<dbpedia:Rome>": ["roma", "rome"], "<dbpedia:Rome,_Georgia>": ["rome"], "<dbpedia:A.S._Roma>": ["roma"]}
    assert not list(tmp_path.glob("**/*.pairs")) and not list(tmp_path.glob("**/entity-forms-*"))  # temporary files gone


def test_spans_above_a_commonness_are_those_detection_keeps(store: Path, tmp_path: Path) -> None:
    dumps = store.parent / "dumps"
    (dumps / "labels_en.ttl").write_text(  # "roma" also a KB alias of Rome, Georgia: count 0, kept at any threshold
        '<http://dbpedia.org/resource/Rome,_Georgia> <http://www.w3.org/2000/01/rdf-schema#label> "Roma"@en .\n',
        encoding="utf-8")
    with_aliases = tmp_path / "aliases.db"
    build_store(with_aliases, BuildOptions(dumps=(dumps,), facc=(store.parent / "facc.tsv",), workers=1, progress=False))
    tokens = ["rome", "roma", "rome"]
    with SurfaceFormStore(with_aliases) as sf:
        every = sf.lookup_spans(tokens)
        assert FormEntity("<dbpedia:Rome,_Georgia>", 0, 0.0, ("kb",)) in every[(1, 2)]
        for threshold in (0.0, 0.05, 0.1, 0.5, 0.95, 1.0):
            kept = {span: [c for c in found if c.commonness >= threshold or "kb" in c.sources] for span, found in every.items()}
            assert sf.lookup_spans(tokens, min_commonness=threshold) == {s: f for s, f in kept.items() if f}
