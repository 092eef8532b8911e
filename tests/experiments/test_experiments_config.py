"""Experiment descriptions (TOML): ready configs, path expansion, one-line errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.experiments.config import LEAVE_ONE_OUT, SESSIONS, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
MINIMAL = """
index = "idx"
surface_forms = "${SF_DIR:-sf}/sf.db"
queries = "q.json"
[interpretation_finding]
qrels = "qrels.txt"
[[interpretation_finding.methods]]
method = "mlmcg"
gif_threshold = [1, 2.5]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, scheme, queries", [("y-erd", SESSIONS, 2398), ("erd-dev", LEAVE_ONE_OUT, 91)])
def test_ready_configs(name: str, scheme: str, queries: int, elq_data: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELQUERY_DATA", str(elq_data.parent))
    for variable in ("ELQUERY_INDEX", "ELQUERY_SURFACE_FORMS", "ELQUERY_TAGME"):
        monkeypatch.setenv(variable, f"/artefacts/{variable.lower()}")
    config = load_config(CONFIGS / f"{name}.toml")
    assert config.crossval.scheme == scheme
    assert config.index == Path("/artefacts/elquery_index")
    assert config.queries == (elq_data / name / "queries.json").resolve()
    assert config.interpretation_finding is not None and config.semantic_mapping is not None
    assert config.interpretation_finding.qrels.exists() and config.semantic_mapping.qrels.exists()
    assert [m.label for m in config.interpretation_finding.methods] == [
        "TAGME", "TopRanked-MLMcg", "GIF-CMNS", "GIF-MLMcg"]
    assert [m.label for m in config.semantic_mapping.methods] == ["CMNS", "MLM", "MLMc", "MLMcg"]
    assert config.mention_detection is not None
    assert config.mention_detection.qrels == config.interpretation_finding.qrels
    assert len(config.queries.read_text().splitlines()) == queries + 2  # "{", one per query, "}"


def test_defaults_and_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SF_DIR", raising=False)
    config = load_config(write(tmp_path, MINIMAL))
    assert config.index == tmp_path / "idx" and config.surface_forms == tmp_path / "sf" / "sf.db"
    assert config.crossval.scheme == SESSIONS and config.crossval.folds == 5
    assert config.name == "experiment" and config.semantic_mapping is None
    (method,) = config.interpretation_finding.methods  # type: ignore[union-attr]
    assert (method.label, method.commonness_thresholds, method.score_thresholds) == ("GIF-MLMcg", (0.1,), (1.0, 2.5))
    monkeypatch.setenv("SF_DIR", "/elsewhere")
    assert load_config(write(tmp_path, MINIMAL)).surface_forms == Path("/elsewhere/sf.db")


@pytest.mark.parametrize("change, message", [
    (('index = "idx"', 'index = "${NOPE_NOT_SET}"'), "index: environment variable NOPE_NOT_SET is not set"),
    (('queries = "q.json"', 'queries = "q.json"\nqueris = 1'), "queris: unknown key"),
    (("gif_threshold = [1, 2.5]", "gif_threshold = [1, -2]"),
     "interpretation_finding.methods[0].gif_threshold: mlmcg: gif_threshold must be 0 <= gif_threshold, got -2"),
    (("gif_threshold = [1, 2.5]", "gif_threshold = [1, 2.5]\ncommonness_threshold = [0.1, 2]"),  # as `elquery link`
     "interpretation_finding.methods[0].commonness_threshold: mlmcg: commonness_threshold must be 0 <= "
     "commonness_threshold <= 1, got 2"),
    (("gif_threshold = [1, 2.5]", ""), "interpretation_finding.methods[0].gif_threshold: missing"),
    (('method = "mlmcg"', 'method = "bm25"'), "interpretation_finding.methods[0].method: unknown method 'bm25'"),
    (('method = "mlmcg"\ngif_threshold = [1, 2.5]', 'method = "tagme"'), "tagme: missing: a TAGME method needs"),
    (('method = "mlmcg"', 'method = "tagme"'), "interpretation_finding.methods[0].gif_threshold: tagme has no parameter gif_threshold; its parameters are "
     "max_tokens, min_lp, min_commonness, tau, epsilon, rho_na"),
    (('qrels = "qrels.txt"', 'qrels = "qrels.txt"\nmetric = "strict.X"'),
     "interpretation_finding.metric: unknown metric 'strict.X'"),
    (('queries = "q.json"', 'queries = "q.json"\n[crossval]\nscheme = "leave-one-out"\nfolds = 3'),
     "crossval.folds: leave-one-out has one fold per query"),
    (('index = "idx"', 'index = 3'), "index: expected str, got int 3"),
])
def test_errors_name_the_key(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = write(tmp_path, MINIMAL.replace(*change))
    with pytest.raises(ElqueryError) as error:
        load_config(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value) and "\n" not in str(error.value)


def test_not_toml(tmp_path: Path) -> None:
    with pytest.raises(ElqueryError, match="not valid TOML"):
        load_config(write(tmp_path, "index = "))
    with pytest.raises(ElqueryError, match="experiment config not found"):
        load_config(tmp_path / "missing.toml")
