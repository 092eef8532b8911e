"""The service enumerates and validates through the registries (issue 28.5): /link, /nif and /rank
refuse what ``elquery link`` and ``elquery rank`` refuse, with the same message; the OpenAPI
schema's enums and defaults, the page's method menu and /stats's thresholds are the registries'
entries the service serves; a method's parameters given in a request reach its linker."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from elquery.base import run
from elquery.linking.cli import register as register_link
from elquery.retrieval.cli import register as register_rank
from elquery.retrieval.models import DEFAULT_K, MODELS
from elquery.serve.app import Artefacts, Limits, create_app


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("elquery-cache-serve-registries"))


@pytest.fixture(scope="module")
def demo(cache: str) -> tuple[Path, Path, Path]:
    """The demo KB's index, surface forms and TAGME artefact."""
    from elquery.indexing.demo import demo_artefacts, demo_tagme

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", cache)
        index, surface_forms = demo_artefacts()
        return index, surface_forms, demo_tagme()


@pytest.fixture(scope="module")
def client(demo: tuple[Path, Path, Path]) -> TestClient:
    """The service over the demo KB with its TAGME artefact, as ``elquery serve`` serves it."""
    return TestClient(create_app(Artefacts(*demo, demo_thresholds=True), Limits(max_batch=5)))


@pytest.fixture(scope="module")
def plain(demo: tuple[Path, Path, Path]) -> TestClient:
    """The service over the demo KB without TAGME."""
    return TestClient(create_app(Artefacts(demo[0], demo[1], demo_thresholds=True)))


