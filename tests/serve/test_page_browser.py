"""The web page in a real headless Chromium (driven by Selenium): type a query, press Link, see
the linked mentions highlighted with their entities; a screenshot is saved beside the test's
temporary files."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from elquery.indexing.demo import demo_artefacts
from elquery.serve.app import Artefacts, create_app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                                reason="no Chromium and chromedriver (apt-get install chromium chromium-driver)")


@pytest.fixture()
def server(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    import uvicorn

    monkeypatch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-page")))
    index, surface_forms = demo_artefacts()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(Artefacts(index, surface_forms, demo_thresholds=True)), host="127.0.0.1",
                            port=port, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    running.should_exit = True
    thread.join(timeout=10)


def test_typing_a_query_highlights_the_linked_entities(server: str, tmp_path: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1000,700"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
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
    finally:
        browser.quit()
