"""The cold read's token: the collection's DAV:sync-token property where it is a URI, else an initial sync.

A Depth 0 PROPFIND gives the token, then the kind's calendar-query the data
(profiles.first_read). SOGo 5.8 answers the property with the current second,
not a URI, and a sync from it never lists what was written in that second:
such a token is not used. The scripted server (tests/support/scripted_dav.py)
answers the property either way (`token_property`).
"""
from __future__ import annotations

from typing import Iterator

import pytest

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.items import Kind
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV, vtodo

TITLES = {"a.ics": "Water the plants", "b.ics": "Book the dentist", "c.ics": "Renew library card"}


def scripted(token_property: str | None) -> Iterator[ScriptedDAV]:
    server = ScriptedDAV(token_property=token_property)
    for n, (name, title) in enumerate(TITLES.items()):
        server.put(name, vtodo(f"uid-{n}", title))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def uri_token() -> Iterator[ScriptedDAV]:
    yield from scripted("uri")


@pytest.fixture
def seconds_token() -> Iterator[ScriptedDAV]:
    yield from scripted("seconds")


def read(cal: CalDAVCalendar) -> set[str]:
    result = deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    return {item.title for item in result.items}


def calendar(server: ScriptedDAV) -> CalDAVCalendar:
    return CalDAVCalendar(url=server.url, username=USER, password=PASSWORD, timeout=5.0, registry=ReaderRegistry())


def sync_tokens(server: ScriptedDAV) -> list[str]:
    """The token each sync-collection the reader sent started from ("" for an initial sync)."""
    return [r.token or "" for r in server.seen if r.report == "sync-collection"]


def test_token_property__a_uri_token_then_the_kinds_query_and_later_syncs_from_it(uri_token: ScriptedDAV) -> None:
    cal = calendar(uri_token)
    assert read(cal) == set(TITLES.values())
    assert not sync_tokens(uri_token)  # no initial sync: the property's token and one calendar-query
    assert [r.report for r in uri_token.seen if r.method == "REPORT"] == ["calendar-query"]
    uri_token.put("a.ics", vtodo("uid-0", "Water the plants twice"))
    uri_token.delete("b.ics")
    uri_token.put("d.ics", vtodo("uid-3", "Call the plumber"))
    assert read(cal) == {"Water the plants twice", "Renew library card", "Call the plumber"}
    tokens = sync_tokens(uri_token)
    assert len(tokens) == 1 and tokens[0].startswith("http://scripted.example/sync/")
    assert read(cal) == {"Water the plants twice", "Renew library card", "Call the plumber"}


def test_token_property__a_token_that_is_not_a_uri_is_not_used(seconds_token: ScriptedDAV) -> None:
    cal = calendar(seconds_token)
    assert read(cal) == set(TITLES.values())
    assert sync_tokens(seconds_token) == [""]  # the initial sync instead
    seconds_token.put("a.ics", vtodo("uid-0", "Water the plants twice"))
    assert read(cal) == {"Water the plants twice", "Book the dentist", "Renew library card"}
    assert all(not token.isdigit() for token in sync_tokens(seconds_token))
