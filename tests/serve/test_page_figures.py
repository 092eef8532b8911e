"""The service's page shows the figures of the experiment whose tuned thresholds it serves
(``elquery serve --params DIR/params.json``): each tuned method's F against s, the cross-validated
choice starred, inline on the page, and /figures/NAME.svg|png serve that directory's figure files.
In a real headless Chromium (Selenium): the figure elements are drawn on the page (a screenshot is
saved beside the test's temporary files), and the experiment's results.html shows every figure
from its own folder, offline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from elquery.experiments import run_experiment
from elquery.indexing.demo import demo_artefacts
from elquery.linking.params import load_params
from elquery.serve.app import Artefacts, create_app
from in_browser import chromium, needs_chromium, serving  # tests/serve is on the path

CONFIG = Path(__file__).resolve().parents[2] / "elquery" / "experiments" / "configs" / "demo.toml"
TUNED = ["sweep-if-GIF-CMNS", "sweep-if-GIF-MLMcg"]  # the demo's GIF methods, in params.json


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo experiment's folder: tables, params.json and figures."""
    out = tmp_path_factory.mktemp("page-figures") / "out"
    run_experiment(CONFIG, out, progress=False)
    return out


@pytest.fixture(scope="module")
def artefacts(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Artefacts:
    index, surface_forms = demo_artefacts()
    return Artefacts(index, surface_forms, demo_thresholds=True, params=load_params(run_dir / "params.json"))


def test_the_page_inlines_the_tuned_methods_sweeps(artefacts: Artefacts, run_dir: Path) -> None:
    client = TestClient(create_app(artefacts))
    page = client.get("/").text
    for name in TUNED:
        assert f'data-figure="{name}"' in page
        svg = (run_dir / "figures" / f"{name}.svg").read_text()
        assert svg[svg.index("<svg"):] in page  # the same figure as the experiment's file
        assert f'href="/figures/{name}.png"' in page
    assert 'data-figure="difference-if-GIF-MLMcg"' not in page  # sweeps of the tuned methods only


def test_the_figure_route_serves_the_run_directorys_files(artefacts: Artefacts, run_dir: Path) -> None:
    client = TestClient(create_app(artefacts))
    for name in ("sweep-if-GIF-MLMcg", "difference-sm-MLMcg"):
        svg = client.get(f"/figures/{name}.svg")
        assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
        assert svg.content == (run_dir / "figures" / f"{name}.svg").read_bytes()
        png = client.get(f"/figures/{name}.png")
        assert png.headers["content-type"] == "image/png"
        assert png.content == (run_dir / "figures" / f"{name}.png").read_bytes()
    for name in ("figures.json", "nothing.svg", "sweep-if-GIF-MLMcg.pdf", "params.json", "..svg"):
        refused = client.get(f"/figures/{name}")
        assert refused.status_code == 404 and refused.json()["error"].startswith(f"no figure '{name}'"), name
    for name in ("..%2Fparams.json", "..%2F..%2Fresults.md"):  # no path out of the figures
        refused = client.get(f"/figures/{name}")
        assert refused.status_code == 404 and b"elquery" not in refused.content, name


def test_without_params_no_figure(run_dir: Path) -> None:
    index, surface_forms = demo_artefacts()
    client = TestClient(create_app(Artefacts(index, surface_forms, demo_thresholds=True)))
    assert 'id="figures"' not in client.get("/").text
    assert client.get("/figures/sweep-if-GIF-MLMcg.svg").status_code == 404


# --- in Chromium --------------------------------------------------------------------------------

@pytest.fixture()
def server(artefacts: Artefacts) -> Iterator[str]:
    with serving(create_app(artefacts)) as url:
        yield url + "/"


@pytest.fixture()
def browser() -> Iterator[object]:
    with chromium("1000,1400") as driver:
        yield driver


@needs_chromium
def test_chromium_draws_the_figures_on_the_page(server: str, browser: Any, run_dir: Path, tmp_path: Path) -> None:
    import json

    from selenium.webdriver.common.by import By

    browser.get(server)
    figures = browser.find_elements(By.CSS_SELECTOR, "#figures figure")
    assert [f.get_attribute("data-figure") for f in figures] == TUNED
    index = {f["name"]: f for f in json.loads((run_dir / "figures" / "figures.json").read_text())["figures"]}
    for element in figures:
        svg = element.find_element(By.TAG_NAME, "svg")
        assert svg.size["width"] > 300 and svg.size["height"] > 200  # laid out, not an empty box
        for panel in index[element.get_attribute("data-figure")]["panels"]:
            for series in panel["series"]:  # every line and the starred choice are drawn elements
                drawn = element.find_element(By.CSS_SELECTOR, f'[id="{series["id"]}"]')
                assert drawn.find_elements(By.CSS_SELECTOR, "path, use")
                assert drawn.size["width"] > 0 or drawn.size["height"] > 0
    stars = browser.find_element(By.CSS_SELECTOR, '[id="sweep-if-GIF-MLMcg--s--chosen--0"]')
    assert stars.find_elements(By.CSS_SELECTOR, "use, path")
    browser.find_element(By.CSS_SELECTOR, "#figures").location_once_scrolled_into_view
    browser.save_screenshot(str(tmp_path / "page-figures.png"))
    assert (tmp_path / "page-figures.png").stat().st_size > 1000


@needs_chromium
def test_chromium_opens_the_html_report_offline(browser: Any, run_dir: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get((run_dir / "results.html").as_uri())
    images = browser.find_elements(By.TAG_NAME, "img")
    assert len(images) == 6
    for image in images:  # every figure loaded from the folder (a missing file has no natural width)
        assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) > 300
    assert browser.find_elements(By.CSS_SELECTOR, "table")
    browser.save_screenshot(str(tmp_path / "results-html.png"))
    assert (tmp_path / "results-html.png").stat().st_size > 1000
