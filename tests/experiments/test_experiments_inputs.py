"""Every input of an experiment is checked before its first run (issue 27, item 3): a config that
names a missing or wrong input, for any kind of method (TAGME, the linking methods, entity
retrieval with links), gives one line and exit status 2 and writes nothing into --out; the
shipped sample configs read the artefact names `elquery build` writes; an ELR model's links can be
computed by the experiment itself, with the runs the links file of `elquery link` gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from elquery.base import run
from elquery.experiments import load_config, run_experiment
from elquery.experiments.cli import register
from elquery.experiments.config import LinksSpec
from elquery.indexing.artefacts import ArtefactPaths
from elquery.linking.cli import register as register_link
from elquery.retrieval.links import read_links

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
DEMO = CONFIGS / "demo"


@pytest.fixture(scope="session")
def demo_kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo knowledge base's index and surface forms (built once, in this session's cache)."""
    from elquery.indexing.demo import demo_artefacts

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.getbasetemp() / "elquery-cache-check"))
        return demo_artefacts()


@pytest.fixture(scope="session")
def relations_kb(demo_kb: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An `elquery build` layout of the demo KB whose index has relations (no TAGME artefact)."""
    from elquery.indexing.build_index import build_dbpedia_index
    from elquery.indexing.demo import dumps

    paths = ArtefactPaths.of(tmp_path_factory.mktemp("relations-kb"))
    build_dbpedia_index(dumps(), paths.index, relations=True)
    shutil.copyfile(demo_kb[1], paths.surface_forms)
    return paths.root


def linking_config(folder: Path, index: Path | str, surface_forms: Path | str, tagme: str = "",
                   sm_qrels: Path = DEMO / "qrels-er.txt") -> Path:
    """A demo experiment: GIF-CMNS, GIF-MLMcg (and TAGME when ``tagme`` is given), semantic
    mapping, mention detection."""
    tagme_lines = f'tagme = "{tagme}"\n' if tagme else ""
    tagme_method = '[[interpretation_finding.methods]]\nmethod = "tagme"\n' if tagme else ""
    config = folder / "experiment.toml"
    config.write_text(f"""
index = "{index}"
surface_forms = "{surface_forms}"
{tagme_lines}queries = "{DEMO / 'queries.json'}"
[crossval]
scheme = "leave-one-out"
[interpretation_finding]
qrels = "{DEMO / 'qrels-elq.txt'}"
[[interpretation_finding.methods]]
method = "cmns"
gif_threshold = [0.1, 0.3]
[[interpretation_finding.methods]]
method = "mlmcg"
gif_threshold = [0.25]
{tagme_method}[semantic_mapping]
qrels = "{sm_qrels}"
[[semantic_mapping.methods]]
method = "cmns"
[mention_detection]
""", encoding="utf-8")
    return config


def retrieval_config(folder: Path, index: Path | str, links: str, surface_forms: Path | str | None = None) -> Path:
    """BM25 first, then SDM+ELR with ``links`` (a TOML value), over the demo queries."""
    config = folder / "retrieval.toml"
    surface = "" if surface_forms is None else f'surface_forms = "{surface_forms}"\n'
    config.write_text(f"""
index = "{index}"
{surface}queries = "{DEMO / 'queries.json'}"
[crossval]
scheme = "leave-one-out"
[entity_retrieval]
qrels = "{DEMO / 'qrels-er.txt'}"
depth = 10
[[entity_retrieval.methods]]
model = "bm25"
label = "BM25"
[[entity_retrieval.methods]]
model = "sdm-elr"
label = "SDM+ELR"
links = {links}
""", encoding="utf-8")
    return config


def refused(config: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    """Run the command, expecting one error line and exit status 2; that line."""
    assert run([register], "elquery", ["experiment", str(config), "--out", str(out), *extra]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("elquery: error: "), captured.err
    assert captured.out == ""
    return lines[0]


def test_a_missing_tagme_artefact_is_refused_before_any_run(demo_kb: tuple[Path, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    config = linking_config(tmp_path, *demo_kb, tagme=str(tmp_path / "no-such-tagme"))
    out = tmp_path / "out"
    line = refused(config, out, capsys)
    assert line == (f"elquery: error: {tmp_path / 'no-such-tagme'}: no TAGME artefact there "
                    f"(tagme of experiment.toml; read by TAGME)")
    assert not out.exists()


@pytest.mark.parametrize("broken", ["missing", "not-a-store"])
def test_a_missing_surface_form_store_is_refused_before_any_run(demo_kb: tuple[Path, Path], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str], broken: str) -> None:
    store = tmp_path / "sf.db"
    if broken == "not-a-store":
        store.write_text("form\tentity\n")
    config = linking_config(tmp_path, demo_kb[0], store)
    line = refused(config, tmp_path / "out", capsys)
    assert line == (f"elquery: error: {store}: no surface-form store there (surface_forms of experiment.toml; "
                    "read by GIF-CMNS, GIF-MLMcg, CMNS, mention detection)")
    assert not (tmp_path / "out").exists()


def test_a_missing_index_is_refused_for_the_mlm_methods(demo_kb: tuple[Path, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    config = linking_config(tmp_path, tmp_path / "no-index", demo_kb[1])
    line = refused(config, tmp_path / "out", capsys)
    assert line.endswith("no-index: no entity index there (index of experiment.toml; read by GIF-MLMcg)")


def test_the_qrels_of_a_later_task_are_checked_before_the_first(demo_kb: tuple[Path, Path], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The semantic-mapping qrels are missing: nothing of interpretation finding is run or written,
    and a folder given as --out keeps exactly what it held."""
    config = linking_config(tmp_path, *demo_kb, sm_qrels=tmp_path / "qrels-er.txt")
    out = tmp_path / "out"
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "earlier.elq").write_text("q1\n")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    line = refused(config, out, capsys)
    assert line == (f"elquery: error: {tmp_path / 'qrels-er.txt'}: no such file "
                    "(semantic_mapping.qrels of experiment.toml)")
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_a_missing_links_file_is_refused_before_the_first_ranking(demo_kb: tuple[Path, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    config = retrieval_config(tmp_path, demo_kb[0], f'"{tmp_path / "links.jsonl"}"')
    line = refused(config, tmp_path / "out", capsys)
    assert line == (f"elquery: error: {tmp_path / 'links.jsonl'}: no such file "
                    "(the links of method 'SDM+ELR' of retrieval.toml)")
    assert not (tmp_path / "out").exists()


def test_an_elr_model_over_an_index_without_relations_is_refused(demo_kb: tuple[Path, Path], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    config = retrieval_config(tmp_path, demo_kb[0], '{ method = "cmns" }', demo_kb[1])
    line = refused(config, tmp_path / "out", capsys)
    assert line == (f"elquery: error: {demo_kb[0]}: the index has no relations, which SDM+ELR read; "
                    "build it with `elquery index dbpedia --relations`")
    assert not (tmp_path / "out").exists()


def test_a_links_file_naming_an_entity_not_in_the_index_is_refused(relations_kb: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    links = tmp_path / "links.tsv"
    links.write_text("demo_1\tManhattan\t0.5\ndemo_2\tNo_such_entity\t1\n", encoding="utf-8")
    config = retrieval_config(tmp_path, relations_kb / "index", f'"{links}"')
    line = refused(config, tmp_path / "out", capsys)
    assert line.endswith(f"{links}:2: linked entity <dbpedia:No_such_entity> is not in the index {relations_kb / 'index'}")
    assert not (tmp_path / "out").exists()


def test_an_artefacts_folder_without_tagme_is_refused_for_a_tagme_method(relations_kb: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = linking_config(tmp_path, "ignored", "ignored", tagme="ignored")
    line = refused(config, tmp_path / "out", capsys, "--artefacts", str(relations_kb))
    assert line == (f"elquery: error: {relations_kb / 'tagme'}: no TAGME artefact there (--artefacts {relations_kb}: "
                    f"build it with `elquery build --out {relations_kb}`; read by TAGME)")
    assert not (tmp_path / "out").exists()
    line = refused(config, tmp_path / "out", capsys, "--artefacts", str(tmp_path / "nowhere"))
    assert line == f"elquery: error: {tmp_path / 'nowhere'}: no such artefacts folder (build one with `elquery build`)"


def test_an_out_path_that_is_a_file_is_refused(demo_kb: tuple[Path, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out").write_text("")
    line = refused(linking_config(tmp_path, *demo_kb), tmp_path / "out", capsys)
    assert line.endswith("out: exists and is not a folder (--out is the experiment's output folder)")


@pytest.mark.parametrize("name", ["sample-erd-dev", "sample-dbpedia-entity"])
def test_a_sample_config_without_its_artefacts_points_to_artefacts(name: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A sample config run as a new user first runs it, without --artefacts or ELQUERY_SAMPLE: the
    line names the variable and the option that replaces it, and nothing is written."""
    monkeypatch.delenv("ELQUERY_SAMPLE", raising=False)
    line = refused(CONFIGS / f"{name}.toml", tmp_path / "out", capsys)
    assert line == (f"elquery: error: {CONFIGS / f'{name}.toml'}: index: environment variable ELQUERY_SAMPLE is not "
                    "set (give --artefacts DIR, the folder `elquery build --out DIR` wrote, or set it)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["sample-erd-dev", "sample-y-erd", "sample-dbpedia-entity"])
def test_the_sample_configs_read_what_elquery_build_writes(name: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """ELQUERY_SAMPLE=DIR and --artefacts DIR name the same files: the layout of `elquery build`."""
    built = ArtefactPaths.of(tmp_path / "sample")
    monkeypatch.setenv("ELQUERY_SAMPLE", str(built.root))
    monkeypatch.setenv("ELQUERY_DATA", str(tmp_path / "data"))
    by_variable = load_config(CONFIGS / f"{name}.toml")
    monkeypatch.delenv("ELQUERY_SAMPLE")
    by_folder = load_config(CONFIGS / f"{name}.toml", artefacts=built.root)
    assert (by_variable.index, by_variable.surface_forms) == (by_folder.index, by_folder.surface_forms) == (
        built.index, built.surface_forms)
    if name != "sample-dbpedia-entity":
        assert by_variable.tagme == by_folder.tagme == built.tagme


def test_computed_links_rank_as_the_links_file_of_elquery_link(relations_kb: Path, tmp_path: Path) -> None:
    """links = { method = "cmns" }: the experiment links the queries with CMNS (c and s as
    `elquery link`'s defaults) and ranks SDM+ELR exactly as with the jsonl file `elquery link
    --method cmns --format jsonl` writes; the links are cached under --out and reused."""
    paths = ArtefactPaths.of(relations_kb)
    links = tmp_path / "links.jsonl"
    assert run([register_link], "elquery", ["link", "--index", str(paths.index), "--surface-forms",
                                            str(paths.surface_forms), "--method", "cmns", "--format", "jsonl",
                                            "--queries", str(DEMO / "queries.json"), "--out", str(links)]) == 0
    assert any(json.loads(line)["interpretations"] for line in links.read_text().splitlines())
    (tmp_path / "given").mkdir()
    given = run_experiment(retrieval_config(tmp_path / "given", paths.index, f'"{links}"'), tmp_path / "out-given",
                           progress=False)
    config = retrieval_config(tmp_path, "ignored", '{ method = "cmns" }', "ignored")
    computed_config = load_config(config, artefacts=relations_kb)
    spec = computed_config.entity_retrieval
    assert spec is not None and spec.methods[1].links == LinksSpec("cmns", 0.1, 0.1)
    computed = run_experiment(computed_config, tmp_path / "out", progress=False)
    assert computed.method("er", "SDM+ELR").run.read_text() == given.method("er", "SDM+ELR").run.read_text()
    cached = sorted((tmp_path / "out" / "cache").glob("links-cmns-c0.1-s0.1.*.jsonl"))
    assert len(cached) == 1

    def entities(path: Path) -> dict[str, list[tuple[str, float]]]:
        return {q: [(link.entity, link.score) for link in found] for q, found in read_links(path).items()}
    assert entities(cached[0]) == entities(links)
    stamp = cached[0].stat().st_mtime_ns
    assert run_experiment(computed_config, tmp_path / "out", progress=False).report == computed.report
    assert cached[0].stat().st_mtime_ns == stamp


def test_the_readme_reproduction_commands_run_after_elquery_build(dbpedia_sample: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The README's "Reproduction matrix" for the DBpedia sample, as written: one `elquery build`,
    then each sample config with --artefacts, every pinned figure OK."""
    import shlex

    from elquery.cli import main

    readme = (CONFIGS.parents[2] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Reproduction matrix", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.startswith("elquery ") and ("sample" in line)]
    assert [c.split()[1] for c in commands] == ["build", "experiment", "experiment", "experiment"]
    monkeypatch.chdir(tmp_path)
    for command in commands:
        command = command.replace("${ELQUERY_DATA:-../shared/data}", str(dbpedia_sample.parent))
        command = command.replace("elquery/experiments/configs/", f"{CONFIGS}/")
        assert main(shlex.split(command)[1:]) == 0, command
        out = capsys.readouterr().out
        if "--check" in command:
            checks = [line for line in out.splitlines() if line.startswith(("OK", "FAIL"))]
            assert checks and all(line.startswith("OK   ") for line in checks), command
