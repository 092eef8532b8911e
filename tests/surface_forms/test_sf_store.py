"""The store and its API (methods.md §3): KB aliases, anchors and FACC combined, commonness,
span lookups, aliases, min count, determinism and the temporary-file discipline."""

from __future__ import annotations

import bz2
import sqlite3
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.indexing.ntriples import ParseReport
from elquery.indexing.surface_forms import BuildOptions, build_store
from elquery.indexing.surface_forms import memory as memory_module
from elquery.kb.normalize import query_tokens
from elquery.kb.surface_forms.store import FormEntity, SurfaceFormStore

from conftest import freebase_links  # tests/conftest.py, on the path as pytest loads it

R = "http://dbpedia.org/resource/"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
NAME = "<http://xmlns.com/foaf/0.1/name>"
REDIRECT = "<http://dbpedia.org/ontology/wikiPageRedirects>"
ANCHOR = "<http://dbpedia.org/ontology/wikiPageWikiLinkText>"
SAME_AS = "<http://www.w3.org/2002/07/owl#sameAs>"


def _lit(subject: str, predicate: str, text: str) -> str:
    return f'<{R}{subject}> {predicate} "{text}"@en .\n'


def _iri(subject: str, predicate: str, obj: str) -> str:
    return f"<{R}{subject}> {predicate} <{obj}> .\n"


@pytest.fixture()
def dumps(tmp_path: Path) -> Path:
    """A small dump directory: one file per dataset, plus one unknown file holding everything."""
    root = tmp_path / "dumps"
    root.mkdir()
    (root / "labels_en.ttl").write_text(
        _lit("New_York_City", LABEL, "New York City")
        + _lit("New_York", LABEL, "New York")
        + _lit("NYC", LABEL, "NYC")  # a redirect page with a label
        + _lit("Manhattan", LABEL, "Manhattan")
        + _lit("New_York_(disambiguation)", LABEL, "New York (disambiguation)")
        + _lit("Pizza", LABEL, "Pizza"),
        encoding="utf-8",
    )
    (root / "transitive_redirects_en.ttl").write_text(
        _iri("NYC", REDIRECT, R + "New_York_City")
        + _iri("Big_Apple%27s", REDIRECT, R + "New_York_City")  # no label: its title is the alias
        + _iri("NY_(disambiguation)", REDIRECT, R + "New_York_(disambiguation)"),
        encoding="utf-8",
    )
    (root / "persondata_en.ttl").write_text(_lit("Manhattan", NAME, "Manhatta"), encoding="utf-8")
    (root / "anchor_text_en.ttl").write_text(
        _lit("New_York_City", ANCHOR, "New York") * 3
        + _lit("New_York", ANCHOR, "new york")
        + _lit("NYC", ANCHOR, "the city")  # redirect: counts for New_York_City
        + _lit("Pizza", ANCHOR, "pizza") * 2
        + _lit("New_York_(disambiguation)", ANCHOR, "New York"),  # disambiguation page: dropped
        encoding="utf-8",
    )
    (root / "freebase_links_en.ttl.bz2").write_bytes(
        bz2.compress(
            (_iri("New_York_City", SAME_AS, "http://rdf.freebase.com/ns/m.02_286")
             + _iri("New_York", SAME_AS, "http://rdf.freebase.com/ns/m.059rby")
             + _iri("Manhattan", SAME_AS, "http://rdf.freebase.com/ns/m.0cc56")
             + _iri("Manhattan", SAME_AS, "http://www.wikidata.org/entity/Q11299")).encode()
        )
    )
    (root / "page_links_en.ttl").write_text("this file is skipped by name and never parsed\n", encoding="utf-8")
    return root


@pytest.fixture()
def facc(tmp_path: Path) -> Path:
    path = tmp_path / "facc.tsv"
    path.write_text(
        "New York\t/m/02_286\t90\nnew york\t/m/059rby\t10\nManhattan\t/m/0cc56\t40\nnyc\t/m/02_286\t5\n", encoding="utf-8"
    )
    return path


