"""Every page a person meets, in headless Chromium, at a desktop's and a phone's width.

The accounts page in each of its states (no account, one account, a failed
check); the search page's no_calendar_account notice with its link; the
single-candidate clarification and the confirmation. Screenshots go to
test-artifacts/ (not committed): look at them when a page changes.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import pytest

from tests.accounts.conftest import fresh_namespaces, household, per_user  # noqa: F401
from tests.web.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 800, "height": 900}
PHONE = {"width": 375, "height": 740}


@pytest.fixture
def browse(chromium, live_server) -> Iterator[object]:
    """open(username, viewport): a fresh context signed in through the login page."""
    contexts = []

    def open_as(username: str, viewport: dict[str, int]):
        context = chromium.new_context(viewport=viewport, locale="en-GB")
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(f"{live_server.url}/resolve/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"{live_server.url}/resolve/")
        return page

    yield open_as
    for context in contexts:
        context.close()


def _fits(page) -> None:
    """Nothing wider than the viewport: no sideways scrolling on a phone."""
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{page.url} is {overflow}px wider than the viewport"


def _box(page, selector: str) -> dict[str, float]:
    return page.locator(selector).bounding_box()


def _inputs_styled_alike(page) -> None:
    """The URL field is as wide as the other fields and has their padding (it was a tiny unstyled box)."""
    url, username = _box(page, "#id_url"), _box(page, "#id_username")
    assert url["width"] == username["width"] and url["height"] == username["height"]
    assert url["x"] == username["x"]  # below its label, not beside it
    padding = page.evaluate("getComputedStyle(document.querySelector('#id_url')).paddingLeft")
    assert padding == page.evaluate("getComputedStyle(document.querySelector('#id_username')).paddingLeft")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_accounts_page__empty_one_account_and_an_error(browse, live_server, per_user, django_user_model,  # noqa: F811
                                                       artifacts: Path, viewport) -> None:
    django_user_model.objects.create_user("grace", password=PASSWORD)
    page = browse("grace", viewport)
    name = "desktop" if viewport is DESKTOP else "phone"
    page.get_by_role("link", name="Your calendar accounts").click()
    page.wait_for_selector("h1:text('Your calendar accounts')")

    # Empty.
    assert "You have not connected a calendar account yet" in page.locator("main").inner_text()
    _inputs_styled_alike(page)
    _fits(page)
    page.screenshot(path=str(artifacts / f"accounts-empty-{name}.png"), full_page=True)

    # An error: the wrong password, said above the form; the password is not rendered back.
    url, username, password = per_user.alice
    page.get_by_label("Server URL").fill(url)
    page.get_by_label("Username", exact=True).fill(username)
    page.get_by_label("App password").fill("not it")
    page.get_by_role("button", name="Check and add").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "refused this username and password" in alert.inner_text()
    assert page.get_by_label("Server URL").input_value() == url
    assert page.get_by_label("App password").input_value() == ""
    _inputs_styled_alike(page)
    _fits(page)
    page.screenshot(path=str(artifacts / f"accounts-error-{name}.png"), full_page=True)

    # One account, with its collections.
    page.get_by_label("App password").fill(password)
    page.get_by_label("Label (optional)").fill("Home")
    page.get_by_role("button", name="Check and add").click()
    page.wait_for_selector("li.account")
    listed = page.locator("li.account").inner_text()
    assert "home/work" in listed and "home/personal" in listed
    assert page.get_by_role("alert").count() == 0
    _fits(page)
    page.screenshot(path=str(artifacts / f"accounts-one-{name}.png"), full_page=True)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_search__no_account_links_to_the_accounts_page(browse, live_server, per_user, django_user_model,  # noqa: F811
                                                       artifacts: Path, viewport) -> None:
    django_user_model.objects.create_user("grace", password=PASSWORD)
    page = browse("grace", viewport)
    page.get_by_label("Reference").fill("Quarterly report")
    page.get_by_role("button", name="Find").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    _fits(page)
    page.screenshot(path=str(artifacts / f"no-account-{'desktop' if viewport is DESKTOP else 'phone'}.png"),
                    full_page=True)
    alert.get_by_role("link", name="Connect a calendar account").click()
    page.wait_for_url(f"{live_server.url}/resolve/accounts/")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_single_candidate__one_question_preselected_then_you_picked_it(browse, live_server, radicale_live, alice,
                                                                     artifacts: Path, viewport) -> None:
    name = "desktop" if viewport is DESKTOP else "phone"
    page = browse("alice", viewport)
    _fits(page)
    page.screenshot(path=str(artifacts / f"search-{name}.png"), full_page=True)
    page.get_by_label("Reference").fill("sync")
    page.get_by_label("Event").check()
    page.get_by_label("Collections (optional)").fill("work")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url(re.compile(r".*/resolve/clarify/[^/]+/$"))

    main = page.locator("main").inner_text()
    assert [line for line in main.splitlines() if "?" in line] == ["Is this the event you mean?"]
    typed = page.locator('[data-field="typed"]')
    assert typed.locator("q").inner_text() == "sync" and typed.inner_text().startswith("You typed")
    assert _box(page, '[data-field="typed"]')["y"] < _box(page, ".choices")["y"]
    radio = page.get_by_role("radio")
    assert radio.count() == 1 and radio.is_checked()
    _fits(page)
    page.screenshot(path=str(artifacts / f"single-candidate-{name}.png"), full_page=True)

    page.get_by_role("button", name="Yes, use this item").click()  # nothing to tick first
    page.wait_for_selector("h1:text('Item found')")
    assert page.locator('[data-field="method"]').inner_text() == "You picked this item."
    assert "user_selected" not in page.locator("main").inner_text()
    _fits(page)
    page.screenshot(path=str(artifacts / f"confirmation-{name}.png"), full_page=True)


def test_phone__several_candidates_and_the_login_page_fit(chromium, live_server, radicale_live, alice,
                                                          browse, artifacts: Path) -> None:
    context = chromium.new_context(viewport=PHONE, locale="en-GB")
    try:
        login = context.new_page()
        login.goto(f"{live_server.url}/accounts/login/")
        _fits(login)
        login.screenshot(path=str(artifacts / "login-phone.png"), full_page=True)
    finally:
        context.close()
    page = browse("alice", PHONE)
    page.get_by_label("Reference").fill("Team offsite planning")
    page.get_by_label("Collections (optional)").fill("work personal")
    page.get_by_role("button", name="Find").click()
    page.wait_for_url(re.compile(r".*/resolve/clarify/[^/]+/$"))
    assert page.get_by_role("radio").count() == 2
    assert not any(page.get_by_role("radio").nth(i).is_checked() for i in range(2))
    _fits(page)
    # The submit button spans the column on a phone.
    assert _box(page, "main button[type=submit]:not(.link-button)")["width"] == _box(page, "main fieldset")["width"]
    page.screenshot(path=str(artifacts / "clarification-phone.png"), full_page=True)
