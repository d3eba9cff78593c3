"""The page door: href and occurrence on the confirmation, headings by reason, time zone, demo example."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from lifeproject.seeding import demo_collections
from resolver.domain.items import Kind, Occurrence, make_item
from resolver.web.forms import ResolveForm
from tests.support import memory_backend

pytestmark = pytest.mark.django_db

START = (datetime.now(timezone.utc) + timedelta(days=3)).replace(hour=9, minute=0, second=0, microsecond=0)
OCCURRENCE = Occurrence(start=START, end=START + timedelta(hours=1), recurrence_id=START.isoformat())


@pytest.fixture
def memory(settings):
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH}
    memory_backend.CALENDAR.items = [
        make_item(collection_path="/demo/work/", uid="weekly", title="Weekly sync", etag='"e1"', kind=Kind.EVENT,
                  start=START - timedelta(days=364), href="/demo/work/not-the-uid-4711.ics",
                  occurrences=(OCCURRENCE,)),
        make_item(collection_path="/demo/work/", uid="weekly-2", title="Weekly sync", etag='"e2"', kind=Kind.EVENT,
                  start=START, href="/demo/work/other.ics"),
        make_item(collection_path="/demo/work/", uid="t1", title="Draft portfolio outline", etag='"e3"',
                  kind=Kind.TASK, href="/demo/work/t1.ics"),
    ]
    yield memory_backend.CALENDAR
    memory_backend.CALENDAR.items = []


def _search(client: Client, text: str, kind: str, **extra: str):
    return client.post("/resolve/", {"text": text, "kind": kind, "collections": "", **extra})


def test_page__duplicate_titles_heading_and_pick_shows_href_and_occurrence(memory, alice_client):
    page = alice_client.get(_search(alice_client, "Weekly sync", "event")["Location"]).content.decode()
    assert "<h1>Several events have this title</h1>" in page
    assert "do you mean?" not in page
    wanted = memory.items[0].item_id
    assert f'value="{wanted}"' in page
    confirmation = alice_client.post(_search(alice_client, "Weekly sync", "event")["Location"],
                                     {"item_id": wanted}).content.decode()
    assert '<code data-field="href">/demo/work/not-the-uid-4711.ics</code>' in confirmation
    assert f'<time datetime="{START.isoformat()}" data-field="occurrence">' in confirmation
    assert f'<code data-field="recurrence_id">{START.isoformat()}</code>' in confirmation
    assert 'data-field="method" data-method="user_selected">You picked this item.<' in confirmation


def test_page__resolved_confirmation_shows_href(memory, alice_client):
    html = _search(alice_client, "Draft portfolio outline", "task").content.decode()
    assert '<code data-field="href">/demo/work/t1.ics</code>' in html
    assert "data-field=\"occurrence\"" not in html  # a task has none


def test_page__time_zone_field_reaches_the_calendar(memory, alice_client, monkeypatch):
    seen = []
    original = type(memory).fetch
    monkeypatch.setattr(type(memory), "fetch", lambda self, **kw: seen.append(kw["time_zone"]) or original(self, **kw))
    assert _search(alice_client, "Draft portfolio outline", "task", time_zone="America/Chicago").status_code == 200
    assert seen == [ZoneInfo("America/Chicago")]  # parsed once, at the door


def test_page__unknown_time_zone_is_a_400_page(memory, alice_client):
    response = _search(alice_client, "Draft portfolio outline", "task", time_zone="Mars/Olympus")
    assert response.status_code == 400 and "Unknown time zone" in response.content.decode()


def test_page__form_example_is_a_demo_title():
    """The example used to be "Team offsite planning", which the demo calendar does not have."""
    examples = re.findall(r"“([^”]+)”", str(ResolveForm().fields["text"].help_text))
    demo = {spec.title.lower() for _, specs in demo_collections(datetime.now(timezone.utc)).values()
            for spec in specs}
    assert examples and all(any(e.lower() in title for title in demo) for e in examples)
