"""The page door: search form, clarification page, selection, and every failure as a page."""
from __future__ import annotations

import re
import socket
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from resolver import services
from resolver.domain.items import Item, Kind, Method
from resolver.domain.pipeline import Outcome, Status
from tests.web.conftest import XSS_COLLECTION, XSS_TITLE, issued_seconds_ago, page_path
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.django_db

OFFSITE = "Team offsite planning"


def _live(kind: Kind, *collections: str) -> list[Item]:
    return list(services.calendar_from_settings().fetch(kind=kind, collection_ids=list(collections)).items)


def _offsite_items() -> list[Item]:
    return [i for i in _live(Kind.TASK, "work", "personal") if i.title == OFFSITE]


def _ask(client: Client, text: str, collections: str, kind: str = "task", **extra: str) -> str:
    """Submit the search form; return the clarification page it redirects to."""
    response = client.post("/resolve/", {"text": text, "kind": kind, "collections": collections, **extra})
    assert response.status_code == 303, response.content.decode()[:500]
    return response["Location"]


def _radios(html: str) -> list[tuple[str, bool]]:
    """(value, disabled) of each candidate radio, in page order."""
    found = []
    for tag in re.findall(r"<input[^>]*name=\"item_id\"[^>]*>", html):
        value = re.search(r'value="([^"]*)"', tag)
        found.append((unescape(value.group(1)) if value else "", " disabled" in tag))
    return found


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def calendar_down(radicale_live, settings) -> None:
    settings.RESOLVER = radicale_live.settings(CALDAV_URL=f"http://127.0.0.1:{_closed_port()}/", CALDAV_TIMEOUT=2.0)


# The search form ---------------------------------------------------------------------------------

