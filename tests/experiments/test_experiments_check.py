"""The reproduction matrix: a config's [expected] figures, checked by `elquery experiment --check`
(OK / FAIL per figure, non-zero exit on a FAIL), on the bundled demo configuration."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elquery.base import ElqueryError, run
from elquery.experiments.cli import register
from elquery.experiments.config import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"


@pytest.fixture()
def demo_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path_factory.getbasetemp() / "elquery-cache-check"))
    shutil.copytree(CONFIGS / "demo", tmp_path / "demo")
    config = tmp_path / "demo.toml"
    config.write_text((CONFIGS / "demo.toml").read_text(encoding="utf-8"), encoding="utf-8")
    return config


def test_pinned_demo_figures_check_ok(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([register], "elquery", ["experiment", str(demo_config), "--out", str(tmp_path / "out"), "--check"]) == 0
    checks = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("OK", "FAIL"))]
    assert len(checks) == len(load_config(demo_config).expected) == 10
    assert all(line.startswith("OK   ") for line in checks)


def test_a_wrong_figure_fails_the_check(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo_config.write_text(demo_config.read_text().replace('"sm/MLMcg/map" = 0.8500', '"sm/MLMcg/map" = 0.8400')
                           + '"sm/MLMcg/ndcg" = 0.5\n', encoding="utf-8")
    assert run([register], "elquery", ["experiment", str(demo_config), "--out", str(tmp_path / "out"), "--check"]) == 1
    out = capsys.readouterr().out
    assert "FAIL sm/MLMcg/map: 0.8500 (expected 0.8400 ± 0.0001)" in out
    assert "FAIL sm/MLMcg/ndcg: missing (expected 0.5000 ± 0.0001)" in out
    assert "OK   sm/CMNS/map: 0.7333" in out


@pytest.mark.parametrize(("text", "message"), [
    ('[expected]\n"if/GIF/strict.F/x" = 1\n', r"expected\.if/GIF/strict\.F/x: expected a key TASK/METHOD/METRIC"),
    ('[expected]\n"xx/GIF/strict.F" = 1\n', "expected a key TASK/METHOD/METRIC"),
    ('[expected]\ntolerance = 0.1\n', "no figure to check"),
    ('[expected]\n"if/GIF/strict.F" = "high"\n', "expected int or float"),
])
def test_malformed_expected_tables(demo_config: Path, text: str, message: str) -> None:
    demo_config.write_text(demo_config.read_text().split("[expected]")[0] + text, encoding="utf-8")
    with pytest.raises(ElqueryError, match=message):
        load_config(demo_config)


def test_check_without_expected_figures_is_an_error(demo_config: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    demo_config.write_text(demo_config.read_text().split("# The figures")[0], encoding="utf-8")
    assert run([register], "elquery", ["experiment", str(demo_config), "--out", str(tmp_path / "o"), "--check"]) == 2
    assert "no [expected] figures to check" in capsys.readouterr().err


def test_a_given_run_is_evaluated_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The published-runs configuration, fed a run whose figures are known: strict P is the share
    of its queries' interpretation sets that are exactly right (hand-computed)."""
    (tmp_path / "queries.json").write_text('{"a": "x", "b": "y", "c": "z", "d": "w"}')
    (tmp_path / "qrels.txt").write_text("a\t1\t<dbpedia:A>\nb\t1\t<dbpedia:B>\nc\nd\t1\t<dbpedia:D>\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "erd-dev-GIF-MLMcg.elq").write_text("a\t1\t<dbpedia:A>\nb\t1\t<dbpedia:X>\nc\nd\n")
    config = tmp_path / "published.toml"
    text = (CONFIGS / "ictir15-erd-dev-published.toml").read_text(encoding="utf-8")
    text = text.replace('"${ELQUERY_DATA:-../../../../shared/data}/elq/erd-dev/queries.json"', '"queries.json"')
    text = text.replace('"${ELQUERY_DATA:-../../../../shared/data}/elq/erd-dev/qrels-elq.txt"', '"qrels.txt"')
    config.write_text(text.split("[expected]")[0] + '[expected]\n"if/GIF-MLMcg/strict.P" = 0.5\n'
                      '"if/GIF-MLMcg/strict.R" = 0.5\n', encoding="utf-8")
    monkeypatch.setenv("ELQUERY_PUBLISHED_RUNS", str(tmp_path / "runs"))
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out"), "--check"]) == 0
    out = capsys.readouterr().out
    assert "OK   if/GIF-MLMcg/strict.P: 0.5000" in out and "OK   if/GIF-MLMcg/strict.R: 0.5000" in out
    monkeypatch.setenv("ELQUERY_PUBLISHED_RUNS", str(tmp_path / "nowhere"))
    assert run([register], "elquery", ["experiment", str(config), "--out", str(tmp_path / "out2")]) == 2
    assert "erd-dev-GIF-MLMcg.elq: no such file (the run of method 'GIF-MLMcg' of published.toml)" in capsys.readouterr().err
