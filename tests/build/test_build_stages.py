"""``elquery build`` takes every option of its stages and chooses its stages: ``--stages``, or by
default every stage the inputs allow, saying in one line what it skipped and why. Each artefact
equals the one its own command builds with the same options, and a stage whose options changed is
rebuilt."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from elquery.cli import main as elquery
from elquery.indexing.demo import DEMO_DIR, facc_files
from elquery.indexing.provenance import read_provenance

STAGE_COMMANDS = {"index": ["index", "dbpedia"], "surface-forms": ["index", "surface-forms"], "tagme": ["index", "tagme"]}
# Options that name a command's own input and output, or its processes (build: --data, --out, --workers).
NOT_STAGE_OPTIONS = {"--help", "--dumps", "--out", "--overwrite", "--threads", "--workers"}
TAGME_SKIPPED = ("skipped tagme: no anchor_text_en.ttl, page_links_en.ttl, long_abstracts_en.ttl (plain, .bz2 or .gz) "
                 "among the dumps; TAGME needs anchor_text, page_links, long_abstracts")


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo dumps without the datasets only TAGME reads (anchor texts, page links, long
    abstracts, page ids), as in a download that lacks them."""
    folder = tmp_path_factory.mktemp("kb") / "dumps"
    folder.mkdir()
    for path in DEMO_DIR.glob("*.nt"):
        if not path.name.startswith(("anchor_text_", "page_links_", "long_abstracts_", "page_ids_")):
            shutil.copy(path, folder)
    return folder