def cli_message(register: Callable[[Any], None], argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of a command refusing ``argv`` (exit status 2), without what only the
    command line says: the program, the option (``argument --method:``) and where the help is."""
    try:
        status = run([register], "elquery", argv)
    except SystemExit as exit:  # an argparse mistake
        status = int(exit.code or 0)
    error = capsys.readouterr().err
    assert status == 2 and error.count("\n") == 1, error
    found = re.fullmatch(r"elquery(?: \w+)?: error: (?:argument [-\w/]+: )?(.*?)(?:; see `elquery \w+ --help`)?\n",
                         error)
    assert found is not None, error
    return found.group(1)


# (request parameters, the same given to `elquery link`)
LINK_REFUSED = [
    ({"method": "nope"}, ["--method", "nope"]),
    ({"gif_threshold": "-1"}, ["--gif-threshold", "-1"]),
    ({"gif_threshold": "x"}, ["--gif-threshold", "x"]),
    ({"commonness_threshold": "2"}, ["--commonness-threshold", "2"]),
    ({"method": "cmns", "commonness_threshold": "nan"}, ["--method", "cmns", "--commonness-threshold", "nan"]),
    ({"method": "tagme", "rho_na": "-0.5"}, ["--method", "tagme", "--tagme-param", "rho_na=-0.5"]),
    ({"method": "tagme", "epsilon": "0"}, ["--method", "tagme", "--tagme-param", "epsilon=0"]),
]


def cases(table: list[tuple[dict, list[str]]]) -> list[Any]:
    """The refused values, named by their options."""
    return [pytest.param(values, argv, id=" ".join(argv))
            for values, argv in table]


@pytest.mark.parametrize(("values", "argv"), cases(LINK_REFUSED))
def test_link_refuses_what_elquery_link_refuses_with_its_message(client: TestClient, cache: str, values: dict,
                                                                  argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ELQUERY_CACHE", cache)
    expected = cli_message(register_link, ["link", "new york pizza", *argv], capsys)
    for answer in (client.get("/link", params={"q": "new york pizza", **values}),
                   client.post("/link", json={"q": "new york pizza", **values})):
        assert (answer.status_code, answer.json()) == (422, {"error": expected})


@pytest.mark.parametrize(("values", "argv"), cases(LINK_REFUSED[:3]))
def test_nif_refuses_what_elquery_link_refuses_with_its_message(client: TestClient, cache: str, values: dict,
                                                                 argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ELQUERY_CACHE", cache)
    expected = cli_message(register_link, ["link", "new york pizza", *argv], capsys)
    answer = client.post("/nif", params=values, content=NIF_DOCUMENT.encode(), headers={"content-type": "text/turtle"})
    assert (answer.status_code, answer.json()) == (422, {"error": expected})


NIF_DOCUMENT = """@prefix nif: <http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#> .
<http://example.org/doc1#char=0,14> a nif:Context ; nif:isString "new york pizza" .
"""

# (request body, the same given to `elquery rank`)
RANK_REFUSED = [
    ({"model": "bm52"}, ["--model", "bm52"]),
    ({"model": "bm25", "params": "k1=-1"}, ["--model", "bm25", "--param", "k1=-1"]),
    ({"model": "sdm", "params": ["depth=3"]}, ["--model", "sdm", "--param", "depth=3"]),
    ({"model": "fsdm", "params": ["window=2.5", "mu.names=5"]}, ["--model", "fsdm", "--param", "window=2.5",
                                                                  "--param", "mu.names=5"]),
    ({"params": "lambda"}, ["--param", "lambda"]),
    ({"model": "mlm", "links": []}, ["--model", "mlm", "--links", "links.tsv"]),
]


@pytest.mark.parametrize(("body", "argv"), RANK_REFUSED, ids=[" ".join(argv) for _, argv in RANK_REFUSED])
def test_rank_refuses_what_elquery_rank_refuses_with_its_message(client: TestClient, tmp_path: Path, body: dict,
                                                                  argv: list[str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # neither the index nor the queries exist: the command checks the model and its parameters first
    paths = ["--index", str(tmp_path / "index"), "--queries", str(tmp_path / "q.tsv"), "--out", str(tmp_path / "run")]
    expected = cli_message(register_rank, ["rank", *paths, *argv], capsys)
    answer = client.post("/rank", json={"q": "new york pizza", **body})
    assert (answer.status_code, answer.json()) == (422, {"error": expected})
    if "links" not in body:
        answer = client.get("/rank", params={"q": "new york pizza", **body})
        assert (answer.status_code, answer.json()) == (422, {"error": expected})


@pytest.mark.parametrize(("values", "status", "message"), [
    ({"method": "ltr"}, 422, "method ltr: the service was started without --model"),
    ({"method": "cmns", "rho_na": "0.2"}, 422,
     "cmns has no parameter rho_na; its parameters are commonness_threshold, gif_threshold"),
    ({"top_ranked": "maybe"}, 422, "top_ranked must be true or false, got 'maybe'"),
    ({"method": "tagme", "top_ranked": "true"}, 422, "tagme finds its own interpretations; TopRanked does not apply"),
])
def test_link_refuses_what_the_service_cannot_do_in_one_line(client: TestClient, values: dict, status: int,
                                                             message: str) -> None:
    answer = client.get("/link", params={"q": "new york pizza", **values})
    assert (answer.status_code, answer.json()) == (status, {"error": message})


def test_tagme_needs_the_artefact_the_service_was_started_without(plain: TestClient) -> None:
    answer = plain.get("/link", params={"q": "new york pizza", "method": "tagme"})
    assert answer.json() == {"error": "method tagme: the service was started without --tagme"}


def test_a_methods_parameters_reach_its_linker_as_on_the_command_line(client: TestClient, cache: str,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """TAGME's rho_na and CMNS's thresholds given in a request link as the same options of
    ``elquery link`` (the demo KB), and change what is linked."""
    monkeypatch.setenv("ELQUERY_CACHE", cache)
    query = "woody allen manhattan"
    for values, argv in (({"method": "tagme", "rho_na": "1.1"}, ["--method", "tagme", "--tagme-param", "rho_na=1.1"]),
                         ({"method": "cmns", "gif_threshold": "0.9", "commonness_threshold": "0.5"},
                          ["--method", "cmns", "--gif-threshold", "0.9", "--commonness-threshold", "0.5"])):
        served = client.get("/link", params={"q": query, **values}).json()["results"]
        assert run([register_link], "elquery", ["link", query, "--format", "jsonl", *argv]) == 0
        assert served == [json.loads(capsys.readouterr().out)]
        default = client.get("/link", params={"q": query, "method": values["method"]}).json()["results"]
        assert served != default


def _rank_option(dest: str) -> argparse.Action:
    """The option of ``elquery rank`` that sets ``dest``."""
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    register_rank(commands)
    return next(action for action in commands.choices["rank"]._actions if action.dest == dest)


def _parameters(schema: dict, path: str) -> dict[str, dict]:
    return {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}


def test_the_openapi_schema_names_the_registries_entries_and_defaults(client: TestClient, plain: TestClient) -> None:
    served = client.get("/openapi.json").json()
    link = _parameters(served, "/link")
    assert link["method"]["schema"] == {"type": "string", "enum": ["cmns", "mlm", "mlmc", "mlmcg", "tagme"],
                                        "default": "mlmcg"}
    assert _parameters(plain.get("/openapi.json").json(), "/link")["method"]["schema"]["enum"] == [
        "cmns", "mlm", "mlmc", "mlmcg"]
    assert link["commonness_threshold"]["schema"] == {"type": "number", "minimum": 0, "maximum": 1}
    assert link["gif_threshold"]["schema"] == {"type": "number", "minimum": 0}
    assert "mlmcg: default 20, demo KB 0.25" in link["gif_threshold"]["description"]
    assert link["rho_na"]["schema"] == {"type": "number", "minimum": 0, "default": 0.1}
    assert link["epsilon"]["schema"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.3}
    assert link["top_ranked"]["schema"] == {"type": "boolean", "default": False}
    assert "queries" not in link  # a list or an object: a JSON body's only
    body = served["paths"]["/link"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert {"q", "queries", "method", "gif_threshold", "rho_na", "top_ranked"} <= set(body)
    # /rank: the models and k as `elquery rank` has them
    rank = _parameters(served, "/rank")
    model = _rank_option("model")
    assert rank["model"]["schema"] == {"type": "string", "enum": list(model.choices or ()), "default": model.default}
    assert list(model.choices or ()) == list(MODELS.names()) and model.default == "mlm"
    k = _rank_option("k").default
    assert rank["k"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 1000, "default": k} and k == DEFAULT_K
    assert "fsdm-elr: " in rank["params"]["description"] and "lambda.E (0.1)" in rank["params"]["description"]
    nif = served["paths"]["/nif"]["post"]
    assert [p["name"] for p in nif["parameters"]][:3] == ["method", "commonness_threshold", "gif_threshold"]
    assert list(nif["requestBody"]["content"]) == ["text/turtle"]


def test_rank_defaults_k_within_the_services_bound(demo: tuple[Path, Path, Path]) -> None:
    """k not given is DEFAULT_K as everywhere, or the service's bound where that is lower; a k
    that is no whole number is refused (it was cut to one)."""
    small = TestClient(create_app(Artefacts(demo[0], demo[1], demo_thresholds=True), Limits(max_k=3)))
    assert [len(r["ranking"]) for r in small.get("/rank", params={"q": "new york"}).json()["results"]] == [3]
    refused = small.get("/rank", params={"q": "new york", "k": "1.5"})
    assert (refused.status_code, refused.json()) == (422, {"error": "k must be a whole number, got '1.5'"})


def _menu(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<option value="([^"]+)">([^<]+)</option>', page)


def test_the_pages_menu_is_the_methods_the_service_serves(client: TestClient, plain: TestClient) -> None:
    assert _menu(plain.get("/").text) == [("mlmcg", "MLMcg"), ("cmns", "CMNS"), ("mlm", "MLM"), ("mlmc", "MLMc")]
    page = client.get("/").text
    assert _menu(page) == [("mlmcg", "MLMcg"), ("cmns", "CMNS"), ("mlm", "MLM"), ("mlmc", "MLMc"), ("tagme", "TAGME")]
    settings = json.loads(re.search(r'id="settings">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert settings["labels"] == {"mlmcg": "GIF-MLMcg", "cmns": "GIF-CMNS", "mlm": "GIF-MLM", "mlmc": "GIF-MLMc",
                                  "tagme": "TAGME"}
    assert settings["thresholds"]["tagme"] == {"rho_na": {"value": 0.1, "origin": "default"}}
    assert client.get("/stats").json()["thresholds"] == settings["thresholds"]
