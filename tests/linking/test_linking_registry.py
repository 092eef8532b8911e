"""The linking-method registry at every door (issue 28.1): ``elquery link``, the Python API, params
files and experiment configs accept and refuse the same values with the same message; the command
line's method flags and help and the docs table come from the entries; and a method added with
one definition and one registration works at every door."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import fields
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.cli import main as elquery
from elquery.experiments.config import load_config
from elquery.linking.linker import Linker
from elquery.linking.methods import METHODS, LinkingMethod, RankingInputs, markdown_table, open_linker
from elquery.linking.params import FORMAT, load_params
from elquery.linking.tagme.params import PARAMETERS, TagmeParams
from elquery.linking.types import ScoredMention
from new_entries import SQUARED, SquaredRanking  # tests/new_entries.py, on the path as pytest loads it

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo knowledge base, built once into a temporary ``ELQUERY_CACHE``."""
    from elquery.indexing.demo import demo_artefacts

    cache = tmp_path_factory.mktemp("registry-demo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(cache))
        demo_artefacts()
        yield cache


# --- one value, one verdict, one message at every door -------------------------------------------

# (method, parameter, value, message); c = 2 was refused by `elquery link` only, accepted by the API
REFUSED = [
    ("mlmcg", "commonness_threshold", 2, "mlmcg: commonness_threshold must be 0 <= commonness_threshold <= 1, got 2"),
    ("cmns", "gif_threshold", -1, "cmns: gif_threshold must be 0 <= gif_threshold, got -1"),
    ("mlm", "commonness_threshold", -0.5, "mlm: commonness_threshold must be 0 <= commonness_threshold <= 1, got -0.5"),
    ("tagme", "rho_na", -1, "tagme: rho_na must be 0 <= rho_na, got -1"),
    ("ltr", "gif_threshold", -3, "ltr: gif_threshold must be 0 <= gif_threshold, got -3"),
]
CONFIG_KEY = {"rho_na": "rho_threshold"}


def cli_flags(method: str, name: str, value: object) -> list[str]:
    entry = METHODS.get(method)
    if entry.option is not None:
        return [entry.option, f"{name}={value}"]
    extra = ["--model", "model.onnx"] if method == "ltr" else []
    return [f"--{name.replace('_', '-')}", str(value), *extra]


def cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert elquery(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err.removeprefix("elquery: error: ")


def config_text(method: str, entries: dict[str, object]) -> str:
    lines = [f'method = "{method}"', *(f"{key} = {json.dumps(value)}" for key, value in entries.items())]
    if method != "tagme" and "gif_threshold" not in entries:
        lines.append("gif_threshold = 1")
    if method == "ltr":
        lines.append('model = "model.onnx"')
    return ('index = "index"\nsurface_forms = "sf.db"\ntagme = "tagme"\nqueries = "q.json"\n'
            '[interpretation_finding]\nqrels = "qrels.txt"\n[[interpretation_finding.methods]]\n' + "\n".join(lines) + "\n")


@pytest.mark.parametrize(("method", "name", "value", "message"), REFUSED, ids=[f"{r[0]}-{r[1]}" for r in REFUSED])
def test_every_door_refuses_a_value_with_the_same_message(method: str, name: str, value: object, message: str,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    # the command line (checked before the demo knowledge base is built or a query is linked)
    assert cli_error(["link", "new york", "--method", method, *cli_flags(method, name, value)], capsys) == message
    # the Python API: the Linker of the methods with finders, and any method's linker
    extra = {"model": "model.onnx"} if method == "ltr" else {}
    artefacts = {"index": "index", "surface_forms": "sf.db", "tagme": "tagme"}
    with pytest.raises(ElqueryError) as refused:
        open_linker(method, artefacts, **{name: value}, **extra)
    assert str(refused.value) == message
    if METHODS.get(method).finders:
        with pytest.raises(ElqueryError) as refused:
            Linker("index", "sf.db", method, **{name: value}, **extra)
        assert str(refused.value) == message
    # a params file and an experiment config: the same message after the file and key
    if name in METHODS.get(method).tuned:
        params = tmp_path / "params.json"
        params.write_text(json.dumps({"format": FORMAT, "methods": {method: {name: value}}}))
        with pytest.raises(ElqueryError) as refused:
            load_params(params)
        assert str(refused.value) == f"{params}: methods.{method}: {message.removeprefix(f'{method}: ')}"
    config = tmp_path / "experiment.toml"
    config.write_text(config_text(method, {CONFIG_KEY.get(name, name): value}))
    with pytest.raises(ElqueryError) as refused:
        load_config(config)
    assert str(refused.value) == f"{config}: interpretation_finding.methods[0].{CONFIG_KEY.get(name, name)}: {message}"


def test_every_door_accepts_the_bounds(tmp_path: Path) -> None:
    """c = 1 and s = 0, the ends of their ranges, pass at every door (and text is parsed alike)."""
    class Store:
        path = None

        def lookup_spans(self, tokens: Sequence[str]) -> dict:
            return {}

    class Scorer:
        path = None

        def exp_scores(self, query: str, entities: Sequence[str]) -> dict:
            return {}

    linker = Linker(Scorer(), Store(), "mlmcg", commonness_threshold=1, gif_threshold=0)
    assert (linker.config.c, linker.config.s) == (1.0, 0.0)
    assert Linker(Scorer(), Store(), "mlmcg", commonness_threshold="1").config.c == 1.0
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": FORMAT, "methods": {"mlmcg": {"commonness_threshold": 1, "gif_threshold": 0}}}))
    assert load_params(params).of("mlmcg").commonness_threshold == 1.0  # type: ignore[union-attr]
    config = tmp_path / "experiment.toml"
    config.write_text(config_text("mlmcg", {"commonness_threshold": [0, 1], "gif_threshold": 0}))
    spec = load_config(config).interpretation_finding
    assert spec is not None and spec.methods[0].commonness_thresholds == (0.0, 1.0)


@pytest.mark.parametrize(("method", "name", "value"), [("cmns", "tau", 0.1), ("mlmcg", "epsilon", 0.5),
                                                    ("tagme", "gif_threshold", 1), ("mlm", "frob", 2)])
def test_a_parameter_the_method_lacks_is_the_registrys_line(method: str, name: str, value: object,
                                                            tmp_path: Path) -> None:
    """The Python API and an experiment config (the service: tests/serve/test_serve_registries.py)
    refuse a parameter the method does not declare with the registry's one line; the config said
    'unknown key' before."""
    names = ", ".join(p.name for p in METHODS.get(method).parameters)
    message = f"{method} has no parameter {name}; its parameters are {names}"
    with pytest.raises(ElqueryError) as refused:
        open_linker(method, {"index": "index", "surface_forms": "sf.db", "tagme": "tagme"}, **{name: value})
    assert str(refused.value) == message
    config = tmp_path / "experiment.toml"
    config.write_text(config_text(method, {name: value}))
    with pytest.raises(ElqueryError) as refused:
        load_config(config)
    assert str(refused.value) == f"{config}: interpretation_finding.methods[0].{name}: {message}"


def test_a_parameter_under_another_key_stays_an_unknown_key(tmp_path: Path) -> None:
    """TAGME's rho_na is swept as rho_threshold in a config: rho_na itself is no key there."""
    config = tmp_path / "experiment.toml"
    config.write_text(config_text("tagme", {"rho_na": 0.2}))
    with pytest.raises(ElqueryError) as refused:
        load_config(config)
    assert str(refused.value) == f"{config}: interpretation_finding.methods[0].rho_na: unknown key"


def test_options_of_other_methods_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_error(["link", "q", "--method", "cmns", "--tagme-param", "tau=0.1"], capsys) == \
        "not options of --method cmns: --tagme-param"
    assert cli_error(["link", "q", "--method", "tagme", "--commonness-threshold", "0.2", "--model", "m"], capsys) == \
        "not options of --method tagme: --commonness-threshold, --model (TAGME takes --tagme-param NAME=VALUE)"
    with pytest.raises(SystemExit) as exited:
        elquery(["link", "q", "--method", "bm25"])
    assert exited.value.code == 2 and capsys.readouterr().err.startswith(
        "elquery link: error: argument --method: unknown method 'bm25'; methods are cmns, mlm, mlmc, mlmcg, tagme, ltr; "
        "see `elquery link --help`")
    with pytest.raises(ElqueryError, match=r"^unknown method 'bm25'; methods are cmns, mlm, mlmc, mlmcg, tagme, ltr$"):
        open_linker("bm25")


# --- what is generated from the registry ---------------------------------------------------------


def link_parser() -> argparse.ArgumentParser:
    from elquery.linking.cli import register

    commands = argparse.ArgumentParser().add_subparsers()
    register(commands)
    return commands.choices["link"]


def test_the_link_flags_and_help_come_from_the_registry() -> None:
    parser = link_parser()
    actions = {a.dest: a for a in parser._actions}
    assert tuple(actions["method"].choices) == METHODS.names()
    for method in METHODS:
        names = [p.name for p in method.parameters] if method.option is None else [method.option.lstrip("-").replace("-", "_")]
        for name in names:
            assert name in actions, f"no option for {method.name}'s {name}"
    text = actions["gif_threshold"].help
    assert "cmns 0.1, mlm 20, mlmc 20, mlmcg 20, ltr 0.3; on the demo KB: cmns 0.1, mlm 1, mlmc 1, mlmcg 0.25, ltr 0.3" in text
    assert "(--method ltr; required)" in actions["model"].help
    assert "rho_na=0.1" in actions["tagme_param"].help


def test_tagme_params_are_the_registered_parameters() -> None:
    assert [(f.name, f.default) for f in fields(TagmeParams)] == [(p.name, p.default) for p in PARAMETERS]
    assert TagmeParams(epsilon="1").epsilon == 1.0
    with pytest.raises(ElqueryError, match=r"^tagme: max_tokens must be a whole number, got 2\.5$"):
        TagmeParams(max_tokens=2.5)


def test_the_docs_table_is_the_registry() -> None:
    """docs/methods.md holds :func:`markdown_table` between its markers (regenerate with
    ``python -c 'from elquery.linking.methods import markdown_table; print(markdown_table())'``)."""
    text = (REPO / "docs" / "methods.md").read_text(encoding="utf-8")
    start, end = "<!-- linking methods: generated from elquery.linking.methods.METHODS -->\n", "<!-- end of linking methods -->"
    assert start in text and end in text
    assert text.split(start, 1)[1].split(end, 1)[0] == markdown_table()
    assert all(f"`{m.name}` ({m.display})" in markdown_table() for m in METHODS)


def test_the_link_page_names_every_method_of_the_registry() -> None:
    """docs/commands/link.md's --method row names the registry's methods, the default marked, and
    points to the generated table of docs/methods.md for their parameters."""
    page = (REPO / "docs" / "commands" / "link.md").read_text(encoding="utf-8")
    [row] = [line for line in page.splitlines() if line.startswith("| `--method M` |")]
    assert re.findall(r"`([a-z]+)`(?: \(default\))?", row.split("|")[2]) == list(METHODS.names())
    assert "`mlmcg` (default)" in row and "../methods.md#linking-methods" in row


# --- a new method (tests/new_entries.py): one definition and one registration -------------------


def test_a_registered_method_works_at_every_door(demo_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from elquery.indexing.demo import demo_artefacts

    monkeypatch.setenv("ELQUERY_CACHE", str(demo_cache))
    monkeypatch.setattr(METHODS, "_entries", {**METHODS._entries, SQUARED.name: SQUARED})
    index, surface_forms = demo_artefacts()
    query = "new york pizza manhattan"
    expected = [ScoredMention(c.mention, c.entity, c.commonness ** 2, c.commonness)
                for c in cmns_candidates(surface_forms, query)]
    assert expected
    with Linker(index, surface_forms, "cmns2") as linker:
        assert list(linker.result(query).scored) == expected
        assert linker.describe() == "GIF-CMNS² (c=0.2, s=0.05)"
    capsys.readouterr()
    assert elquery(["link", query, "--method", "cmns2", "--format", "jsonl"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [m["score"] for m in record["mentions"]] == [t.score for t in expected]
    assert "cmns2" in {a.dest: a for a in link_parser()._actions}["method"].choices
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": FORMAT, "methods": {"cmns2": {"gif_threshold": 0.5}}}))
    assert load_params(params).of("cmns2").gif_threshold == 0.5  # type: ignore[union-attr]
    config = tmp_path / "experiment.toml"
    config.write_text(config_text("cmns2", {"commonness_threshold": [0.2, 0.5]}))
    spec = load_config(config).interpretation_finding
    assert spec is not None and spec.methods[0].label == "GIF-CMNS²"


def cmns_candidates(surface_forms: Path, query: str) -> list:
    from elquery.indexing.normalize import query_tokens
    from elquery.indexing.surface_forms.store import SurfaceFormStore
    from elquery.linking.mentions import detect

    with SurfaceFormStore(surface_forms) as store:
        tokens = query_tokens(query)
        return detect(tokens, store.lookup_spans(tokens), 0.2)


def test_ranking_inputs_reach_the_method(demo_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Linker hands a method its resolved parameters, whitelist and query limit."""
    from elquery.indexing.demo import demo_artefacts

    seen: list[RankingInputs] = []

    def ranking(inputs: RankingInputs) -> SquaredRanking:
        seen.append(inputs)
        return SquaredRanking(inputs)

    monkeypatch.setenv("ELQUERY_CACHE", str(demo_cache))
    probe = LinkingMethod(**{**{f.name: getattr(SQUARED, f.name) for f in fields(LinkingMethod)},
                             "name": "probe", "ranking": ranking})
    monkeypatch.setattr(METHODS, "_entries", {**METHODS._entries, "probe": probe})
    index, surface_forms = demo_artefacts()
    with Linker(index, surface_forms, "probe", gif_threshold=1, whitelist=["<dbpedia:Manhattan>"], max_query_tokens=9):
        pass
    [inputs] = seen
    assert inputs.values == {"commonness_threshold": 0.2, "gif_threshold": 1.0}
    assert inputs.whitelist == frozenset({"<dbpedia:Manhattan>"}) and inputs.max_query_tokens == 9
    assert inputs.artefacts == {"surface_forms": surface_forms}
