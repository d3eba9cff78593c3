"""Real headless Chromium (the system's, never a downloaded one) through Playwright."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

# Playwright's sync API keeps an event loop in this thread; the ORM calls the
# tests make (creating users) are still synchronous and safe here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# The page tests' fixtures: users, their own Radicale, the XSS items.
from tests.web.conftest import (  # noqa: E402,F401
    alice, fast_password_hasher, page_radicale, radicale_live, webxss,
)


def _under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


# Package scope, not session: the sync API keeps its event loop running in
# the main thread while the browser is open, and tests after this folder
# (the MCP-over-HTTP ones) start event loops of their own there.
@pytest.fixture(scope="package")
def chromium() -> Iterator[object]:
    """One browser for the browser tests. Missing Chromium skips locally and fails under CI."""
    if not (shutil.which(CHROMIUM) or os.path.exists(CHROMIUM)):
        if _under_ci():
            pytest.fail(f"{CHROMIUM} is missing; browser tests must run under CI.")
        pytest.skip(f"{CHROMIUM} is missing (install Debian's chromium); set CI=true to make this fail.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
