"""Discovery's small things (issue 27, point 5): a 403 is `forbidden`, HTML at /.well-known/caldav falls back."""
from __future__ import annotations

from typing import Iterator

import pytest

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV, vtodo


@pytest.fixture
def server() -> Iterator[ScriptedDAV]:
    dav = ScriptedDAV()
    dav.put("one.ics", vtodo("one", "Call the plumber"))
    try:
        yield dav
    finally:
        dav.stop()


def fetch(server: ScriptedDAV, path: str):
    cal = CalDAVCalendar(url=f"http://127.0.0.1:{server.port}{path}", username=USER, password=PASSWORD,
                         timeout=5.0, registry=ReaderRegistry())
    return deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()


def test_discovery__a_403_is_forbidden_not_unauthorized(server: ScriptedDAV) -> None:
    server.forbidden = {"/dav/bob/"}
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(server, "/dav/bob/")
    assert caught.value.details == {"reason": "forbidden"}
    assert "refused access" in str(caught.value) and "credentials" not in str(caught.value)


def test_discovery__html_at_the_well_known_address_falls_back_to_the_root(server: ScriptedDAV) -> None:
    server.well_known_html = True
    result = fetch(server, "/.well-known/caldav")
    assert [item.title for item in result.items] == ["Call the plumber"]
    assert [(r.method, r.path) for r in server.seen[:2]] == [("PROPFIND", "/.well-known/caldav"), ("PROPFIND", "/")]


def test_discovery__a_well_known_redirect_is_still_followed(server: ScriptedDAV) -> None:
    result = fetch(server, "/.well-known/caldav")
    assert [item.title for item in result.items] == ["Call the plumber"]
    assert all(r.path != "/" for r in server.seen)


def test_discovery__html_elsewhere_is_still_a_bad_response(server: ScriptedDAV) -> None:
    server.well_known_html = True
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(server, "/.well-known/caldav/x/")
    assert caught.value.details.get("reason") in ("bad_response",)
