"""The service with tuned thresholds and its page (issue 27, item 9): `elquery serve --params FILE`
links as `elquery link --params FILE` (the params file of a real run of the demo config); /stats
and the page at / say where each threshold comes from; the page starts with a query that links on
the served knowledge base (the real DBpedia sample, not the demo query); a bad params file is one
line, exit 2, before the server starts."""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from elquery.base import run
from elquery.experiments.cli import register as register_experiment
from elquery.linking.cli import register as register_link
from elquery.linking.params import FORMAT, load_params
from elquery.serve.app import Artefacts, create_app
from elquery.serve.cli import register as register_serve
from elquery.serve.example import DEMO_QUERY

CONFIGS = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs"
QUERIES = json.loads((CONFIGS / "demo" / "queries.json").read_text())
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The demo KB's index and surface forms, and the params.json of a run of the demo config."""
    from elquery.indexing.demo import demo_artefacts

    cache = tmp_path_factory.mktemp("elquery-cache-serve-params")
    folder = tmp_path_factory.mktemp("demo-experiment")
    shutil.copytree(CONFIGS / "demo", folder / "demo")
    shutil.copyfile(CONFIGS / "demo.toml", folder / "demo.toml")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(cache))
        index, surface_forms = demo_artefacts()
        assert run([register_experiment], "elquery", ["experiment", str(folder / "demo.toml"),
                                                      "--out", str(folder / "out")]) == 0
    return index, surface_forms, folder / "out" / "params.json"


def settings_of(page: str) -> dict:
    found = re.search(r'<script type="application/json" id="settings">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def cli_records(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(QUERIES))
    out = tmp_path / "cli.jsonl"
    assert run([register_link], "elquery", ["link", "--queries", str(queries), "--format", "jsonl",
                                            "--out", str(out), *args]) == 0
    capsys.readouterr()
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("method", ["mlmcg", "cmns"])
def test_the_service_links_with_the_params_file_as_link_does(demo: tuple[Path, Path, Path], method: str,
                                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    index, surface_forms, params = demo
    client = TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True, params=load_params(params))))
    served = client.post("/link", json={"queries": QUERIES, "method": method}).json()["results"]
    cli = cli_records(["--index", str(index), "--surface-forms", str(surface_forms), "--method", method,
                       "--params", str(params)], tmp_path, capsys)
    assert served == [{k: v for k, v in r.items() if k != "provenance"} for r in cli]
    tuned = json.loads(params.read_text())["methods"][method]
    thresholds = client.get("/stats").json()["thresholds"]
    assert thresholds[method] == {"c": {"value": tuned["commonness_threshold"], "origin": f"params file {params}"},
                                  "s": {"value": tuned["gif_threshold"], "origin": f"params file {params}"}}
    assert thresholds["mlm"]["s"] == {"value": 1.0, "origin": "demo default"}
    assert client.get("/stats").json()["params"] == str(params)


def test_a_tuned_threshold_changes_what_the_service_links(demo: tuple[Path, Path, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    index, surface_forms, _ = demo
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": FORMAT, "methods": {"mlmcg": {"gif_threshold": 5}}}))
    tuned = TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True, params=load_params(params))))
    plain = TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True)))
    served = tuned.post("/link", json={"queries": QUERIES}).json()["results"]
    given = cli_records(["--index", str(index), "--surface-forms", str(surface_forms), "--gif-threshold", "5"],
                        tmp_path, capsys)
    assert served == [{k: v for k, v in r.items() if k != "provenance"} for r in given]
    assert served != plain.post("/link", json={"queries": QUERIES}).json()["results"]
    # a request's own threshold still wins
    one = {"q": QUERIES["demo_1"], "gif_threshold": "0.25"}
    assert tuned.get("/link", params=one).json() == plain.get("/link", params=one).json()


def test_the_demo_page_starts_with_the_demo_query_and_its_threshold_origins(demo: tuple[Path, Path, Path]) -> None:
    index, surface_forms, params = demo
    page = TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True))).get("/").text
    settings = settings_of(page)
    assert (settings["query"], settings["method"], settings["links"]) == (DEMO_QUERY, "mlmcg", True)
    assert f'value="{DEMO_QUERY}"' in page
    assert settings["thresholds"]["mlmcg"] == {"c": {"value": 0.1, "origin": "default"},
                                               "s": {"value": 0.25, "origin": "demo default"}}


def test_the_page_starts_with_a_query_that_links_on_the_served_kb(sample_link_artefacts: tuple[Path, Path]) -> None:
    """Over the real DBpedia sample (no demo entity in it), the page's query is a surface form of
    one of its entities, and linking it with the page's method finds an interpretation."""
    from elquery.indexing.surface_forms.store import SurfaceFormStore

    index, surface_forms = sample_link_artefacts
    client = TestClient(create_app(Artefacts(index, surface_forms)))
    page = client.get("/").text
    settings = settings_of(page)
    assert settings["query"] != DEMO_QUERY and settings["links"] is True
    assert f'value="{settings["query"]}"' in page
    answer = client.get("/link", params={"q": settings["query"], "method": settings["method"]}).json()["results"][0]
    assert answer["interpretations"]
    with SurfaceFormStore(surface_forms) as store:
        entities = {a["entity"] for i in answer["interpretations"] for a in i["annotations"]}
        assert any(settings["query"] in {alias.form for alias in store.aliases(e)} for e in entities)
    assert settings["thresholds"]["mlmcg"]["s"] == {"value": 20.0, "origin": "default"}


def test_a_bad_params_file_stops_serve_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": FORMAT, "methods": {"mlmcg": {"gif_threshold": -1}}}))
    assert run([register_serve], "elquery", ["serve", "--params", str(params), "--port", "1"]) == 2
    assert capsys.readouterr().err == (f"elquery: error: {params}: methods.mlmcg: gif_threshold must be "
                                       "0 <= gif_threshold, got -1\n")
    assert run([register_serve], "elquery", ["serve", "--params", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.skipif(CHROMIUM is None or DRIVER is None, reason="no Chromium and chromedriver")
def test_the_page_shows_where_the_thresholds_come_from(demo: tuple[Path, Path, Path]) -> None:
    """In a real browser: the line under the form names each threshold's origin for the chosen
    method, and a typed threshold as given."""
    import uvicorn
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    index, surface_forms, params = demo
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(Artefacts(index, surface_forms, demo_thresholds=True, params=load_params(params)))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        browser.get(f"http://127.0.0.1:{port}/")
        assert browser.find_element(By.ID, "q").get_attribute("value") == DEMO_QUERY
        line = browser.find_element(By.ID, "thresholds")
        assert line.text == (f"GIF-MLMcg thresholds: s = 0.1 (params file {params}), "
                             f"c = 0.1 (params file {params})")
        Select(browser.find_element(By.ID, "method")).select_by_value("mlm")
        assert line.text == "GIF-MLM thresholds: s = 1 (demo default), c = 0 (default)"
        browser.find_element(By.ID, "s").send_keys("3")
        assert line.text == "GIF-MLM thresholds: s = 3 (given), c = 0 (default)"
    finally:
        browser.quit()
        server.should_exit = True
        thread.join(timeout=10)
