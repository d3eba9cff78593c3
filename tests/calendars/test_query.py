"""The calendar-query the resolver sends: filtered on the server, never too strictly."""
from __future__ import annotations

from datetime import datetime, timezone

from lxml import etree

from resolver.calendars.caldav import query_body
from resolver.calendars.ical import window_from
from resolver.domain.items import Kind

NS = {"C": "urn:ietf:params:xml:ns:caldav", "D": "DAV:"}
WINDOW = window_from(datetime(2026, 6, 1, tzinfo=timezone.utc), 90)


def parsed(kind: Kind, **options) -> etree._Element:
    return etree.fromstring(query_body(kind, WINDOW, **options))


def test_query__asks_for_etag_and_data_only():
    prop = parsed(Kind.TASK).find("D:prop", NS)
    assert [etree.QName(child).localname for child in prop] == ["getetag", "calendar-data"]


def test_query__tasks_without_completed_date_and_no_status_filter():
    todo = parsed(Kind.TASK).find("C:filter/C:comp-filter/C:comp-filter", NS)
    assert todo.get("name") == "VTODO"
    [prop_filter] = todo.findall("C:prop-filter", NS)
    assert prop_filter.get("name") == "COMPLETED"
    assert prop_filter.find("C:is-not-defined", NS) is not None
    assert b"STATUS" not in query_body(Kind.TASK, WINDOW)


def test_query__events_in_the_window_by_default():
    time_range = parsed(Kind.EVENT).find("C:filter/C:comp-filter/C:comp-filter/C:time-range", NS)
    assert (time_range.get("start"), time_range.get("end")) == ("20260601T000000Z", "20260830T000000Z")


def test_query__events_without_time_range_when_switched_off():
    event = parsed(Kind.EVENT, time_range=False).find("C:filter/C:comp-filter/C:comp-filter", NS)
    assert event.get("name") == "VEVENT" and len(event) == 0