def test_search__anonymous_is_sent_to_login(client: Client) -> None:
    response = client.get("/resolve/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/resolve/"


def test_search__form_is_semantic_and_accessible(alice_client: Client) -> None:
    response = alice_client.get("/resolve/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<html lang="en">' in html
    assert 'name="viewport"' in html
    assert "/static/resolver/resolver.css" in html
    assert "csrfmiddlewaretoken" in html
    assert re.search(r"<fieldset[^>]*>\s*<legend>Kind</legend>", html)
    for field_id in ("id_text", "id_collections", "id_kind_0", "id_kind_1"):
        assert f'for="{field_id}"' in html and f'id="{field_id}"' in html
    assert 'aria-describedby="id_text_helptext"' in html
    assert response["Cache-Control"].startswith("max-age=0")


def test_search__query_prefills_kind_and_collections(alice_client: Client) -> None:
    html = alice_client.get("/resolve/?kind=event&collections=work+personal").content.decode()
    assert re.search(r'<input[^>]*value="event"[^>]*checked', html)
    assert 'value="work personal"' in html


def test_search__unique_reference_shows_confirmation(radicale_live, alice_client: Client) -> None:
    expected = next(i for i in _live(Kind.TASK, "work") if i.title == "Draft portfolio outline")
    response = alice_client.post("/resolve/", {"text": "Draft portfolio outline", "kind": "task",
                                              "collections": "work"})
    html = response.content.decode()
    assert response.status_code == 200
    assert f'<code data-field="item_id">{expected.item_id}</code>' in html
    assert unescape(re.search(r'data-field="etag">([^<]*)<', html).group(1)) == expected.etag
    assert 'data-field="method" data-method="deterministic">Its ID or exact title matched.<' in html
    assert "Draft portfolio outline" in html and ">work<" in html and "Due" in html


def test_search__ambiguous_reference_redirects_to_clarification(radicale_live, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work, personal")
    assert re.fullmatch(r"/resolve/clarify/[^/]+/", location)


def test_search__empty_reference_rerenders_form(radicale_live, alice_client: Client) -> None:
    response = alice_client.post("/resolve/", {"text": "", "kind": "task"})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


def test_search__invalid_request_shows_service_message(radicale_live, alice_client: Client) -> None:
    response = alice_client.post("/resolve/", {"text": "   ", "kind": "task"})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'role="alert"' in html and "must be a non-empty string" in html
    assert 'value="   "' in html  # the form is re-rendered with what was typed


def test_search__unknown_collection_shows_message(radicale_live, alice_client: Client) -> None:
    response = alice_client.post("/resolve/", {"text": OFFSITE, "kind": "task", "collections": "nope"})
    assert response.status_code == 400
    # The page names the bad value and the known ones, without the terminal's backticks.
    known = ", ".join(sorted(c.collection_id for c in services.calendar_for(None).collections()))
    assert f"Unknown collection ID nope; known: {known}." in response.content.decode()
    assert "`" not in response.content.decode()


def test_search__calendar_down_is_503_form(calendar_down, alice_client: Client) -> None:
    response = alice_client.post("/resolve/", {"text": OFFSITE, "kind": "task"})
    assert response.status_code == 503
    assert "could not be read" in response.content.decode()


def test_search__post_without_csrf_is_refused(radicale_live, alice) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/resolve/", {"text": OFFSITE, "kind": "task", "collections": "work"})
    assert response.status_code == 403


def test_search__next_continues_with_item_when_resolved(radicale_live, alice_client: Client) -> None:
    response = alice_client.post("/resolve/", {"text": "Draft portfolio outline", "kind": "task",
                                              "collections": "work", "next": "/plans/?x=1"})
    assert response.status_code == 303
    location = urlsplit(response["Location"])
    assert location.path == "/plans/"
    assert parse_qs(location.query)["x"] == ["1"]
    assert parse_qs(location.query)["item_id"][0].startswith("itm_")


def test_search__next_is_carried_to_the_clarification(radicale_live, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal", next="/plans/")
    assert location.endswith("/?next=%2Fplans%2F")
    html = alice_client.get(location).content.decode()
    assert '<input type="hidden" name="next" value="/plans/">' in html


# The clarification page ---------------------------------------------------------------------------

def test_clarify__lists_live_candidates_in_a_radio_group(radicale_live, alice_client: Client) -> None:
    expected = _offsite_items()
    response = alice_client.get(_ask(alice_client, OFFSITE, "work personal"))
    html = response.content.decode()
    assert response.status_code == 200
    assert re.search(r"<form method=\"post\"[^>]*>\s*<input[^>]*csrfmiddlewaretoken[^>]*>\s*<fieldset>\s*<legend>",
                     html)
    assert sorted(value for value, _ in _radios(html)) == sorted(i.item_id for i in expected)
    assert all(not disabled for _, disabled in _radios(html))
    for number in (1, 2):
        assert f'id="candidate-{number}"' in html and f'for="candidate-{number}"' in html
    assert html.count(f"<span class=\"choice-title\">{OFFSITE}</span>") == 2  # and once as typed, above them
    assert "Collection: work" in html and "Collection: personal" in html
    assert "Suggested" not in html


def test_clarify__none_of_these_goes_back_with_scope(radicale_live, alice_client: Client) -> None:
    html = alice_client.get(_ask(alice_client, OFFSITE, "work personal")).content.decode()
    link = unescape(re.search(r'<a href="([^"]*)">None of these', html).group(1))
    assert urlsplit(link).path == "/resolve/"
    assert parse_qs(urlsplit(link).query) == {"kind": ["task"], "collections": ["work personal"]}
    form = alice_client.get(link).content.decode()
    assert 'value="work personal"' in form


def test_clarify__no_candidates_offers_search_again(radicale_live, alice_client: Client) -> None:
    """The heading and prompt follow `reason`: no "Which task do you mean?" above nothing."""
    html = alice_client.get(_ask(alice_client, "qwzx nothing like this", "personal")).content.decode()
    assert "<h1>Nothing matched</h1>" in html
    assert "Nothing in your calendars matches your reference." in html
    assert "do you mean?" not in html and "None of these" not in html
    assert _radios(html) == []
    assert ">Search again</a>" in html


def test_clarify__anonymous_is_sent_to_login(radicale_live, alice_client: Client, client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    response = client.get(location)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_clarify__tampered_and_foreign_tokens_look_the_same(radicale_live, alice_client: Client,
                                                            bob_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    token = location.split("/")[-2]
    tampered = location.replace(token, token[:-3] + ("abc" if not token.endswith("abc") else "xyz"))
    pages = [alice_client.get(tampered), bob_client.get(location), alice_client.get("/resolve/clarify/junk/")]
    bodies = []
    for response in pages:
        assert response.status_code == 404
        html = response.content.decode()
        bodies.append(re.search(r"<main.*</main>", html, re.S).group(0))
    assert bodies[0] == bodies[1] == bodies[2]
    assert bob_client.post(location, {"item_id": _offsite_items()[0].item_id}).status_code == 404


def test_clarify__expired_token_is_410(radicale_live, alice, alice_client: Client, bob_client: Client) -> None:
    outcome = resolve_outcome(text=OFFSITE, kind="task", collection_ids=["work", "personal"])
    with issued_seconds_ago(901):
        path = page_path(outcome, alice.pk)
    response = alice_client.get(path)
    assert response.status_code == 410
    assert "expired" in response.content.decode()
    assert alice_client.post(path, {"item_id": outcome.candidates[0].item_id}).status_code == 410
    assert bob_client.get(path).status_code == 404


def test_clarify__max_age_setting_is_honoured(radicale_live, settings, alice, alice_client: Client) -> None:
    outcome = resolve_outcome(text=OFFSITE, kind="task", collection_ids=["work", "personal"])
    with issued_seconds_ago(120):
        path = page_path(outcome, alice.pk)
    assert alice_client.get(path).status_code == 200
    settings.RESOLVER = {**settings.RESOLVER, "CLARIFICATION_MAX_AGE_SECONDS": 60}
    assert alice_client.get(path).status_code == 410


def test_clarify__pick_confirms_with_current_etag(radicale_live, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    chosen = next(i for i in _offsite_items() if i.collection_id == "personal")
    response = alice_client.post(location, {"item_id": chosen.item_id})
    html = response.content.decode()
    assert response.status_code == 200
    assert f'<code data-field="item_id">{chosen.item_id}</code>' in html
    assert unescape(re.search(r'data-field="etag">([^<]*)<', html).group(1)) == chosen.etag
    assert f'data-field="method" data-method="{Method.USER_SELECTED.value}">You picked this item.<' in html


def test_clarify__pick_without_csrf_is_refused(radicale_live, alice, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.get(location).status_code == 200
    response = client.post(location, {"item_id": _offsite_items()[0].item_id})
    assert response.status_code == 403


def test_clarify__item_not_in_token_is_400(radicale_live, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    other = next(i for i in _live(Kind.TASK, "work") if i.title == "Draft portfolio outline")
    response = alice_client.post(location, {"item_id": other.item_id})
    assert response.status_code == 400
    assert "not offered" in response.content.decode()
    assert alice_client.post(location, {"item_id": "itm_" + "0" * 32}).status_code == 400


def test_clarify__no_choice_rerenders_with_error(radicale_live, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    response = alice_client.post(location, {})
    html = response.content.decode()
    assert response.status_code == 400
    assert "Choose one of the items." in html and len(_radios(html)) == 2


def test_clarify__safe_next_gets_item_and_etag(radicale_live, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    chosen = _offsite_items()[0]
    for next_url in ("/plans/edit/?step=2&item_id=stale", "http://testserver/plans/"):
        response = alice_client.post(location, {"item_id": chosen.item_id, "next": next_url})
        assert response.status_code == 303
        target = urlsplit(response["Location"])
        assert target.path == "/plans/edit/" or target.geturl().startswith("http://testserver/plans/")
        query = parse_qs(target.query)
        assert query["item_id"] == [chosen.item_id]
        assert query["etag"] == [chosen.etag]


@pytest.mark.parametrize("next_url", [
    "//evil.example",
    "//evil.example/path",
    "https://evil.example/",
    "http://testserver.evil.example/",
    "javascript:alert(1)",
    "JavaScript:alert(document.domain)",
    "/\\evil.example",
    "\\\\evil.example",
    "https:///evil.example",
    "data:text/html,<script>alert(1)</script>",
])
def test_clarify__unsafe_next_is_ignored(radicale_live, alice_client: Client, next_url: str) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    page = alice_client.get(location, {"next": next_url}).content.decode()
    assert 'name="next"' not in page and "evil" not in page
    response = alice_client.post(location, {"item_id": _offsite_items()[0].item_id, "next": next_url})
    assert response.status_code == 200  # the confirmation, never a redirect
    assert 'data-field="method" data-method="user_selected">You picked this item.<' in response.content.decode()


def test_clarify__suggestion_and_probabilities_are_shown(radicale_live, alice, alice_client: Client) -> None:
    first, second = _offsite_items()
    outcome = Outcome(
        request_id="req_suggested", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=Method.SEMANTIC,
        candidates=(second, first), probabilities={second.item_id: 0.8, first.item_id: 0.15},
        suggested_item_id=second.item_id, collection_ids=("personal", "work"),
    )
    path = page_path(outcome, alice.pk)
    html = alice_client.get(path).content.decode()
    assert [value for value, _ in _radios(html)] == [second.item_id, first.item_id]
    suggested = re.search(r'<li class="choice choice-suggested">.*?</li>', html, re.S).group(0)
    assert second.item_id in suggested and "Suggested" in suggested and "Likelihood: 80%" in suggested
    assert html.count("Suggested") == 1
    assert "Likelihood: 15%" in html
    assert "The suggested one is marked." in html


def test_clarify__gone_candidate_cannot_be_picked(radicale_live, scratch, alice_client: Client) -> None:
    location = _ask(alice_client, scratch.title, "webgone")
    items = {i.uid: i for i in _live(Kind.TASK, "webgone") if i.title == scratch.title}
    gone_uid, kept_uid = scratch.uids
    scratch.delete(gone_uid)
    html = alice_client.get(location).content.decode()
    assert dict(_radios(html)) == {items[gone_uid].item_id: True, items[kept_uid].item_id: False}
    assert "No longer available" in html and html.count(f"choice-title\">{scratch.title}<") == 1
    response = alice_client.post(location, {"item_id": items[gone_uid].item_id})
    assert response.status_code == 409
    assert "no longer exists" in response.content.decode()
    assert alice_client.post(location, {"item_id": items[kept_uid].item_id}).status_code == 200


def test_clarify__all_gone_offers_no_button(radicale_live, scratch, alice_client: Client) -> None:
    location = _ask(alice_client, scratch.title, "webgone")
    for uid in list(scratch.uids):
        scratch.delete(uid)
    html = alice_client.get(location).content.decode()
    assert all(disabled for _, disabled in _radios(html))
    assert "Use this item" not in html and "None of these: search again" in html


def test_clarify__calendar_down_is_503_with_retry(radicale_live, settings, alice_client: Client) -> None:
    location = _ask(alice_client, OFFSITE, "work personal")
    chosen = _offsite_items()[0]
    settings.RESOLVER = radicale_live.settings(CALDAV_URL=f"http://127.0.0.1:{_closed_port()}/", CALDAV_TIMEOUT=2.0)
    for response in (alice_client.get(location, {"next": "/plans/"}),
                     alice_client.post(location, {"item_id": chosen.item_id, "next": "/plans/"})):
        html = response.content.decode()
        assert response.status_code == 503
        assert f'<a href="{location}?next=%2Fplans%2F">Try again</a>' in html
        assert "Traceback" not in html


def test_clarify__calendar_text_is_escaped(radicale_live, webxss, alice_client: Client) -> None:
    location = _ask(alice_client, XSS_TITLE, XSS_COLLECTION)
    html = alice_client.get(location).content.decode()
    assert "<img" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") == 3  # two cards and what was typed
    chosen = next(value for value, _ in _radios(html))
    confirmation = alice_client.post(location, {"item_id": chosen}).content.decode()
    assert "<img" not in confirmation and "&lt;img src=x onerror=alert(1)&gt;" in confirmation


def test_clarify__reference_is_escaped_when_the_form_is_rerendered(radicale_live, alice_client: Client) -> None:
    response = alice_client.post("/resolve/", {"text": XSS_TITLE, "kind": "task", "collections": "nope"})
    assert "<img" not in response.content.decode()


def test_static__stylesheet_is_an_app_static_file() -> None:
    path = finders.find("resolver/resolver.css")
    assert path is not None
    css = open(path, encoding="utf-8").read()
    assert ":focus-visible" in css and "@media" in css


def test_login__page_uses_project_template(client: Client) -> None:
    html = client.get("/accounts/login/?next=/resolve/").content.decode()
    assert '<html lang="en">' in html
    assert 'for="id_username"' in html and 'for="id_password"' in html
    assert '<input type="hidden" name="next" value="/resolve/">' in html


def test_login__then_back_to_the_page(alice, client: Client) -> None:
    response = client.post("/accounts/login/", {"username": "alice", "password": "correct horse battery staple",
                                                "next": "/resolve/"})
    assert response.status_code == 302 and response["Location"] == "/resolve/"


def _iso(moment) -> str:
    return moment.strftime("%Y-%m-%d")


def _shown(html: str) -> list[tuple[str, str]]:
    """(label, datetime) of each card's date."""
    return re.findall(r'<span>([^<:]+): <time datetime="([^"]+)" data-field="when">', html)


def test_clarify__a_later_occurrence_is_shown_and_picked_as_that_occurrence(radicale_live, alice_client: Client):
    """"sync on <the week after next>": the card shows that occurrence (not "next"), the pick answers it."""
    from datetime import datetime

    from tests.support.calendars import weekly_sync_start

    named, next_one = weekly_sync_start(2), weekly_sync_start(0)
    location = _ask(alice_client, f"sync on {_iso(named)}", "work", kind="event", time_zone="UTC")
    html = alice_client.get(location).content.decode()
    [(label, shown)] = _shown(html)
    assert label == "Occurrence" and datetime.fromisoformat(shown) == named
    assert "Next occurrence" not in html

    [(series_id, _)] = _radios(html)
    response = alice_client.post(location, {"item_id": series_id})
    assert response.status_code == 200
    page = response.content.decode()
    start = re.search(r'<time datetime="([^"]+)" data-field="occurrence">', page).group(1)
    assert datetime.fromisoformat(start) == named != next_one
    assert re.search(r'<code data-field="recurrence_id">([^<]+)</code>', page).group(1)


def test_clarify__the_next_occurrence_is_called_next(radicale_live, alice_client: Client):
    location = _ask(alice_client, "sync", "work", kind="event")
    [(label, shown)] = _shown(alice_client.get(location).content.decode())
    from datetime import datetime

    from tests.support.calendars import weekly_sync_start

    assert label == "Next occurrence" and datetime.fromisoformat(shown) == weekly_sync_start(0)


def test_clarify__one_candidate_asks_one_question_with_the_candidate_preselected(radicale_live,
                                                                                  alice_client: Client):
    location = _ask(alice_client, "sync", "work", kind="event")
    html = alice_client.get(location).content.decode()
    assert "<h1>Is this the event you mean?</h1>" in html
    main = html.split('<main id="main" tabindex="-1">', 1)[1]
    # One question: the heading. The box above the candidate states, it does not ask again.
    assert [line.strip() for line in re.sub(r"<[^>]+>", "\n", main).splitlines() if "?" in line] == \
        ["Is this the event you mean?"]
    assert "Several items could match" not in html
    [(item_id, _)] = _radios(html)
    assert re.search(rf'<input type="radio" name="item_id" value="{item_id}"[^>]*\bchecked>', html)
    assert "Yes, use this item" in html and "Not this one: search again" in html


def test_clarify__several_candidates_none_preselected(radicale_live, alice_client: Client):
    html = alice_client.get(_ask(alice_client, OFFSITE, "work personal")).content.decode()
    assert len(_radios(html)) == 2 and " checked>" not in html


def test_clarify__what_the_person_typed_is_shown_above_the_candidates(radicale_live, alice_client: Client):
    html = alice_client.get(_ask(alice_client, "team offsite <b>planning</b>", "work personal")).content.decode()
    typed = '<p class="typed" data-field="typed">You typed <bdi><q>team offsite &lt;b&gt;planning&lt;/b&gt;</q></bdi></p>'
    assert typed in html and html.index(typed) < html.index('class="choices"')


def test_clarify__the_typed_reference_stays_in_its_own_session(radicale_live, alice, alice_client: Client):
    """Another browser of the same person (or a link from the API) shows the page without it."""
    location = _ask(alice_client, "team offsite planning", "work personal")
    other = Client()
    other.force_login(alice)
    html = other.get(location).content.decode()
    assert other.get(location).status_code == 200 and 'data-field="typed"' not in html


def test_clarify__no_occurrence_in_the_named_time_shows_the_nearest_and_says_so(radicale_live,
                                                                               alice_client: Client):
    """"sync on <a day without one>": the nearest occurrence, not silently the next one."""
    from datetime import datetime, timedelta

    from tests.support.calendars import weekly_sync_start

    named = weekly_sync_start(3)
    # Two days on, not one: an hour-long occurrence starting after 23:00 UTC runs into the next day.
    day_after = named + timedelta(days=2)
    location = _ask(alice_client, f"sync on {_iso(day_after)}", "work", kind="event", time_zone="UTC")
    html = alice_client.get(location).content.decode()
    [(label, shown)] = _shown(html)
    assert datetime.fromisoformat(shown) == named != weekly_sync_start(0)
    assert "No occurrence falls in the time you named; this is the nearest." in html


def test_clarify__advice_without_probabilities_is_marked_first_without_a_likelihood(radicale_live, alice,
                                                                                     alice_client: Client):
    first, second = _offsite_items()
    outcome = Outcome(
        request_id="req_advice", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=Method.SEMANTIC,
        candidates=(second, first), probabilities={}, suggested_item_id=second.item_id,
        collection_ids=("personal", "work"), reason="ambiguous",
    )
    html = alice_client.get(page_path(outcome, alice.pk)).content.decode()
    assert [value for value, _ in _radios(html)][0] == second.item_id
    suggested = re.search(r'<li class="choice choice-suggested">.*?</li>', html, re.S).group(0)
    assert second.item_id in suggested and "Suggested" in suggested
    assert "Likelihood" not in html