def _options(dumps: Path, **kwargs) -> BuildOptions:
    return BuildOptions(dumps=(dumps,), progress=False, **kwargs)


def test_kb_aliases_from_labels_names_and_redirects(tmp_path: Path, dumps: Path) -> None:
    out = tmp_path / "kb.db"
    report = build_store(out, _options(dumps))
    with SurfaceFormStore(out) as store:
        assert store.lookup("NYC") == [FormEntity("<dbpedia:New_York_City>", 0, 0.0, ("kb",))]
        assert [c.entity for c in store.lookup("big apple s")] == ["<dbpedia:New_York_City>"]
        assert [c.entity for c in store.lookup("Manhatta")] == ["<dbpedia:Manhattan>"]
        assert store.lookup("new york disambiguation") == []
        assert [a.form for a in store.aliases("<dbpedia:New_York_City>")] == ["big apple s", "new york city", "nyc"]
        for form in ("New_York_City", "New York City", "http://dbpedia.org/resource/New_York_City",
                     "<http://dbpedia.org/resource/New_York_City>"):
            assert store.aliases(form) == store.aliases("<dbpedia:New_York_City>"), form
        assert store.meta["sources"] == ["kb"]
    assert (report.dumps.kb_aliases, report.dumps.redirect_title_aliases, report.dumps.redirects) == (6, 1, 3)
    assert report.dumps.skipped_disambiguation == 1


def test_anchor_counts_and_commonness(tmp_path: Path, dumps: Path) -> None:
    out = tmp_path / "anchors.db"
    build_store(out, _options(dumps, anchors=True, kb_aliases=False))
    with SurfaceFormStore(out) as store:
        assert store.lookup("New York") == [
            FormEntity("<dbpedia:New_York_City>", 3, 0.75, ("anchors",)),
            FormEntity("<dbpedia:New_York>", 1, 0.25, ("anchors",)),
        ]
        assert store.lookup("the city") == [FormEntity("<dbpedia:New_York_City>", 1, 1.0, ("anchors",))]
        assert store.commonness("NEW YORK", "<dbpedia:New_York>") == 0.25
        assert store.commonness("new york", "<dbpedia:Pizza>") == 0.0
        assert store.commonness("nothing", "<dbpedia:Pizza>") == 0.0


def test_facc_counts_take_precedence_over_anchors(tmp_path: Path, dumps: Path, facc: Path) -> None:
    out = tmp_path / "all.db"
    report = build_store(out, _options(dumps, anchors=True, facc=(facc,)))
    with SurfaceFormStore(out) as store:
        # "new york" has FACC counts: commonness from FACC (90, 10); anchors only add a source.
        assert store.lookup("new york") == [
            FormEntity("<dbpedia:New_York_City>", 90, 0.9, ("facc", "anchors")),
            FormEntity("<dbpedia:New_York>", 10, 0.1, ("kb", "facc", "anchors")),
        ]
        # "pizza" has anchor counts only; "manhattan" FACC only; "new york city" is KB only.
        assert store.lookup("pizza") == [FormEntity("<dbpedia:Pizza>", 2, 1.0, ("kb", "anchors"))]
        assert store.lookup("manhattan") == [FormEntity("<dbpedia:Manhattan>", 40, 1.0, ("kb", "facc"))]
        assert store.lookup("new york city") == [FormEntity("<dbpedia:New_York_City>", 0, 0.0, ("kb",))]
        aliases = {a.form: (a.count, a.commonness, a.sources) for a in store.aliases("<dbpedia:New_York_City>")}
        assert aliases["new york"] == (90, 0.9, ("facc", "anchors"))
        assert aliases["nyc"] == (5, 1.0, ("kb", "facc"))
        assert store.aliases("<dbpedia:Nobody>") == []
    assert report.sources == ["kb", "facc", "anchors"]
    assert report.facc.mapped_rows == 4


