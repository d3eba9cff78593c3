"""The README's screenshot, taken from the demo itself: the demo calendar, the demo user, a demo reference.

`LIFEPROJECT_README_SCREENSHOT=1 bin/test tests/browser/test_demo_screenshot.py`
rewrites docs/clarification-page.png; without it the test still checks the page
the screenshot would show.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime, timezone
from io import BytesIO
from pathlib import Path
from typing import Iterator

import pytest

from lifeproject.dev import DEMO_USER
from lifeproject.seeding import demo_collections, seed
from tests.conftest import RunningRadicale, start_radicale

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "clarification-page.png"
DEMO_PASSWORD = "demo-password-for-the-screenshot"


@pytest.fixture(scope="module")
def demo_radicale() -> Iterator[RunningRadicale]:
    """A Radicale seeded exactly as bin/run seeds the embedded default."""
    root = Path(tempfile.mkdtemp(prefix="radicale-demo-"))
    server = start_radicale(root)
    try:
        seed(server.url, server.instance.username, server.instance.password,
             demo_collections(datetime.now(timezone.utc)))
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_demo__clarification_page_for_portfolio(chromium, live_server, demo_radicale, settings,
                                                django_user_model, artifacts: Path) -> None:
    settings.RESOLVER = demo_radicale.settings()
    django_user_model.objects.create_user(DEMO_USER, password=DEMO_PASSWORD)
    context = chromium.new_context(viewport={"width": 800, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{live_server.url}/resolve/")
        page.get_by_label("Username").fill(DEMO_USER)
        page.get_by_label("Password").fill(DEMO_PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"{live_server.url}/resolve/")
        page.get_by_label("Reference").fill("portfolio")
        page.get_by_label("Task").check()
        page.get_by_role("button", name="Find").click()
        page.wait_for_selector("h1:text('Which task do you mean?')")
        titles = page.locator(".choice-title").all_inner_texts()
        assert sorted(titles) == ["Draft portfolio outline", "Review portfolio slides"]
        assert DEMO_USER in page.locator("header").inner_text()
        page.screenshot(path=str(artifacts / "demo-clarification.png"), full_page=True)
        if os.environ.get("LIFEPROJECT_README_SCREENSHOT") == "1":
            _write_readme_screenshot(page)
    finally:
        context.close()


def _write_readme_screenshot(page) -> None:
    """800 px wide, palette PNG: small enough to commit."""
    from PIL import Image

    height = page.evaluate("Math.ceil(document.querySelector('main').getBoundingClientRect().bottom) + 16")
    raw = page.screenshot(clip={"x": 0, "y": 0, "width": 800, "height": height})
    image = Image.open(BytesIO(raw)).convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    image.save(README_SCREENSHOT, optimize=True)
    assert README_SCREENSHOT.stat().st_size < 150_000
