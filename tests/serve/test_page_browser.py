"""The web page in a real headless Chromium (driven by Selenium): type a query, press Link, see
the linked mentions highlighted with their entities; a screenshot is saved beside the test's
temporary files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elquery.indexing.demo import demo_artefacts
from elquery.serve.app import Artefacts, create_app
from in_browser import chromium, needs_chromium, serving  # tests/serve is on the path

pytestmark = needs_chromium


@pytest.fixture()
def server(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-page")))
    index, surface_forms = demo_artefacts()
    with serving(create_app(Artefacts(index, surface_forms, demo_thresholds=True))) as url:
        yield url + "/"


def test_typing_a_query_highlights_the_linked_entities(server: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with chromium("1000,700") as browser:
        browser.get(server)
        box = browser.find_element(By.ID, "q")
        box.clear()
        box.send_keys("the music man in manhattan")
        browser.find_element(By.ID, "link").click()
        WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#query mark"))
        marks = {m.text: m.get_attribute("data-entity") for m in browser.find_elements(By.CSS_SELECTOR, "#query mark")}
        # what the API says the best interpretation links, at the characters it names
        import httpx

        query = "the music man in manhattan"
        best = httpx.get(server + "link", params={"q": query}).json()["results"][0]["interpretations"][0]
        expected = {query[a["mention"]["char_start"]:a["mention"]["char_end"]]: a["entity"] for a in best["annotations"]}
        assert marks == expected
        assert set(expected.values()) == {"<dbpedia:The_Music_Man>", "<dbpedia:Manhattan>"}
        assert browser.find_elements(By.CSS_SELECTOR, "#ranking tr")
        browser.save_screenshot(str(tmp_path / "page.png"))
        assert (tmp_path / "page.png").stat().st_size > 1000
