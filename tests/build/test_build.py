"""``elquery build`` over the real DBpedia sample: every artefact, stage by stage, skipping a stage
whose provenance is unchanged, resuming an interrupted build; ``elquery info``; ``--artefacts`` in
place of the separate paths; the provenance in the outputs of ``link`` and ``rank``."""

from __future__ import annotations

import bz2
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from elquery.cli import main as elquery
from elquery.indexing.build_all import BuildAllOptions, build_all
from elquery.indexing.provenance import ID_LENGTH, read_provenance
from elquery.indexing.tagme.build import TagmeBuildParams

# The files each stage reads from the sample, by name (the index skips the link and bookkeeping
# datasets, but reads page_links for the links of its LTR fields; the surface forms read labels,
# names, anchors and redirects; TAGME its six datasets).
INDEX_INPUTS = {
    "article_categories_en.ttl.bz2", "geo_coordinates_mappingbased_en.ttl.bz2", "homepages_en.ttl.bz2",
    "infobox_properties_en.ttl.bz2", "instance_types_transitive_en.ttl.bz2", "labels_en.ttl.bz2",
    "long_abstracts_en.ttl.bz2", "mappingbased_literals_en.ttl.bz2", "mappingbased_objects_en.ttl.bz2",
    "page_links_en.ttl.bz2", "persondata_en.ttl.bz2", "short_abstracts_en.ttl.bz2",
    "specific_mappingbased_properties_en.ttl.bz2", "transitive_redirects_en.ttl.bz2",
}
SURFACE_FORM_INPUTS = {"anchor_text_en.ttl.bz2", "labels_en.ttl.bz2", "persondata_en.ttl.bz2",
                       "transitive_redirects_en.ttl.bz2"}
TAGME_INPUTS = {"anchor_text_en.ttl.bz2", "page_links_en.ttl.bz2", "long_abstracts_en.ttl.bz2", "labels_en.ttl.bz2",
                "transitive_redirects_en.ttl.bz2", "page_ids_en.ttl.bz2"}
STAGES = ("index", "identifiers", "surface-forms", "tagme")
QUERY = "rome airport"


