"""Liveness and parsing of single resources (no server)."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from resolver.calendars.ical import UnparseableResource, live_items, window_from
from resolver.domain.items import Kind
from resolver.domain.times import iso

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
WINDOW = window_from(NOW, 90)


def cal(body: str) -> str:
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{body}END:VCALENDAR\r\n"


def items(text: str, kind: Kind = Kind.TASK):
    return live_items(text, kind=kind, collection_path="/u/c/", etag='"e"', window=WINDOW)


@pytest.mark.parametrize("props, live", [
    ("", True),
    ("STATUS:NEEDS-ACTION\r\n", True),
    ("STATUS:IN-PROCESS\r\n", True),
    ("STATUS:COMPLETED\r\n", False),
    ("STATUS:CANCELLED\r\n", False),
    ("COMPLETED:20260101T000000Z\r\n", False),
])
def test_task_liveness(props, live):
    text = cal(f"BEGIN:VTODO\r\nUID:1\r\nSUMMARY:T\r\n{props}END:VTODO\r\n")
    assert bool(items(text)) is live


@pytest.mark.parametrize("start, end, live", [
    ("20260601T130000Z", "20260601T140000Z", True),     # later today
    ("20260531T100000Z", "20260602T100000Z", True),     # ongoing
    ("20260530T100000Z", "20260531T100000Z", False),    # ended yesterday
    ("20261001T100000Z", "20261001T110000Z", False),    # beyond the horizon
])
def test_event_liveness(start, end, live):
    text = cal(f"BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART:{start}\r\nDTEND:{end}\r\nEND:VEVENT\r\n")
    assert bool(items(text, Kind.EVENT)) is live


def test_all_day_event_today_is_live():
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART;VALUE=DATE:20260601\r\nEND:VEVENT\r\n")
    assert items(text, Kind.EVENT)[0].start == date(2026, 6, 1)


def test_cancelled_event_is_not_live():
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nSTATUS:CANCELLED\r\nDTSTART:20260602T100000Z\r\nEND:VEVENT\r\n")
    assert items(text, Kind.EVENT) == []


def closed_of(text: str, kind: Kind = Kind.TASK):
    closed: list = []
    live = live_items(text, kind=kind, collection_path="/u/c/", etag='"e"', window=WINDOW, closed=closed)
    return live, closed


@pytest.mark.parametrize("props, status", [
    ("STATUS:COMPLETED\r\n", "COMPLETED"),
    ("STATUS:CANCELLED\r\n", "CANCELLED"),
    ("COMPLETED:20260101T000000Z\r\n", "COMPLETED"),  # done without a STATUS
])
def test_closed_tasks_are_kept_apart_with_their_status(props, status):
    text = cal(f"BEGIN:VTODO\r\nUID:d\r\nSUMMARY:Buy rice\r\n{props}END:VTODO\r\n"
               "BEGIN:VTODO\r\nUID:o\r\nSUMMARY:Buy bread\r\nEND:VTODO\r\n")
    live, closed = closed_of(text)
    assert [i.uid for i in live] == ["o"]
    assert [(i.uid, i.title, i.status, i.kind) for i in closed] == [("d", "Buy rice", status, Kind.TASK)]


def test_a_cancelled_event_in_the_window_is_kept_apart_and_one_past_it_is_not():
    inside = cal("BEGIN:VEVENT\r\nUID:c\r\nSUMMARY:Launch\r\nSTATUS:CANCELLED\r\n"
                 "DTSTART:20260602T100000Z\r\nEND:VEVENT\r\n")
    live, closed = closed_of(inside, Kind.EVENT)
    assert live == [] and [(i.uid, i.status, i.start) for i in closed] == [
        ("c", "CANCELLED", datetime(2026, 6, 2, 10, tzinfo=timezone.utc))]
    beyond = cal("BEGIN:VEVENT\r\nUID:c\r\nSUMMARY:Launch\r\nSTATUS:CANCELLED\r\n"
                 "DTSTART:20261001T100000Z\r\nEND:VEVENT\r\n")
    assert closed_of(beyond, Kind.EVENT) == ([], [])


def test_an_unreadable_closed_event_is_left_out_and_the_resource_still_read():
    """A cancelled event without a start: it is not kept, and the live one beside it still is (a live event
    without a start skips its resource; a closed one is not worth losing the resource for)."""
    text = cal("BEGIN:VEVENT\r\nUID:c\r\nSUMMARY:Gone\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\n"
               "BEGIN:VEVENT\r\nUID:o\r\nSUMMARY:Launch\r\nDTSTART:20260602T100000Z\r\nEND:VEVENT\r\n")
    live, closed = closed_of(text, Kind.EVENT)
    assert [i.uid for i in live] == ["o"] and closed == []


def test_weekly_series_from_last_year_is_live_with_next_start():
    text = cal("BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Weekly sync\r\nDTSTART:20250602T100000Z\r\n"
               "DTEND:20250602T110000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n")
    [series] = items(text, Kind.EVENT)
    assert series.title == "Weekly sync"
    start = series.start
    assert isinstance(start, datetime) and NOW <= start < NOW + timedelta(days=7)


def test_series_with_override_is_one_item_titled_by_master():
    text = cal("BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup\r\nDTSTART:20260501T090000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n"
               "BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup (moved)\r\nRECURRENCE-ID:20260602T090000Z\r\n"
               "DTSTART:20260602T100000Z\r\nEND:VEVENT\r\n")
    assert [i.title for i in items(text, Kind.EVENT)] == ["Standup"]


def test_escaped_and_folded_summary_is_unescaped():
    text = cal("BEGIN:VTODO\r\nUID:1\r\nSUMMARY:Buy milk\\, eggs\\; and a very long title that is folded\r\n"
               "  onto the next line\r\nEND:VTODO\r\n")
    assert items(text)[0].title == "Buy milk, eggs; and a very long title that is folded onto the next line"


def test_due_is_typed_and_iso_8601_on_the_wire():
    text = cal("BEGIN:VTODO\r\nUID:1\r\nSUMMARY:T\r\nDUE:20260610T170000Z\r\nEND:VTODO\r\n")
    due = items(text)[0].due
    assert due == datetime(2026, 6, 10, 17, tzinfo=timezone.utc) and due.utcoffset() == timedelta(0)
    assert iso(due) == "2026-06-10T17:00:00+00:00"


def test_garbage_is_unparseable():
    with pytest.raises(UnparseableResource):
        items("this is not a calendar")