def _options(argv: list[str], capsys: pytest.CaptureFixture[str]) -> set[str]:
    """The long options a command's --help lists."""
    capsys.readouterr()
    with pytest.raises(SystemExit):
        elquery([*argv, "--help"])
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, list[str]]:
    capsys.readouterr()
    assert elquery(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err.splitlines()


def test_build_takes_every_option_of_its_stages(capsys: pytest.CaptureFixture[str]) -> None:
    build = _options(["build"], capsys)
    for stage, command in STAGE_COMMANDS.items():
        missing = _options(command, capsys) - NOT_STAGE_OPTIONS - build
        assert not missing, f"build lacks {sorted(missing)} of {stage}"
    assert {"--stages", "--data", "--out", "--workers"} <= build


def test_dumps_without_tagme_inputs_build_what_they_allow(kb: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Dumps without anchor_text, page_links or long_abstracts: the index and the surface forms
    are built (without anchors), TAGME is skipped in one line."""
    out, facc = tmp_path / "art", facc_files()[0]
    stdout, err = _run(["build", "--data", str(kb), "--facc", str(facc), "--out", str(out), "--workers", "1"], capsys)
    assert stdout == f"3 of 3 stages built -> {out}\n"
    assert [line for line in err if line.startswith("skipped")] == [TAGME_SKIPPED]
    assert err[0] == TAGME_SKIPPED
    assert sorted(p.name for p in out.iterdir()) == ["index", "surface-forms.db"]
    # The same artefacts as the stages' own commands build.
    _run(["index", "dbpedia", "--dumps", str(kb), "--out", str(tmp_path / "index"), "--threads", "1"], capsys)
    _run(["index", "surface-forms", "--dumps", str(kb), "--facc", str(facc), "--out", str(tmp_path / "sf.db"),
          "--workers", "1"], capsys)
    _assert_same_index(out / "index", tmp_path / "index")
    built, alone = read_provenance(out / "surface-forms.db"), read_provenance(tmp_path / "sf.db")
    assert built is not None and alone is not None and built.id == alone.id and built.report == alone.report
    assert built.options["sources"] == ["kb", "facc"]
    # Nothing to skip when the stages are chosen; run again: up to date.
    stdout, err = _run(["build", "--data", str(kb), "--facc", str(facc), "--out", str(out), "--workers", "1",
                        "--stages", "index,surface-forms"], capsys)
    assert stdout == f"0 of 2 stages built -> {out}\n" and not [line for line in err if line.startswith("skipped")]


def _assert_same_index(one: Path, two: Path) -> None:
    """The same index; ``one`` (built by ``elquery build``) holds the identifiers table too."""
    names = sorted(p.name for p in one.iterdir() if p.name != "identifiers.db")
    assert names == sorted(p.name for p in two.iterdir())
    assert (one / "entity_ids.txt").read_bytes() == (two / "entity_ids.txt").read_bytes()
    assert json.loads((one / "elquery.json").read_text()) == json.loads((two / "elquery.json").read_text())
    for name in names:
        if name.endswith(".npy"):
            assert np.array_equal(np.load(one / name), np.load(two / name)), name


def test_stages_chooses_the_stages(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "art"
    common = ["build", "--data", str(kb), "--out", str(out), "--workers", "1"]
    stdout, err = _run([*common, "--stages", "index"], capsys)
    assert stdout == f"1 of 1 stages built -> {out}\n" and err[-1] == f"index: built in {err[-1].split()[3]} s (not built yet) -> {out / 'index'}"
    assert sorted(p.name for p in out.iterdir()) == ["index"]
    index_id = read_provenance(out / "index").id  # type: ignore[union-attr]
    stdout, err = _run([*common, "--stages", "surface-forms,index"], capsys)
    assert stdout == f"1 of 2 stages built -> {out}\n"
    assert [line.split(":")[0] for line in err if not line.startswith(" ")][:1] == ["index"]  # in build order
    assert read_provenance(out / "index").id == index_id  # type: ignore[union-attr]
    assert sorted(p.name for p in out.iterdir()) == ["index", "surface-forms.db"]


@pytest.mark.parametrize(("stages", "message"), [
    ("bogus", "--stages: no stage 'bogus' (choose from index, identifiers, surface-forms, tagme)"),
    ("index,,tagme", "--stages: no stage '' (choose from index, identifiers, surface-forms, tagme)"),
    ("tagme", "--stages tagme: no anchor_text_en.ttl, page_links_en.ttl, long_abstracts_en.ttl"),
])
def test_stages_errors(kb: Path, tmp_path: Path, stages: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "art"
    assert elquery(["build", "--data", str(kb), "--out", str(out), "--stages", stages]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()


def test_nothing_to_build_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "page_links_en.nt").write_text(
        "<http://dbpedia.org/resource/A> <http://dbpedia.org/ontology/wikiPageWikiLink> "
        "<http://dbpedia.org/resource/B> .\n", encoding="utf-8")
    assert elquery(["build", "--data", str(data), "--out", str(tmp_path / "art")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "nothing to build from" in err, err
    for stage in ("index", "surface-forms", "tagme"):
        assert f"{stage}: " in err
    assert not (tmp_path / "art").exists()


def test_index_options_through_build(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--relations (the ELR models' fields), --skip-datasets and --no-ltr-fields reach the index,
    as with `elquery index dbpedia`; changing them rebuilds the index only."""
    out = tmp_path / "art"
    common = ["build", "--data", str(kb), "--out", str(out), "--workers", "1"]
    _run(common, capsys)
    stdout, err = _run([*common, "--relations"], capsys)
    assert stdout == f"2 of 3 stages built -> {out}\n" and "index: building (options changed: relations)" in err
    assert "identifiers: building (not built yet)" in err  # the index replaced, with the table in it
    _run(["index", "dbpedia", "--dumps", str(kb), "--out", str(tmp_path / "index"), "--threads", "1",
          "--relations"], capsys)
    _assert_same_index(out / "index", tmp_path / "index")
    metadata = json.loads((out / "index" / "elquery.json").read_text())
    assert metadata["relations"] is True and metadata["relation_statistics"]["links"] > 0
    _, err = _run([*common, "--relations"], capsys)
    assert any(line.startswith("index: up to date") for line in err)
    skip = "article_categories_,instance_types_"
    _, err = _run([*common, "--relations", "--skip-datasets", skip], capsys)
    assert "index: building (options changed: skip_datasets)" in err
    assert any(line.startswith("surface-forms: up to date") for line in err)
    record = read_provenance(out / "index")
    assert record is not None and record.options["skip_datasets"] == skip.split(",")
    assert "instance_types_en.nt" not in {f.name for f in record.inputs}
    _, err = _run(common, capsys)
    assert "index: building (options changed: relations, skip_datasets)" in err
    assert "relations" not in json.loads((out / "index" / "elquery.json").read_text())
    _, err = _run([*common, "--no-ltr-fields"], capsys)
    assert "index: building (options changed: ltr_fields)" in err
    _run(["index", "dbpedia", "--dumps", str(kb), "--out", str(tmp_path / "no-ltr"), "--threads", "1",
          "--no-ltr-fields"], capsys)
    _assert_same_index(out / "index", tmp_path / "no-ltr")


def test_surface_form_options_through_build(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, facc = tmp_path / "art", str(facc_files()[0])
    common = ["build", "--data", str(kb), "--out", str(out), "--workers", "1", "--facc", facc]
    _run([*common, "--no-kb-aliases", "--min-count", "2", "--memory", "1"], capsys)
    _run(["index", "surface-forms", "--dumps", str(kb), "--facc", facc, "--no-kb-aliases", "--min-count", "2",
          "--out", str(tmp_path / "sf.db"), "--workers", "1"], capsys)
    built, alone = read_provenance(out / "surface-forms.db"), read_provenance(tmp_path / "sf.db")
    assert built is not None and alone is not None and built.id == alone.id and built.report == alone.report
    assert built.options == {"sources": ["facc"], "min_count": 2, "min_posterior": 0.0, "format": "elquery-surface-forms/2"}
    _, err = _run([*common, "--no-kb-aliases", "--min-count", "2"], capsys)  # --memory: memory only
    assert [line.split(":")[0] for line in err if "up to date" in line] == ["index", "identifiers", "surface-forms"]
    _, err = _run([*common, "--anchors"], capsys)
    assert "surface-forms: building (options changed: min_count, sources)" in err
    record = read_provenance(out / "surface-forms.db")
    assert record is not None and record.options["sources"] == ["kb", "facc", "anchors"]
