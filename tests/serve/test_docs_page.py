"""The generated API documentation: ``/docs`` renders every operation in a real headless Chromium
with no request leaving loopback (its assets are served from the installed package, not a CDN),
and the OpenAPI schema has one operation id per operation."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi.testclient import TestClient

from elquery.indexing.demo import demo_artefacts
from elquery.serve.app import Artefacts, create_app
from in_browser import chromium, needs_chromium, serving  # tests/serve is on the path

METHODS = ("get", "post", "put", "delete", "patch")


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Artefacts:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ELQUERY_CACHE", str(tmp_path_factory.mktemp("elquery-cache-docs")))
        return Artefacts(*demo_artefacts())


def operations(schema: dict) -> list[tuple[str, str, str]]:  # type: ignore[type-arg]
    """(METHOD, path, operationId) of every operation of an OpenAPI schema."""
    return [(method.upper(), path, operation.get("operationId", ""))
            for path, item in schema["paths"].items() for method, operation in item.items() if method in METHODS]


def test_the_schema_has_a_unique_operation_id_per_operation_and_no_warning(artefacts: Artefacts) -> None:
    app = create_app(artefacts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        schema = app.openapi()
    found = operations(schema)
    ids = [operation_id for _, _, operation_id in found]
    assert all(ids) and len(ids) == len(set(ids)), ids
    # GET and POST of the endpoints that take both are two operations, each documented
    for path in ("/link", "/rank", "/tag", "/spot"):
        assert {method for method, p, _ in found if p == path} == {"GET", "POST"}
    # the schema served is the one generated, and a second generation warns no more than the first
    client = TestClient(app)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert client.get("/openapi.json").json() == json.loads(json.dumps(schema))


def test_the_docs_page_names_only_assets_it_serves_itself(artefacts: Artefacts) -> None:
    """Every script, style sheet and icon of /docs and /redoc is a URL of the service itself that
    answers 200 (checked without a browser, so it holds where Chromium is not installed)."""
    client = TestClient(create_app(artefacts), base_url="http://127.0.0.1:8080")
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200
        assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html.text)
        assets += re.findall(r"""url:\s*["']([^"']+)["']""", html.text)
        assert any(a.endswith(".js") for a in assets), (page, assets)
        for asset in assets:
            url = urljoin(f"http://127.0.0.1:8080{page}", asset)
            assert urlsplit(url).netloc == "127.0.0.1:8080", (page, asset)
            response = client.get(url)
            assert response.status_code == 200, (page, asset)
            assert len(response.content) > 100


@pytest.fixture()
def server(artefacts: Artefacts) -> Iterator[str]:
    with serving(create_app(artefacts)) as url:
        yield url


@needs_chromium
def test_docs_renders_every_operation_offline_in_chromium(server: str, artefacts: Artefacts, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    # offline: no host name resolves but the loopback address
    with chromium("1200,2400", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                  performance_log=True) as browser:
        browser.get(server + "/docs")
        WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, ".opblock"))
        rendered = {(block.find_element(By.CSS_SELECTOR, ".opblock-summary-method").text,
                     block.find_element(By.CSS_SELECTOR, ".opblock-summary-path").get_attribute("data-path"))
                    for block in browser.find_elements(By.CSS_SELECTOR, ".opblock")}
        expected = {(method, path) for method, path, _ in operations(create_app(artefacts).openapi())}
        assert rendered == expected
        browser.save_screenshot(str(tmp_path / "docs.png"))
        requested = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
        urls = [m["params"]["request"]["url"] for m in requested if m["method"] == "Network.requestWillBeSent"]
    assert any(url.endswith("/openapi.json") for url in urls)
    left = [url for url in urls if urlsplit(url).scheme not in ("data", "blob")
            and not url.startswith(server + "/")]
    assert left == []
