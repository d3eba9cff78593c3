"""End to end in headless Chromium: sign in, ask, pick, confirm, against the live Radicale.

Screenshots go to test-artifacts/ (not committed). The README's screenshot is
taken from the demo calendar itself (test_demo_screenshot.py).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from resolver import services
from resolver.domain.items import Item, Kind, Method
from resolver.domain.pipeline import Outcome, Status
from tests.web.conftest import PASSWORD, XSS_COLLECTION, XSS_TITLE, page_path

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OFFSITE = "Team offsite planning"


@pytest.fixture
def page(chromium, live_server, radicale_live, alice) -> Iterator[object]:
    """A fresh browser context, signed in as alice through the login page."""
    context = chromium.new_context(viewport={"width": 800, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(15_000)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/resolve/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/resolve/")
    yield page
    context.close()
    assert dialogs == [], "a script ran on the page"


def _offsite_items() -> list[Item]:
    fetched = services.calendar_from_settings().fetch(kind=Kind.TASK, collection_ids=["work", "personal"])
    return [item for item in fetched.items if item.title == OFFSITE]


def _ask(page, text: str, collections: str) -> None:
    page.get_by_label("Reference").fill(text)
    page.get_by_label("Task").check()
    page.get_by_label("Collections (optional)").fill(collections)
    page.get_by_role("button", name="Find").click()
    page.wait_for_url(re.compile(r".*/resolve/clarify/[^/]+/$"))


def test_browser__ask_pick_and_confirm(page, artifacts: Path) -> None:
    expected = {item.collection_id: item for item in _offsite_items()}
    _ask(page, OFFSITE, "work personal")

    group = page.get_by_role("group", name=re.compile("Choose one"))
    radios = group.get_by_role("radio")
    assert radios.count() == 2
    assert page.get_by_role("radio", name=re.compile(OFFSITE)).count() == 2
    page.screenshot(path=str(artifacts / "clarification-page.png"), full_page=True)

    page.get_by_role("listitem").filter(has_text="Collection: personal").get_by_role("radio").check()
    page.get_by_role("button", name="Use this item").click()
    page.wait_for_selector("h1:text('Item found')")
    page.screenshot(path=str(artifacts / "confirmation.png"), full_page=True)

    chosen = expected["personal"]
    assert page.locator('[data-field="item_id"]').inner_text() == chosen.item_id
    assert page.locator('[data-field="etag"]').inner_text() == chosen.etag
    assert page.locator('[data-field="method"]').get_attribute("data-method") == Method.USER_SELECTED.value
    assert page.locator('[data-field="method"]').inner_text() == "You picked this item."


def test_browser__keyboard_only(page) -> None:
    """Tab to the choices, pick with the arrow keys, submit with Enter; focus stays visible."""
    _ask(page, OFFSITE, "work personal")
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "item_id":
            break
    else:
        pytest.fail("the candidates cannot be reached with Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")
    page.keyboard.press("ArrowDown")
    chosen = page.evaluate("document.activeElement.value")
    assert page.evaluate("document.activeElement.checked")
    page.keyboard.press("Enter")
    page.wait_for_selector("h1:text('Item found')")
    assert page.locator('[data-field="item_id"]').inner_text() == chosen


def test_browser__readable_on_a_phone(page) -> None:
    page.set_viewport_size({"width": 360, "height": 740})
    _ask(page, OFFSITE, "work personal")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    box = page.get_by_role("radio").first.bounding_box()
    row = page.locator("li.choice").first.bounding_box()
    assert box is not None and row is not None and row["height"] >= 44  # a finger-sized target


def test_browser__calendar_titles_are_text(page, webxss) -> None:
    _ask(page, XSS_TITLE, XSS_COLLECTION)
    assert page.locator("main img").count() == 0
    assert page.locator(".choice-title").get_by_text(XSS_TITLE).count() == 2
    assert page.locator("[data-field=typed] q").inner_text() == XSS_TITLE  # what was typed, as text too
    # The `page` fixture fails the test if any dialog (alert) was opened.


def test_browser__suggestion_is_marked(page, alice, live_server, artifacts: Path) -> None:
    """The page as it looks when Jev answered."""
    work, personal = sorted(_offsite_items(), key=lambda item: item.collection_id, reverse=True)
    outcome = Outcome(
        request_id="req_readme", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=Method.SEMANTIC,
        candidates=(work, personal), probabilities={work.item_id: 0.62, personal.item_id: 0.31},
        suggested_item_id=work.item_id, collection_ids=("personal", "work"),
    )
    page.goto(live_server.url + page_path(outcome, alice.pk))
    suggested = page.locator("li.choice-suggested")
    assert suggested.count() == 1
    assert "Suggested" in suggested.inner_text() and "Collection: work" in suggested.inner_text()
    page.screenshot(path=str(artifacts / "clarification-suggested.png"), full_page=True)


def test_browser__the_occurrence_shown_is_the_occurrence_picked(page, artifacts: Path) -> None:
    """"sync on <the week after next>": the card shows that week (not "next"); the pick confirms it."""
    from datetime import datetime

    from tests.support.calendars import weekly_sync_start

    named, next_one = weekly_sync_start(2), weekly_sync_start(0)
    page.get_by_label("Reference").fill(f"sync on {named:%Y-%m-%d}")
    page.get_by_label("Event").check()
    page.get_by_label("Collections (optional)").fill("work")
    page.get_by_label("Time zone (optional)").fill("UTC")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url(re.compile(r".*/resolve/clarify/[^/]+/$"))

    card = page.locator("li.choice")
    assert card.count() == 1
    assert f"Occurrence: {named:%a %d %b %Y, %H:%M} UTC" in card.inner_text()
    assert "Next" not in card.inner_text()
    page.screenshot(path=str(artifacts / "clarification-occurrence.png"), full_page=True)

    card.get_by_role("radio").check()
    page.get_by_role("button", name="Use this item").click()
    page.wait_for_selector("h1:text('Item found')")
    shown = page.locator('[data-field="occurrence"]').get_attribute("datetime")
    assert datetime.fromisoformat(shown) == named != next_one
    assert page.locator('[data-field="recurrence_id"]').inner_text()