def test_lookup_spans_covers_every_span_in_one_call(tmp_path: Path, dumps: Path, facc: Path) -> None:
    out = tmp_path / "all.db"
    build_store(out, _options(dumps, anchors=True, facc=(facc,)))
    with SurfaceFormStore(out) as store:
        tokens = query_tokens("New York pizza, Manhattan!")
        assert tokens == ["new", "york", "pizza", "manhattan"]
        spans = store.lookup_spans(tokens)
        assert list(spans) == [(0, 2), (2, 3), (3, 4)]
        assert spans[(0, 2)] == store.lookup("new york")
        assert spans[(3, 4)] == store.lookup("manhattan")
        assert list(store.lookup_spans(tokens, max_length=1)) == [(2, 3), (3, 4)]
        repeated = store.lookup_spans(["new", "york", "new", "york"])
        assert list(repeated) == [(0, 2), (2, 4)]
        assert repeated[(0, 2)] == repeated[(2, 4)] and repeated[(0, 2)] is not repeated[(2, 4)]
        assert store.lookup_spans([]) == {}


def test_min_count_applies_per_counted_source(tmp_path: Path, dumps: Path, facc: Path) -> None:
    out = tmp_path / "min.db"
    build_store(out, _options(dumps, anchors=True, facc=(facc,), min_count=6))
    with SurfaceFormStore(out) as store:
        # new york/New_York: FACC 10 kept; nyc/New_York_City: FACC 5 dropped, KB alias kept.
        assert [(c.entity, c.count) for c in store.lookup("new york")] == [("<dbpedia:New_York_City>", 90), ("<dbpedia:New_York>", 10)]
        assert store.lookup("nyc") == [FormEntity("<dbpedia:New_York_City>", 0, 0.0, ("kb",))]
        assert store.lookup("the city") == []  # anchor count 1 < 6 and no other source
        assert store.meta["min_count"] == 6


def _tables(db: Path) -> list:
    with sqlite3.connect(db) as connection:
        return [
            connection.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("forms", "entity_forms", "entities")
        ]


def _content(db: Path) -> list:
    """(form, entity, FACC count, anchor count, KB alias, the form's FACC and anchor totals) per pair."""
    with SurfaceFormStore(db) as store:
        pairs = list(store.pairs())
    totals: dict[str, list[int]] = {}
    for pair in pairs:
        total = totals.setdefault(pair.form, [0, 0])
        total[0] += pair.facc
        total[1] += pair.anchors
    return sorted((p.form, p.entity, p.facc, p.anchors, int(p.kb), *totals[p.form]) for p in pairs)


