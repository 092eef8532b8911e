"""Tuned thresholds (issue 27, item 9): the params file a real `elquery experiment` run writes (the
demo config) is what `elquery link --params` and `Linker(..., params=...)` link with, exactly as
the thresholds given one by one; an option given wins over the file; the summary line and --help
say where each threshold comes from; a bad params file is one line, exit 2, before any work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from elquery.base import ElqueryError, run
from elquery.experiments.cli import register as register_experiment
from elquery.linking.cli import register as register_link
from elquery.linking.linker import Linker
from elquery.linking.params import FORMAT, LinkingParams, MethodParams, load_params

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
QUERIES = CONFIGS / "demo" / "queries.json"


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("elquery-cache-params")


@pytest.fixture(autouse=True)
def _cache(demo_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELQUERY_CACHE", str(demo_cache))


@pytest.fixture(scope="module")
def demo_params(demo_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The params.json of a run of the shipped demo config."""
    folder = tmp_path_factory.mktemp("demo-experiment")
    shutil.copytree(CONFIGS / "demo", folder / "demo")
    shutil.copyfile(CONFIGS / "demo.toml", folder / "demo.toml")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(demo_cache))
        assert run([register_experiment], "elquery", ["experiment", str(folder / "demo.toml"),
                                                      "--out", str(folder / "out")]) == 0
    return folder / "out" / "params.json"


