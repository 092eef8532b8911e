"""The store's span lookup as the LTR features read it (issue 29.6): each span's candidate total
from the same read of its form's record (``match_spans``), and the entity ids of a lookup read in
one statement, only those asked for, within a bounded cache."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms.store_writer import encode_candidates
from elquery.kb.surface_forms.candidates import counted, decode, kept
from elquery.kb.surface_forms import store as store_module
from elquery.kb.surface_forms.store import FormEntity, SurfaceFormStore

SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
R = "http://dbpedia.org/resource/"


def _build(tmp_path: Path, titles: list[str], facc_lines: list[str], labels: str = "") -> Path:
    """A store of FACC rows over entities with Freebase ids m.0<n> (n: the title's position), and
    their titles as KB aliases."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "freebase_links_en.ttl").write_text(
        "".join(f"<{R}{title}> {SAME_AS} <http://rdf.freebase.com/ns/m.0{n}> .\n" for n, title in enumerate(titles)),
        encoding="utf-8")
    (dumps / "labels_en.ttl").write_text(labels, encoding="utf-8")
    facc = tmp_path / "facc.tsv"
    facc.write_text("".join(facc_lines), encoding="utf-8")
    out = tmp_path / "sf.db"
    build_store(out, BuildOptions(dumps=(dumps,), facc=(facc,), workers=1, progress=False))
    return out


@pytest.fixture
def rome(tmp_path: Path) -> Path:
    # "rome": Rome (FACC 70,000, and its title), Rome, Georgia (FACC 3); "roma": A.S. Roma (FACC 9),
    # Rome (FACC 1) and Rome, Georgia (a label "Roma": a KB alias, count 0)
    return _build(tmp_path, ["Rome", "Rome,_Georgia", "A.S._Roma"],
                  ["Rome\t/m/00\t70000\n", "rome\t/m/01\t3\n", "ROMA\t/m/02\t9\n", "roma\t/m/00\t1\n"],
                  f'<{R}Rome,_Georgia> {LABEL} "Roma"@en .\n')


def test_match_spans_gives_the_lookup_and_each_forms_candidate_total(rome: Path) -> None:
    tokens = ["rome", "roma", "rome"]
    with SurfaceFormStore(rome) as sf:
        for threshold in (0.0, 0.5, 0.95, 1.0):
            found = sf.match_spans(tokens, min_commonness=threshold)
            assert found.candidates == sf.lookup_spans(tokens, min_commonness=threshold)
            # every candidate of the form counts, kept or not: rome 2, roma 3; at 1.0 "rome" keeps
            # none (Rome 70,000 / 70,003 and no KB alias) and is left out
            expected = {(1, 2): 3} if threshold == 1.0 else {(0, 1): 2, (1, 2): 3, (2, 3): 2}
            assert found.totals == expected, threshold
        kept = sf.match_spans(tokens, min_commonness=0.5).candidates
        assert kept[(1, 2)] == [FormEntity("<dbpedia:A.S._Roma>", 9, 0.9, ("facc",)),
                                FormEntity("<dbpedia:Rome,_Georgia>", 0, 0.0, ("kb",))]
        assert sf.match_spans(["paris"]).candidates == {} and sf.match_spans(["paris"]).totals == {}


def test_a_lookup_reads_its_entity_ids_in_one_statement(tmp_path: Path) -> None:
    # 200 entities, each with a form of its own; the form "x" names three of them, numbered far apart
    titles = [f"E{n:03d}" for n in range(200)]
    lines = [f"e{n:03d}\t/m/0{n}\t1\n" for n in range(200)] + [f"x\t/m/0{n}\t{n + 1}\n" for n in (3, 100, 199)]
    store = _build(tmp_path, titles, lines)
    with SurfaceFormStore(store) as sf:
        statements: list[str] = []
        sf._db.connection().set_trace_callback(statements.append)
        found = sf.lookup_spans(["x", "e007"])
        assert [c.entity for c in found[(0, 1)]] == ["<dbpedia:E199>", "<dbpedia:E100>", "<dbpedia:E003>"]
        assert [c.entity for c in found[(1, 2)]] == ["<dbpedia:E007>"]
        reads = [s for s in statements if "FROM entities" in s]
        assert len(reads) == 1, reads
        statements.clear()
        assert sf.lookup_spans(["x"]) == {(0, 1): found[(0, 1)]}
        assert not [s for s in statements if "FROM entities" in s]  # kept from the first read


def test_the_id_cache_starts_again_past_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    titles = [f"E{n:03d}" for n in range(20)]
    store = _build(tmp_path, titles, [f"e{n:03d}\t/m/0{n}\t1\n" for n in range(20)])
    monkeypatch.setattr(store_module, "NAMES_KEPT", 3)
    with SurfaceFormStore(store) as sf:
        for _ in range(2):
            for first in range(0, 20, 2):
                tokens = [f"e{first:03d}", f"e{first + 1:03d}"]
                found = sf.lookup_spans(tokens)
                assert {span: [c.entity for c in found[span]] for span in found} == {
                    (0, 1): [f"<dbpedia:E{first:03d}>"], (1, 2): [f"<dbpedia:E{first + 1:03d}>"]}
                assert sum(1 for name in sf._names._names if name) <= 3


def test_kept_candidates_are_those_above_the_threshold_then_the_kb_aliases() -> None:
    rng = random.Random(7)
    for form in range(300):
        size = rng.choice([1, 2, 3, 10, 200, 1000])
        scale = rng.choice([0, 1, 200, 70_000, 2**33])  # count widths 0 to 8 bytes
        facc = sorted((rng.randrange(scale + 1) if rng.random() < 0.7 else 0 for _ in range(size)), reverse=True)
        anchors = [rng.randrange(3) for _ in range(size)] if rng.random() < 0.5 else [0] * size
        kb = [int(rng.random() < 0.2) for _ in range(size)]
        entities = rng.sample(range(2**29), size)
        if not any(facc):  # the candidates by anchor count then, as the build orders them
            order = sorted(range(size), key=lambda at: -anchors[at])
            anchors, kb, entities = [anchors[at] for at in order], [kb[at] for at in order], [entities[at] for at in order]
        blobs, offsets = encode_candidates(np.zeros(size, dtype=np.int64), np.array(entities), np.array(kb),
                                           np.array(facc), np.array(anchors))
        blob = bytes(blobs[offsets[0]:offsets[1]])
        decoded = decode(blob)
        counts = decoded.facc if any(decoded.facc) else decoded.anchors
        assert counted(blob) == (tuple(e << 3 | s for e, s in zip(decoded.entities, decoded.sources)), tuple(counts))
        total = sum(counts)
        for threshold in (0.0, 1e-9, 0.01, 0.1, 0.5, 1.0):
            above = [at for at in range(size) if threshold == 0.0 or (counts[at] and counts[at] / total >= threshold)]
            assert above == list(range(len(above)))  # a prefix: candidates come by commonness
            expected = above + [at for at in range(len(above), size) if decoded.sources[at] & 1]
            got = kept(blob, threshold)
            assert got.words == tuple(decoded.entities[at] << 3 | decoded.sources[at] for at in expected), (form, threshold)
            assert got.counts == tuple(counts[at] for at in expected)
            assert (got.total, got.size) == (total, size)