def test_output_does_not_depend_on_workers_memory_chunks_or_partitions(tmp_path: Path, dumps: Path, monkeypatch) -> None:
    facc_files = []
    for n in range(4):
        path = tmp_path / f"facc-{n}.tsv"
        path.write_text(
            "".join(f"{'New York' if i % 3 else 'NEW-YORK'} {i % 17}\t/m/{'02_286' if i % 2 else '059rby'}\t{i + n}\n" for i in range(1, 300)),
            encoding="utf-8",
        )
        facc_files.append(path)
    options = {"anchors": True, "facc": tuple(facc_files)}
    build_store(tmp_path / "one.db", _options(dumps, workers=1, **options))
    # --memory 1 made to mean chunks of 50 rows and partitions of 2,000 bytes of input, then chunks of 1,000 rows
    monkeypatch.setattr(memory_module, "MIN_CHUNK_ROWS", 1)
    monkeypatch.setattr(memory_module, "MERGE_BYTES_PER_INPUT_BYTE", 2**20 // 2000)
    monkeypatch.setattr(memory_module, "CHUNK_ROW_BYTES", 2**20 // 50)
    build_store(tmp_path / "many.db", _options(dumps, workers=2, memory_mb=1, **options))
    monkeypatch.setattr(memory_module, "CHUNK_ROW_BYTES", 2**20 // 1000)
    build_store(tmp_path / "many-again.db", _options(dumps, workers=1, memory_mb=1, **options))
    # Form ids are numbered partition by partition (the partition count follows the input size and --memory);
    # for the same partitions the files hold the same rows, and the content never changes.
    assert _tables(tmp_path / "many.db") == _tables(tmp_path / "many-again.db")
    assert _content(tmp_path / "one.db") == _content(tmp_path / "many.db")
    assert sum(1 for row in _content(tmp_path / "one.db") if row[2]) == 17 * 2
    with SurfaceFormStore(tmp_path / "many.db") as one, SurfaceFormStore(tmp_path / "one.db") as other:
        assert one.meta == other.meta


def test_out_is_replaced_only_with_overwrite_and_no_temporary_files_remain(tmp_path: Path, dumps: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "sf.db"
    build_store(out, _options(dumps))
    with pytest.raises(ElqueryError, match="already exists"):
        build_store(out, _options(dumps))
    build_store(out, _options(dumps, anchors=True), overwrite=True)
    assert sorted(p.name for p in out_dir.iterdir()) == ["sf.db"]
    with SurfaceFormStore(out) as store:
        assert store.meta["sources"] == ["kb", "anchors"]


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    empty = tmp_path / "dumps"
    empty.mkdir()
    (empty / "short_abstracts_en.ttl").write_text("", encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    with pytest.raises(ElqueryError, match="no surface forms found"):
        build_store(out_dir / "sf.db", _options(empty))
    assert list(out_dir.iterdir()) == []


def test_user_mistakes(tmp_path: Path, dumps: Path) -> None:
    with pytest.raises(ElqueryError, match="no such file or directory"):
        build_store(tmp_path / "sf.db", _options(tmp_path / "missing"))
    with pytest.raises(ElqueryError, match="min-count"):
        build_store(tmp_path / "sf.db", _options(dumps, min_count=0))
    with pytest.raises(ElqueryError, match="output folder .* does not exist"):
        build_store(tmp_path / "nowhere" / "sf.db", _options(dumps))
    with pytest.raises(ElqueryError, match="no such surface-form store"):
        SurfaceFormStore(tmp_path / "missing.db")
    not_a_store = tmp_path / "text.db"
    not_a_store.write_text("hello", encoding="utf-8")
    with pytest.raises(ElqueryError, match="not a surface-form store"):
        SurfaceFormStore(not_a_store)


def test_an_unknown_dump_file_is_read_by_predicate(tmp_path: Path, dumps: Path) -> None:
    combined = tmp_path / "combined"
    combined.mkdir()
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(dumps.glob("*.ttl")) if not p.name.startswith("page_links"))
    (combined / "demo.nt").write_text(text, encoding="utf-8")
    separate, together = tmp_path / "separate.db", tmp_path / "together.db"
    build_store(separate, _options(dumps, anchors=True))
    build_store(together, _options(combined, anchors=True))
    assert _tables(separate) == _tables(together)


def test_freebase_links_blocks_with_other_lines_are_read_line_by_line(tmp_path: Path) -> None:
    links = tmp_path / "freebase_links_en.ttl"
    links.write_text(
        "# started 2015-10\n"
        + _iri("Tokyo", SAME_AS, "http://rdf.freebase.com/ns/m.07dfk")
        + "<http://dbpedia.org/resource/Caf\\u00E9> " + SAME_AS + " <http://rdf.freebase.com/ns/m.0cafe> .\n"
        + "not a triple\n"
        + _iri("Tokyo", SAME_AS, "http://www.wikidata.org/entity/Q1490")
        + _iri("Kyoto", SAME_AS, "http://rdf.freebase.com/ns/m.0kyo"),
        encoding="utf-8",
    )
    report = ParseReport()
    assert list(freebase_links(links, report)) == [
        ("<dbpedia:Tokyo>", "/m/07dfk"), ("<dbpedia:Café>", "/m/0cafe"), ("<dbpedia:Kyoto>", "/m/0kyo")
    ]
    assert report.malformed == 1 and report.files[str(links)].errors == [f"{links}:4: not an N-Triples statement"]
    clean = tmp_path / "clean" / "freebase_links_en.ttl"
    clean.parent.mkdir()
    clean.write_text(_iri("Tokyo", SAME_AS, "http://rdf.freebase.com/ns/m.07dfk") * 2, encoding="utf-8")
    assert list(freebase_links(clean, ParseReport())) == [("<dbpedia:Tokyo>", "/m/07dfk")] * 2