@pytest.fixture(scope="module")
def data(dbpedia_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sample that tests may change."""
    return Path(shutil.copytree(dbpedia_sample, tmp_path_factory.mktemp("data") / "dumps"))


@pytest.fixture(scope="module")
def built(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "artefacts"
    assert elquery(["build", "--data", str(data), "--out", str(out), "--workers", "1"]) == 0
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _build(data: Path, out: Path, **options: object) -> dict[str, bool]:
    """Stage name -> whether it was built."""
    return {r.name: r.built for r in build_all(out, BuildAllOptions((data,), workers=1, progress=False, **options),
                                               log=lambda line: None)}


def _rewrite(path: Path, drop_last_lines: int) -> None:
    """The dump without its last lines, recompressed (a real change of content)."""
    lines = bz2.decompress(path.read_bytes()).splitlines(keepends=True)
    path.write_bytes(bz2.compress(b"".join(lines[:-drop_last_lines])))


# --- the build and its provenance ------------------------------------------------------------------


def test_every_artefact_is_built_with_its_provenance(built: Path, data: Path) -> None:
    records = {name: read_provenance(built / name) for name in ("index", "surface-forms.db", "tagme")}
    expected = {"index": ("entity index", INDEX_INPUTS), "surface-forms.db": ("surface-form store", SURFACE_FORM_INPUTS),
                "tagme": ("TAGME artefact", TAGME_INPUTS)}
    for name, record in records.items():
        assert record is not None
        kind, inputs = expected[name]
        assert record.kind == kind and {f.name for f in record.inputs} == inputs
        for f in record.inputs:
            assert Path(f.path) == (data / f.name).resolve()
            assert (f.size, f.sha256) == ((data / f.name).stat().st_size, _sha256(data / f.name))
        assert len(record.id) == ID_LENGTH and record.started <= record.finished
    assert records["index"].report["entities"] == 97 and records["index"].options["top_predicates"] == 1000
    assert records["surface-forms.db"].options == {"sources": ["kb", "anchors"], "min_count": 1, "min_posterior": 0.0,
                                                 "format": "elquery-surface-forms/2"}
    assert records["tagme"].options == {"min_link": 2, "max_tokens": 6}
    assert not [p for p in built.iterdir() if p.name.startswith(".")]


def test_a_second_run_skips_every_stage(built: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: p.stat().st_mtime_ns for p in built.rglob("*")}
    assert elquery(["build", "--data", str(data), "--out", str(built), "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"0 of 4 stages built -> {built}\n"
    assert [line.split(":")[0] for line in captured.err.splitlines()] == list(STAGES)
    assert all("up to date (id " in line for line in captured.err.splitlines())
    assert {p: p.stat().st_mtime_ns for p in built.rglob("*")} == before


def test_an_option_or_an_input_rebuilds_only_the_stages_that_use_it(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "artefacts"
    assert _build(data, out) == {"index": True, "identifiers": True, "surface-forms": True, "tagme": True}
    ids = {name: read_provenance(out / name).id for name in ("index", "surface-forms.db", "tagme")}  # type: ignore[union-attr]
    assert _build(data, out, tagme=TagmeBuildParams(max_tokens=5)) == {"index": False, "identifiers": False, "surface-forms": False, "tagme": True}
    assert read_provenance(out / "tagme").options["max_tokens"] == 5  # type: ignore[union-attr]
    assert _build(data, out, tagme=TagmeBuildParams(max_tokens=5), min_count=2) == {
        "index": False, "identifiers": False, "surface-forms": True, "tagme": False}
    assert _build(data, out) == {"index": False, "identifiers": False, "surface-forms": True, "tagme": True}  # back to the defaults
    assert {name: read_provenance(out / name).id for name in ids} == ids  # type: ignore[union-attr]
    os.utime(data / "labels_en.ttl.bz2")  # touched, same content: same checksum
    assert _build(data, out) == {"index": False, "identifiers": False, "surface-forms": False, "tagme": False}
    page_ids = data / "page_ids_en.ttl.bz2"
    saved = page_ids.read_bytes()
    try:
        _rewrite(page_ids, 1)  # read by TAGME and the identifiers only
        assert _build(data, out) == {"index": False, "identifiers": True, "surface-forms": False, "tagme": True}
        record = read_provenance(out / "tagme")
        assert record is not None and record.id != ids["tagme"]
        assert {f.name: f.sha256 for f in record.inputs}["page_ids_en.ttl.bz2"] == _sha256(page_ids)
    finally:
        page_ids.write_bytes(saved)
    labels = data / "labels_en.ttl.bz2"
    saved = labels.read_bytes()
    try:
        _rewrite(labels, 1)  # read by every stage
        assert _build(data, out) == {"index": True, "identifiers": True, "surface-forms": True, "tagme": True}
    finally:
        labels.write_bytes(saved)


def test_facc_counts_go_into_the_surface_forms_only(data: Path, tmp_path: Path) -> None:
    mids = [line.split()[2].removeprefix("<http://rdf.freebase.com/ns/m.").removesuffix(">")
            for line in bz2.decompress((data / "freebase_links_en.ttl.bz2").read_bytes()).decode().splitlines()[:5]]
    facc = tmp_path / "facc.tsv"
    facc.write_text("".join(f"web form {n}\t/m/{mid}\t{n + 1}\n" for n, mid in enumerate(mids)), encoding="utf-8")
    out = tmp_path / "artefacts"
    _build(data, out)
    assert _build(data, out, facc=(facc,)) == {"index": False, "identifiers": False, "surface-forms": True, "tagme": False}
    record = read_provenance(out / "surface-forms.db")
    assert record is not None and record.options["sources"] == ["kb", "facc", "anchors"]
    assert {f.name for f in record.inputs} == SURFACE_FORM_INPUTS | {"freebase_links_en.ttl.bz2", "facc.tsv"}
    assert record.report["facc"]["mapped_rows"] == 5
    assert _build(data, out, facc=(facc,)) == {"index": False, "identifiers": False, "surface-forms": False, "tagme": False}
    facc.write_text(facc.read_text() + f"another form\t/m/{mids[0]}\t2\n", encoding="utf-8")
    assert _build(data, out, facc=(facc,)) == {"index": False, "identifiers": False, "surface-forms": True, "tagme": False}


def test_an_interrupted_build_resumes_with_the_stage_it_was_in(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import elquery.indexing.surface_forms.build as surface_forms_build

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    out = tmp_path / "artefacts"
    argv = ["build", "--data", str(data), "--out", str(out), "--workers", "1"]
    with monkeypatch.context() as patch:
        patch.setattr(surface_forms_build, "_assemble", interrupted)
        assert elquery(argv) == 130
    assert sorted(p.name for p in out.iterdir()) == ["index"]  # nothing of the interrupted stage
    assert read_provenance(out / "index") is not None
    capsys.readouterr()
    assert elquery(argv) == 0
    err = capsys.readouterr().err
    assert "index: up to date" in err and "surface-forms: building (not built yet)" in err
    assert "tagme: building (not built yet)" in err
    assert sorted(p.name for p in out.iterdir()) == ["index", "surface-forms.db", "tagme"]


def test_a_changed_elquery_version_or_a_missing_record_rebuilds(built: Path, data: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import elquery.indexing.provenance as provenance

    out = tmp_path / "artefacts"
    shutil.copytree(built, out)
    (out / "tagme" / "provenance.json").unlink()
    assert _build(data, out) == {"index": False, "identifiers": False, "surface-forms": False, "tagme": True}
    monkeypatch.setattr(provenance, "elquery_version", lambda: "99.0")
    results = build_all(out, BuildAllOptions((data,), workers=1, progress=False), log=lambda line: None)
    assert [r.built for r in results] == [True, True, True, True]
    assert results[0].reason.startswith("built by elquery ") and results[0].reason.endswith("this is 99.0")


def test_build_errors(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    assert elquery(["build", "--data", str(data), "--out", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err == f"elquery: error: {tmp_path / 'file'}: not a folder\n"
    foreign = tmp_path / "foreign"
    (foreign / "tagme").mkdir(parents=True)
    assert elquery(["build", "--data", str(data), "--out", str(foreign), "--workers", "1"]) == 2
    assert "tagme: exists and is not an elquery TAGME artefact" in capsys.readouterr().err
    assert elquery(["build", "--data", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


# --- elquery info ----------------------------------------------------------------------------------


def test_info_prints_the_records(built: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert elquery(["info", str(built)]) == 0
    out = capsys.readouterr().out
    for name in ("index", "index/identifiers.db", "surface-forms.db", "tagme"):
        record = read_provenance(built / name)
        assert record is not None
        assert f"== {built / name}\nkind: {record.kind}\nid: {record.id}\n" in out
    labels = data / "labels_en.ttl.bz2"
    assert out.count(f"  {labels.resolve()}  {labels.stat().st_size} bytes  sha256 {_sha256(labels)}\n") == 3
    assert elquery(["info", "--json", str(built)]) == 0
    records = json.loads(capsys.readouterr().out)
    assert records == {name: read_provenance(built / name).to_json()  # type: ignore[union-attr]
                       for name in ("index", "index/identifiers.db", "surface-forms.db", "tagme")}
    assert records["tagme"]["format"] == "elquery-provenance/1"
    assert elquery(["info", str(built / "surface-forms.db")]) == 0
    assert capsys.readouterr().out.startswith(f"== {built / 'surface-forms.db'}\nkind: surface-form store\n")


def test_info_errors(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert elquery(["info", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err == f"elquery: error: {tmp_path / 'missing'}: no such artefact\n"
    old = tmp_path / "tagme"
    shutil.copytree(built / "tagme", old)
    (old / "provenance.json").unlink()
    assert elquery(["info", str(old)]) == 0
    assert "no provenance record" in capsys.readouterr().out
    (old / "provenance.json").write_text("{not json")
    assert elquery(["info", str(old)]) == 2
    assert "provenance.json: not valid JSON" in capsys.readouterr().err
    (old / "provenance.json").write_text('{"format": "other"}')
    assert elquery(["info", str(old)]) == 2
    assert "not an elquery provenance record" in capsys.readouterr().err
    (tmp_path / "plain.txt").write_text("x")
    (tmp_path / "folder").mkdir()
    for path in (tmp_path / "plain.txt", tmp_path / "folder"):
        assert elquery(["info", str(path)]) == 2
        assert capsys.readouterr().err.startswith(f"elquery: error: {path}: not an elquery artefact (an index, ")


# --- --artefacts and the provenance of results -----------------------------------------------------


def _output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert elquery(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["elq", "trec", "jsonl"])
def test_link_with_artefacts_answers_as_with_the_paths(built: Path, tmp_path: Path, fmt: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    separate = ["--index", str(built / "index"), "--surface-forms", str(built / "surface-forms.db")]
    for method, paths in (("mlmcg", separate), ("tagme", ["--tagme", str(built / "tagme")])):
        common = ["link", QUERY, "--method", method, "--format", fmt]
        assert _output([*common, "--artefacts", str(built)], capsys) == _output([*common, *paths], capsys)
        one, two = tmp_path / f"{method}-1.{fmt}", tmp_path / f"{method}-2.{fmt}"
        _output([*common, "--artefacts", str(built), "--out", str(one)], capsys)
        _output([*common, *paths, "--out", str(two)], capsys)
        assert one.read_bytes() == two.read_bytes()
        if fmt != "jsonl":
            assert Path(f"{one}.meta.json").read_bytes() == Path(f"{two}.meta.json").read_bytes()


def test_link_outputs_carry_the_provenance(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text(f"q1\t{QUERY}\nq2\tbritish airways\n", encoding="utf-8")
    lines = _output(["link", "--queries", str(queries), "--artefacts", str(built), "--format", "jsonl"], capsys).splitlines()
    records = [json.loads(line) for line in lines]
    index, surface_forms = read_provenance(built / "index"), read_provenance(built / "surface-forms.db")
    assert index is not None and surface_forms is not None
    expected = {"command": "link", "elquery_version": index.elquery_version,
                "artefacts": {"index": index.id, "surface_forms": surface_forms.id}}
    assert [r["qid"] for r in records] == ["q1", "q2"] and all(r["provenance"] == expected for r in records)
    run = tmp_path / "run.elq"
    assert elquery(["link", QUERY, "--artefacts", str(built), "--out", str(run)]) == 0
    assert json.loads((tmp_path / "run.elq.meta.json").read_text()) == expected
    assert run.read_text().split("\t")[0].strip() == "q1"
    assert _output(["link", QUERY, "--artefacts", str(built)], capsys) == run.read_text()  # nothing added to stdout
    tagme = _output(["link", QUERY, "--method", "tagme", "--artefacts", str(built), "--format", "jsonl"], capsys)
    assert json.loads(tagme)["provenance"]["artefacts"] == {"tagme": read_provenance(built / "tagme").id}  # type: ignore[union-attr]


def test_rank_with_artefacts(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text(f"q1\t{QUERY}\nq2\tbritish airways\n", encoding="utf-8")
    common = ["rank", "--queries", str(queries), "--threads", "1", "--k", "20"]
    one, two = tmp_path / "one.trec", tmp_path / "two.trec"
    assert elquery([*common, "--artefacts", str(built), "--out", str(one)]) == 0
    assert elquery([*common, "--index", str(built / "index"), "--out", str(two)]) == 0
    assert one.read_bytes() == two.read_bytes() and one.read_text().startswith("q1 Q0 <dbpedia:")
    index = read_provenance(built / "index")
    assert index is not None
    assert json.loads(Path(f"{one}.meta.json").read_text()) == {
        "command": "rank", "elquery_version": index.elquery_version, "artefacts": {"index": index.id}}
    assert _output([*common, "--artefacts", str(built), "--out", "-"], capsys) == one.read_text()
    assert not (tmp_path / "-.meta.json").exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["link", "rome", "--artefacts", "ART", "--index", "I"], "--artefacts replaces --index: give one or the other"),
    (["link", "rome", "--method", "tagme", "--artefacts", "ART", "--tagme", "T"], "--artefacts replaces --tagme"),
    (["rank", "--queries", "Q", "--out", "-", "--artefacts", "ART", "--index", "I"], "--artefacts replaces --index"),
    (["rank", "--queries", "Q", "--out", "-"], "give --index DIR or --artefacts DIR"),
    (["link", "rome", "--artefacts", "EMPTY"], "EMPTY: no entity index (index) in this artefacts folder"),
    (["link", "rome", "--method", "tagme", "--artefacts", "NOTAGME"],
     "NOTAGME: no TAGME artefact (tagme) in this artefacts folder"),
    (["link", "rome", "--artefacts", "MISSING"], "MISSING: no such artefacts folder"),
])
def test_artefacts_errors(built: Path, tmp_path: Path, argv: list[str], message: str,
                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "NOTAGME").mkdir()
    for name in ("index", "surface-forms.db"):
        (tmp_path / "NOTAGME" / name).symlink_to(built / name)
    names = {"ART": built, "EMPTY": tmp_path / "EMPTY", "NOTAGME": tmp_path / "NOTAGME", "MISSING": tmp_path / "MISSING"}
    argv = [str(names.get(a, a)) for a in argv]
    message = message.replace("EMPTY", str(names["EMPTY"])).replace("NOTAGME", str(names["NOTAGME"]))
    assert elquery(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message.replace("MISSING", str(names["MISSING"])) in err


def test_serve_and_experiment_take_the_artefacts(built: Path, tmp_path: Path) -> None:
    import argparse

    from elquery.experiments.config import load_config
    from elquery.indexing.artefacts import IF_BUILT, REQUIRED, resolve_artefact_args

    served = argparse.Namespace(artefacts=str(built), index=None, surface_forms=None, tagme=None)
    resolve_artefact_args(served, index=REQUIRED, surface_forms=REQUIRED, tagme=IF_BUILT)
    assert (served.index, served.surface_forms, served.tagme) == (
        str(built / "index"), str(built / "surface-forms.db"), str(built / "tagme"))
    config = tmp_path / "experiment.toml"
    config.write_text('index = "${ELQUERY_UNSET_VARIABLE}/index"\nqueries = "queries.tsv"\n'
                      '[semantic_mapping]\nqrels = "qrels.txt"\nmetric = "map"\n'
                      '[[semantic_mapping.methods]]\nmethod = "cmns"\n', encoding="utf-8")
    parsed = load_config(config, built)
    assert (parsed.index, parsed.surface_forms, parsed.tagme) == (
        (built / "index").resolve(), (built / "surface-forms.db").resolve(), (built / "tagme").resolve())


def test_the_service_names_its_artefacts_by_provenance_id(built: Path) -> None:
    from fastapi.testclient import TestClient

    from elquery.indexing.provenance import read_provenance
    from elquery.serve.app import Artefacts, create_app

    client = TestClient(create_app(Artefacts(built / "index", built / "surface-forms.db", built / "tagme")))
    provenance = client.get("/stats").json()["provenance"]
    assert provenance["artefacts"] == {name: read_provenance(built / path).id for name, path in
                                       (("index", "index"), ("surface_forms", "surface-forms.db"), ("tagme", "tagme"))}
    assert provenance["command"] == "serve"