def link(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = run([register_link], "elquery", ["link", *args])
    return status, capsys.readouterr().err


def test_the_demo_experiment_writes_its_tuned_thresholds(demo_params: Path) -> None:
    """Per GIF method, the (c, s) with the best mean strict F over the 10 queries, first listed on a
    tie: GIF-CMNS's grid [0.05, 0.1, 0.3, 0.5] gives 0.5 at 0.05 and 0.1, GIF-MLMcg's [0.1, 0.25,
    0.5, 1] gives 0.6667 at 0.1 and 0.25 (the pinned leave-one-out figures of demo.toml are those
    values too: every fold chooses the same)."""
    data = json.loads(demo_params.read_text())
    assert data["format"] == FORMAT
    assert data["experiment"]["metric"] == "strict.F" and data["experiment"]["name"] == "Demo KB"
    assert {m: (e["commonness_threshold"], e["gif_threshold"]) for m, e in data["methods"].items()} == {
        "cmns": (0.1, 0.05), "mlmcg": (0.1, 0.1)}
    assert data["methods"]["mlmcg"]["tuned"] == {"label": "GIF-MLMcg", "metric": "strict.F",
                                                 "value": pytest.approx(2 / 3), "queries": 10}
    assert "| mlmcg | 0.1 | 0.1 | GIF-MLMcg | strict.F 0.6667 |" in (demo_params.parent / "results.md").read_text()


@pytest.mark.parametrize("method", ["mlmcg", "cmns"])
def test_link_with_the_params_file_equals_the_thresholds_given(demo_params: Path, method: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    tuned = json.loads(demo_params.read_text())["methods"][method]
    c, s = str(tuned["commonness_threshold"]), str(tuned["gif_threshold"])
    status, err = link(["--method", method, "--queries", str(QUERIES), "--params", str(demo_params),
                        "--format", "jsonl", "--out", str(tmp_path / "tuned.jsonl")], capsys)
    assert status == 0
    assert f"[c: params file {demo_params}, s: params file {demo_params}]" in err
    status, err = link(["--method", method, "--queries", str(QUERIES), "--commonness-threshold", c,
                        "--gif-threshold", s, "--format", "jsonl", "--out", str(tmp_path / "given.jsonl")], capsys)
    assert status == 0 and "[c: given, s: given]" in err
    assert (tmp_path / "tuned.jsonl").read_text() == (tmp_path / "given.jsonl").read_text()
    with Linker.demo(method, params=demo_params) as tuned_linker, \
            Linker.demo(method, float(c), float(s)) as given_linker:
        assert tuned_linker.config.origin("s") == f"params file {demo_params}"
        for text in json.loads(QUERIES.read_text()).values():
            assert tuned_linker.result(text) == given_linker.result(text)


def test_an_option_wins_over_the_params_file(demo_params: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    status, err = link(["new york pizza manhattan", "--params", str(demo_params), "--gif-threshold", "3",
                        "--out", str(tmp_path / "run.elq")], capsys)
    assert status == 0
    assert f"GIF-MLMcg (c=0.1, s=3) [c: params file {demo_params}, s: given]" in err
    status, err = link(["new york pizza manhattan", "--method", "mlm", "--params", str(demo_params),
                        "--out", str(tmp_path / "run.elq")], capsys)
    assert status == 0  # the file has no mlm: the demo defaults
    assert "GIF-MLM (c=0, s=1) [c: default, s: demo default]" in err


def test_a_tuned_threshold_changes_the_links(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A params file with MLMcg's s = 5 links as --gif-threshold 5, and not as the demo default."""
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": FORMAT, "methods": {"mlmcg": {"gif_threshold": 5}}}))
    outputs = {}
    for name, options in (("file", ["--params", str(params)]), ("given", ["--gif-threshold", "5"]), ("default", [])):
        assert link(["--queries", str(QUERIES), *options, "--out", str(tmp_path / f"{name}.elq")], capsys)[0] == 0
        outputs[name] = (tmp_path / f"{name}.elq").read_text()
    assert outputs["file"] == outputs["given"] != outputs["default"]
    in_memory = LinkingParams({"mlmcg": MethodParams(gif_threshold=5.0)})
    with Linker.demo(params=in_memory) as linker:
        assert (linker.config.s, linker.config.origin("s"), linker.config.origin("c")) == (5.0, "params", "default")


def test_help_says_where_a_threshold_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run([register_link], "elquery", ["link", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--params FILE" in text
    assert ("its option if given, else the --params FILE of a tuned `elquery experiment` (its OUT/params.json) "
            "where it has the method, else the demo KB's defaults (without --index), else the method's default") in text


BAD = [
    ("missing", None, "no such params file (`elquery experiment` writes OUT/params.json)"),
    ("not-json", "{", "not a params file: invalid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ("format", {"format": "other/1", "methods": {}}, "not a params file (format 'other/1', expected 'elquery-linking-params/1')"),
    ("method", {"format": FORMAT, "methods": {"mlmcgx": {"gif_threshold": 1}}},
     "methods.mlmcgx: unknown method 'mlmcgx'; methods are cmns, mlm, mlmc, mlmcg, tagme, ltr"),
    ("c-range", {"format": FORMAT, "methods": {"cmns": {"commonness_threshold": 1.5}}},
     "methods.cmns: commonness_threshold must be 0 <= commonness_threshold <= 1, got 1.5"),
    ("s-range", {"format": FORMAT, "methods": {"mlmcg": {"gif_threshold": -2}}},
     "methods.mlmcg: gif_threshold must be 0 <= gif_threshold, got -2"),
    ("s-type", {"format": FORMAT, "methods": {"mlmcg": {"gif_threshold": "twenty"}}},
     "methods.mlmcg: gif_threshold must be a number, got 'twenty'"),
    ("key", {"format": FORMAT, "methods": {"tagme": {"gif_threshold": 1}}},
     "methods.tagme.gif_threshold: unknown key (the thresholds of tagme: rho_na)"),
    ("empty", {"format": FORMAT, "methods": {}}, "methods: expected an object of thresholds per method, got {}"),
    ("no-threshold", {"format": FORMAT, "methods": {"cmns": {}}},
     "methods.cmns: no threshold given (commonness_threshold, gif_threshold)"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_params_file_is_one_line(name: str, content: object, message: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "params.json"
    if content is not None:
        params.write_text(content if isinstance(content, str) else json.dumps(content))
    status, err = link(["new york pizza manhattan", "--params", str(params), "--out", str(tmp_path / "run.elq")], capsys)
    assert status == 2
    assert err == f"elquery: error: {params}: {message}\n"
    assert not (tmp_path / "run.elq").exists()
    with pytest.raises(ElqueryError, match="^" + str(params)):
        load_params(params)


def test_in_memory_params_are_checked() -> None:
    with pytest.raises(ElqueryError, match=r"^params: methods\.mlmcg: gif_threshold must be a number, got nan$"):
        LinkingParams({"mlmcg": MethodParams(gif_threshold=float("nan"))})
    with pytest.raises(ElqueryError, match=r"^params: methods\.cmns\.rho_na: not a threshold of cmns"):
        LinkingParams({"cmns": MethodParams(rho_na=0.2)})


def test_tagme_takes_its_rho_from_the_params_file(dbpedia_sample: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--method tagme with a params file links as --tagme-param rho_na=VALUE (real DBpedia sample)."""
    from elquery.indexing.tagme.build import build_tagme

    build_tagme([dbpedia_sample], tmp_path / "tagme")
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": FORMAT, "methods": {"tagme": {"rho_na": 0.3}}}))
    queries = tmp_path / "queries.tsv"
    queries.write_text("a\tbritish airways flights to rome\nb\trome italy\nc\tthe city of rome in italy\n")
    common = ["--method", "tagme", "--tagme", str(tmp_path / "tagme"), "--queries", str(queries), "--format", "jsonl"]
    status, err = link([*common, "--params", str(params), "--out", str(tmp_path / "file.jsonl")], capsys)
    assert status == 0 and f"[rho_na: params file {params}]" in err and "rho_na=0.3" in err
    assert link([*common, "--tagme-param", "rho_na=0.3", "--out", str(tmp_path / "given.jsonl")], capsys)[0] == 0
    assert link([*common, "--out", str(tmp_path / "default.jsonl")], capsys)[0] == 0
    assert (tmp_path / "file.jsonl").read_text() == (tmp_path / "given.jsonl").read_text()
    assert (tmp_path / "file.jsonl").read_text() != (tmp_path / "default.jsonl").read_text()
