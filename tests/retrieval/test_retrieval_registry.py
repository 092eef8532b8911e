"""The registry of retrieval models: each named model with its parameters as ``--param`` spells
them, their defaults (those of the Python constructors), one validation with one message at every
door (the registry, ``elquery rank``, an experiment config), the rule that links go with the ELR
models only, one DEFAULT_K, and the documentation tables generated from the entries."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.retrieval.cli import main, register
from elquery.retrieval.models import (
    BM25,
    BM25F,
    DEFAULT_K,
    MODELS,
    EntityLinkingRetrieval,
    Rerank,
    fsdm,
    fsdm_elr,
    lm,
    lm_dirichlet,
    mlm,
    mlm_elr,
    prms,
    sdm,
    sdm_elr,
)
from elquery.retrieval.models.describe import BEGIN, END, help_line, markdown, page_tables

REPO = Path(__file__).resolve().parents[2]
PROG = "python -m elquery.retrieval"

PARAMETERS = {  # the --param names each model took before the registry (its help and model_from_name)
    "mlm": "weight.names weight.content lambda lambda.names lambda.content mu.names mu.content",
    "lm": "field lambda",
    "lm-dirichlet": "field mu",
    "bm25": "field k1 b",
    "bm25f": "weight.names weight.content k1 b",
    "bm25-mlm": "depth bm25.field bm25.k1 bm25.b weight.names weight.content lambda lambda.names lambda.content "
                "mu.names mu.content",
    "prms": "lambda lambda.names lambda.content mu.names mu.content",
    "sdm": "field mu lambda.T lambda.O lambda.U window",
    "fsdm": "weight.names weight.content weight.T.names weight.T.content weight.O.names weight.O.content "
            "weight.U.names weight.U.content mu.names mu.content lambda.T lambda.O lambda.U window",
    "sdm-elr": "field mu window lambda.T lambda.O lambda.U lambda.E alpha predicates",
    "fsdm-elr": "weight.names weight.content weight.T.names weight.T.content weight.O.names weight.O.content "
                "weight.U.names weight.U.content mu.names mu.content window lambda.T lambda.O lambda.U lambda.E alpha "
                "predicates",
    "mlm-elr": "weight.names weight.content lambda lambda.names lambda.content mu.names mu.content lambda.T lambda.E "
               "alpha predicates",
}


def test_every_model_keeps_its_name_and_parameters() -> None:
    assert {m.name: " ".join(p.name for p in m.parameters) for m in MODELS} == PARAMETERS
    assert list(MODELS.names()) == list(PARAMETERS)


def test_the_defaults_build_the_python_constructors_models() -> None:
    expected = {"mlm": mlm(), "lm": lm(), "lm-dirichlet": lm_dirichlet(), "bm25": BM25(), "bm25f": BM25F(),
                "bm25-mlm": Rerank(BM25(), mlm()), "prms": prms(), "sdm": sdm(), "fsdm": fsdm(), "sdm-elr": sdm_elr(),
                "fsdm-elr": fsdm_elr(), "mlm-elr": mlm_elr()}
    assert {m.name: m.build({}) for m in MODELS} == expected
    assert all(m.build({}).name == m.name for m in MODELS)


def test_each_default_given_as_text_changes_nothing() -> None:
    for model in MODELS:
        defaults = {p.name: str(p.default) for p in model.parameters if p.default is not None}
        assert model.build(defaults) == model.build({}), model.name


def test_given_values_reach_the_model() -> None:
    assert MODELS.get("bm25-mlm").build({"depth": "20", "bm25.field": "names", "bm25.b": 0.75, "mu.content": 50}) \
        == Rerank(BM25("names", 0.9, 0.75), mlm(smoothing={"names": 0.1, "content": lm_dirichlet(mu=50.0).fields[0].smoothing}), 20)
    assert MODELS.get("fsdm").build({"weight.U.names": "1", "weight.U.content": "0", "mu.names": "30", "window": "4"}) \
        == fsdm(unordered={"names": 1.0, "content": 0.0}, mu={"names": 30.0}, window=4)
    assert MODELS.get("sdm-elr").build({"field": "names", "predicates": "3", "lambda.O": "0"}) \
        == sdm_elr(sdm("names"), (0.8, 0.0, 0.05, 0.1), predicates=3)


def test_the_elr_rule_is_the_entries() -> None:
    """The models that need links are those whose objects are ELR, and need relations too."""
    takers = [m.name for m in MODELS if isinstance(m.build({}), EntityLinkingRetrieval)]
    assert [m.name for m in MODELS if m.needs_links] == takers == ["sdm-elr", "fsdm-elr", "mlm-elr"]
    assert [m.name for m in MODELS if m.needs_relations] == takers
    MODELS.get("sdm-elr").check_links(True)
    MODELS.get("bm25").check_links(False)
    with pytest.raises(ElqueryError, match=r"^sdm-elr needs links \(the queries' linked entities\)$"):
        MODELS.get("sdm-elr").check_links(False)
    with pytest.raises(ElqueryError, match=r"^links go with the ELR models \(sdm-elr, fsdm-elr, mlm-elr\), not bm25$"):
        MODELS.get("bm25").check_links(True)


# --- one message at every door ----------------------------------------------------------------------

REFUSED = [
    ("bm25", {"k1": "-1"}, "bm25: k1 must be 0 <= k1, got -1"),
    ("bm25-mlm", {"depth": "0"}, "bm25-mlm: depth must be 1 <= depth, got 0"),
    ("sdm", {"depth": "3"}, "sdm has no parameter depth; its parameters are field, mu, lambda.T, lambda.O, lambda.U, "
                            "window"),
    ("fsdm", {"window": "2.5"}, "fsdm: window must be a whole number, got '2.5'"),
    ("mlm", {"weight.names": "0.5"}, "mlm: field weights must sum to 1, got 1.3"),
    ("lm", {"field": "abstract"}, "lm: field must be one of names, content, title, short_abstract, long_abstract, "
                                  "wiki_links, categories, got 'abstract'"),
    ("mlm-elr", {"alpha": "0"}, "mlm-elr: alpha must be 0 < alpha <= 1, got 0"),
]


@pytest.mark.parametrize(("model", "params", "message"), REFUSED, ids=[m for m, _, _ in REFUSED])
def test_the_command_line_refuses_what_the_registry_refuses_with_its_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, params: dict[str, str], message: str) -> None:
    with pytest.raises(ElqueryError) as refused:
        MODELS.get(model).build(params)
    assert str(refused.value) == message
    run = tmp_path / "run"
    settings = [arg for name, value in params.items() for arg in ("--param", f"{name}={value}")]
    # neither the index nor the queries exist: the model is checked before any of them is read
    assert main(["rank", "--index", str(tmp_path / "no-index"), "--queries", str(tmp_path / "no-queries"),
                 "--out", str(run), "--model", model, *settings]) == 2
    assert capsys.readouterr().err == f"{PROG}: error: {message}\n"
    assert not run.exists()


@pytest.mark.parametrize(("model", "params", "message"), REFUSED, ids=[m for m, _, _ in REFUSED])
def test_an_experiment_config_refuses_it_with_the_same_message(tmp_path: Path, model: str, params: dict[str, str],
                                                                message: str) -> None:
    from elquery.experiments.config import load_config

    config = tmp_path / "experiment.toml"
    links = 'links = "links.tsv"\n' if MODELS.get(model).needs_links else ""
    values = ", ".join(f'"{name}" = "{value}"' for name, value in params.items())
    config.write_text(f'index = "i"\nqueries = "q.tsv"\n[entity_retrieval]\nqrels = "r.txt"\n'
                      f'[[entity_retrieval.methods]]\nmodel = "{model}"\nparams = {{ {values} }}\n{links}')
    setting = " ".join(f"{name}={value}" for name, value in params.items())
    with pytest.raises(ElqueryError) as refused:
        load_config(config)
    assert str(refused.value) == f"{config}: entity_retrieval.methods[0].params: {setting}: {message}"


def test_an_unknown_model_is_the_registrys_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ElqueryError) as refused:
        MODELS.get("bm52")
    assert str(refused.value) == ("unknown model 'bm52'; models are mlm, lm, lm-dirichlet, bm25, bm25f, bm25-mlm, prms, "
                                  "sdm, fsdm, sdm-elr, fsdm-elr, mlm-elr")
    with pytest.raises(SystemExit):
        main(["rank", "--queries", "q", "--out", str(tmp_path / "run"), "--model", "bm52"])
    assert capsys.readouterr().err == (f"{PROG} rank: error: argument --model: {refused.value}; "
                                       f"see `{PROG} rank --help`\n")


@pytest.mark.parametrize(("extra", "model"), [(["--model", "fsdm-elr"], "fsdm-elr"),
                                              (["--model", "fsdm", "--links", "links.tsv"], "fsdm")])
def test_the_links_rule_is_the_registrys_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                                              model: str) -> None:
    with pytest.raises(ElqueryError) as refused:
        MODELS.get(model).check_links("--links" in extra)
    assert main(["rank", "--index", str(tmp_path / "no-index"), "--queries", str(tmp_path / "no-queries"),
                 "--out", str(tmp_path / "run"), *extra]) == 2
    assert capsys.readouterr().err == f"{PROG}: error: {refused.value}\n"


# --- defaults, help and documentation ---------------------------------------------------------------

def _rank_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser


def test_one_default_k() -> None:
    args = _rank_parser().parse_args(["rank", "--queries", "q", "--out", "r"])
    assert (args.k, args.model) == (DEFAULT_K, "mlm") and DEFAULT_K == 1000


def test_the_help_lists_every_model_from_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    text = "".join(capsys.readouterr().out.split())  # as argparse wraps it
    assert all("".join(help_line(m).split()) in text for m in MODELS)
    assert "{" + ",".join(MODELS.names()) + "}" in text


def test_the_rank_page_holds_the_registrys_tables() -> None:
    page = (REPO / "docs" / "commands" / "rank.md").read_text(encoding="utf-8")
    assert BEGIN in page and END in page
    assert page_tables(page) == markdown(), "regenerate: python -m elquery.retrieval.models.describe docs/commands/rank.md"


def test_the_tables_name_every_parameter_default_and_range() -> None:
    table = markdown().split("| model | `--param` | default | values | meaning |\n|---|---|---|---|---|\n")[1]
    rows = [row.split(" | ") for row in table.splitlines()]
    assert [row[1] for row in rows[:3]] == ["`weight.FIELD`", "`lambda`", "`lambda.FIELD`"]
    assert rows[0][2:4] == ["names 0.2, content 0.8", "0 <= weight.FIELD"]
    depth = next(row for row in rows if row[1] == "`depth`")
    assert depth[2:4] == ["1000", "1 <= depth"]
    named = {row[1].strip("`") for row in rows}
    declared = {p.name.replace(".names", ".FIELD").replace(".content", ".FIELD") for m in MODELS for p in m.parameters}
    assert named == declared
