"""resolver/calendars/caldav/multistatus.py: the request bodies the reader sends, and the rule for an answer.

The calendar-query is filtered on the server, never too strictly; the
sync-collection and calendar-multiget bodies ask for what the reader reads;
every answer's status goes through `answered`, for every request the reader
sends. Parsing a server's multistatus is tested through the reader, against
scripted and real servers (tests/calendars/test_hostile_server.py,
tests/calendars/test_exact_hrefs.py, tests/faults/).
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from lxml import etree

from resolver.calendars.caldav import multiget_body, query_body, sync_body
from resolver.calendars.caldav.http import Answer
from resolver.calendars.caldav.multistatus import Multistatus, answered
from resolver.calendars.ical import window_from
from resolver.domain.errors import CalendarUnavailable
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


# --- the rule for an answer's status ----------------------------------------------

FOUND = Multistatus(responses=[])


def reason(answer: Answer, *, required: bool) -> str:
    with pytest.raises(CalendarUnavailable) as err:
        answered(answer, required=required)
    return str(err.value.details["reason"])


@pytest.mark.parametrize("required", [True, False])
def test_multistatus_rule__401_is_the_credentials_whatever_was_asked(required: bool) -> None:
    assert reason(Answer(401), required=required) == "unauthorized"


def test_multistatus_rule__a_required_answer_must_be_a_multistatus() -> None:
    assert answered(Answer(207, FOUND)) is FOUND and answered(Answer(200, FOUND)) is FOUND
    assert reason(Answer(403), required=True) == "forbidden"
    assert reason(Answer(500), required=True) == "http_500"
    assert reason(Answer(207), required=True) == "http_207"  # a body that did not parse as one


def test_multistatus_rule__an_optional_answer_is_a_207_multistatus_or_nothing() -> None:
    assert answered(Answer(207, FOUND), required=False) is FOUND
    assert answered(Answer(200, FOUND), required=False) is None
    assert answered(Answer(403), required=False) is None
    assert answered(Answer(409), required=False) is None
