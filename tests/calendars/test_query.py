"""The calendar-query the resolver sends: filtered on the server, never too strictly."""
from __future__ import annotations

from datetime import datetime, timezone

from lxml import etree

from resolver.calendars.caldav import multiget_body, query_body, sync_body
from resolver.calendars.ical import window_from
from resolver.domain.items import Kind

NS = {"C": "urn:ietf:params:xml:ns:caldav", "D": "DAV:"}
WINDOW = window_from(datetime(2026, 6, 1, tzinfo=timezone.utc), 90)


def parsed(kind: Kind, **options) -> etree._Element:
    return etree.fromstring(query_body(kind, WINDOW, **options))


def test_query__asks_for_etag_and_data_only():
    prop = parsed(Kind.TASK).find("D:prop", NS)
    assert [etree.QName(child).localname for child in prop] == ["getetag", "calendar-data"]


def test_query__tasks_by_the_vtodo_comp_filter_alone():
    """No prop-filter: Radicale evaluates one by parsing every item (docs/performance.md)."""
    todo = parsed(Kind.TASK).find("C:filter/C:comp-filter/C:comp-filter", NS)
    assert todo.get("name") == "VTODO" and len(todo) == 0
    body = query_body(Kind.TASK, WINDOW)
    assert b"prop-filter" not in body and b"STATUS" not in body and b"COMPLETED" not in body


def test_query__etag_only_listing():
    prop = parsed(Kind.TASK, data=False).find("D:prop", NS)
    assert [etree.QName(child).localname for child in prop] == ["getetag"]


def test_sync_body__token_level_and_etag_only():
    root = etree.fromstring(sync_body("http://radicale.org/ns/sync/abc"))
    assert etree.QName(root) == etree.QName("DAV:", "sync-collection")
    assert root.findtext("D:sync-token", namespaces=NS) == "http://radicale.org/ns/sync/abc"
    assert root.findtext("D:sync-level", namespaces=NS) == "1"
    assert [etree.QName(child).localname for child in root.find("D:prop", NS)] == ["getetag"]


def test_multiget_body__every_href_escaped():
    hrefs = ["/u/c/a.ics", "/u/c/b&c.ics"]
    root = etree.fromstring(multiget_body(hrefs))
    assert etree.QName(root) == etree.QName(NS["C"], "calendar-multiget")
    assert [h.text for h in root.findall("D:href", NS)] == hrefs
    assert [etree.QName(child).localname for child in root.find("D:prop", NS)] == ["getetag", "calendar-data"]


def test_query__events_in_the_window_by_default():
    time_range = parsed(Kind.EVENT).find("C:filter/C:comp-filter/C:comp-filter/C:time-range", NS)
    assert (time_range.get("start"), time_range.get("end")) == ("20260601T000000Z", "20260830T000000Z")


def test_query__events_without_time_range_when_switched_off():
    event = parsed(Kind.EVENT, time_range=False).find("C:filter/C:comp-filter/C:comp-filter", NS)
    assert event.get("name") == "VEVENT" and len(event) == 0
