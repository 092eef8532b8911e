"""What the page tests share (tests/serve is on the path): an application served by uvicorn in a
thread on a free loopback port, and a headless Chromium driven by Selenium (Debian's chromium and
chromedriver; a test needing them is skipped, with the reason, where they are missing)."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                                    reason="no Chromium and chromedriver (apt-get install chromium chromium-driver)")


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served on a free loopback port while the block runs; yields ``http://127.0.0.1:PORT``."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        assert time.monotonic() < deadline, "the server did not start in 30 s"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(timeout=10)


@contextmanager
def chromium(window: str, *arguments: str, performance_log: bool = False) -> Iterator[Any]:
    """A headless Chromium of ``window`` size (``"WIDTH,HEIGHT"``) with more command-line
    ``arguments``; ``performance_log`` records the network requests (``get_log("performance")``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={window}", *arguments):
        options.add_argument(argument)
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
