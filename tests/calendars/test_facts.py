"""The two reading steps: window-independent facts, then items for one window and zone."""
from __future__ import annotations

import pickle
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from resolver.calendars.ical import (
    FOREVER, SERIES_LOOKAHEAD, ResourceFacts, UnparseableResource, items_from, items_until, live_items,
    read_resource, window_from,
)
from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM, Kind

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
WINDOW = window_from(NOW, 90)
BERLIN = ZoneInfo("Europe/Berlin")


def cal(body: str) -> str:
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\n{body}END:VCALENDAR\r\n"


def events(text: str, window=WINDOW, tz=None):
    return items_from(read_resource(text), kind=Kind.EVENT, collection_path="/u/c/", href="/u/c/x.ics",
                      etag='"e"', window=window, tz=tz)


SERIES = cal("BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup\r\nDTSTART:20260501T090000Z\r\n"
             "DTEND:20260501T091500Z\r\nRRULE:FREQ=DAILY;COUNT=40\r\nEXDATE:20260603T090000Z\r\nEND:VEVENT\r\n"
             "BEGIN:VEVENT\r\nUID:s\r\nSUMMARY:Standup (moved)\r\nRECURRENCE-ID:20260602T090000Z\r\n"
             "DTSTART:20260602T140000Z\r\nDTEND:20260602T141500Z\r\nEND:VEVENT\r\n"
             "BEGIN:VEVENT\r\nUID:s\r\nRECURRENCE-ID:20260605T090000Z\r\nSTATUS:CANCELLED\r\n"
             "DTSTART:20260605T090000Z\r\nEND:VEVENT\r\n")


def test_facts_are_compact_and_hold_no_icalendar_objects():
    facts = read_resource(SERIES)
    assert isinstance(facts, ResourceFacts)
    [series] = facts.components
    assert (series.uid, series.title, series.rrule) == ("s", "Standup", "FREQ=DAILY;COUNT=40")
    assert len(series.overrides) == 2
    # Picklable plain values; an ordinary resource stays well under 3 KB.
    assert len(pickle.dumps(facts)) < 3000
    assert "icalendar" not in pickle.dumps(facts).decode("latin-1")


def test_occurrences_of_a_series_follow_exdate_overrides_and_count():
    [item] = events(SERIES)
    assert item.href == "/u/c/x.ics"
    starts = [o.start for o in item.occurrences]
    # 2026-06-01 09:00 is before NOW but ongoing? No: it ended 09:15; the first live one is the moved 2 June.
    assert starts[0] == datetime(2026, 6, 2, 14, tzinfo=timezone.utc)
    assert datetime(2026, 6, 3, 9, tzinfo=timezone.utc) not in starts  # EXDATE
    assert datetime(2026, 6, 5, 9, tzinfo=timezone.utc) not in starts  # cancelled instance
    assert starts[-1] == datetime(2026, 6, 9, 9, tzinfo=timezone.utc)  # COUNT=40 from 1 May
    assert starts == sorted(starts)
    assert item.occurrences[0].recurrence_id == "2026-06-02T09:00:00+00:00"
    assert item.occurrences[1].recurrence_id == "2026-06-04T09:00:00+00:00"
    assert item.occurrences[1].end - item.occurrences[1].start == timedelta(minutes=15)


def test_single_event_has_one_occurrence_without_recurrence_id():
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART:20260601T130000Z\r\nDTEND:20260601T140000Z\r\nEND:VEVENT\r\n")
    [item] = events(text)
    [occurrence] = item.occurrences
    assert occurrence.recurrence_id is None
    assert occurrence.start == datetime(2026, 6, 1, 13, tzinfo=timezone.utc)


def test_floating_times_are_read_in_the_request_zone():
    # 13:30 floating: in Berlin (UTC+2 in June) that is 11:30 UTC, already over at NOW (12:00 UTC).
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART:20260601T133000\r\nDTEND:20260601T135000\r\nEND:VEVENT\r\n")
    assert len(events(text)) == 1
    assert events(text, tz=BERLIN) == []
    [item] = events(text, tz=ZoneInfo("America/New_York"))
    assert item.occurrences[0].start.utcoffset() == timedelta(hours=-4)


def test_all_day_occurrences_start_at_midnight_in_the_zone():
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART;VALUE=DATE:20260602\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n")
    [item] = events(text, tz=BERLIN)
    first = item.occurrences[0]
    assert (first.start, first.end) == (datetime(2026, 6, 2, tzinfo=BERLIN), datetime(2026, 6, 3, tzinfo=BERLIN))
    assert first.recurrence_id == "2026-06-02"
    assert item.start == date(2026, 6, 2)  # the calendar's all-day date, typed


def test_occurrences_are_capped():
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART:20200101T000000Z\r\nRRULE:FREQ=HOURLY\r\nEND:VEVENT\r\n")
    [item] = events(text)
    assert len(item.occurrences) == MAX_OCCURRENCES_PER_ITEM
    assert item.occurrences[0].start == NOW


def test_rdate_only_series_and_period_values():
    text = cal("BEGIN:VEVENT\r\nUID:1\r\nSUMMARY:E\r\nDTSTART:20250101T100000Z\r\nDTEND:20250101T110000Z\r\n"
               "RDATE:20260701T100000Z\r\nRDATE;VALUE=PERIOD:20260702T100000Z/PT3H\r\nEND:VEVENT\r\n")
    [item] = events(text)
    assert [(o.start.day, (o.end - o.start).seconds // 3600) for o in item.occurrences] == [(1, 1), (2, 3)]


def test_facts_serve_any_window():
    facts = read_resource(SERIES)
    later = window_from(NOW + timedelta(days=30), 90)
    assert items_from(facts, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=later) == []
    assert items_from(facts, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=WINDOW)


def test_live_items_is_the_composition():
    assert live_items(SERIES, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=WINDOW,
                      href="/u/c/x.ics") == events(SERIES)


def test_a_bad_value_skips_only_when_the_component_is_asked_for():
    text = cal("BEGIN:VEVENT\r\nUID:t\r\nSUMMARY:E\r\nDTSTART:20260602T100000Z\r\nDTEND:notadate\r\n"
               "STATUS:CANCELLED\r\nEND:VEVENT\r\n")
    facts = read_resource(text)
    assert events(text) == []
    assert items_from(facts, kind=Kind.TASK, collection_path="/u/c/", etag='"e"', window=WINDOW) == []
    with pytest.raises(UnparseableResource) as raised:
        events(text.replace("STATUS:CANCELLED\r\n", ""))
    assert raised.value.reason == "bad dtend"


def reuse_bound(facts, *, kind, window):
    """The bound items_until gives with the items, which must be items_from's."""
    items, until = items_until(facts, kind=kind, collection_path="/u/c/", href="/u/c/x.ics", etag='"e"',
                               window=window)
    assert items == items_from(facts, kind=kind, collection_path="/u/c/", href="/u/c/x.ics", etag='"e"',
                               window=window)
    return until


def _single(start: str, end: str) -> str:
    return cal(f"BEGIN:VEVENT\r\nUID:one\r\nSUMMARY:Review\r\nDTSTART:{start}\r\nDTEND:{end}\r\nEND:VEVENT\r\n")


@pytest.mark.parametrize("text", [
    _single("20260601T130000Z", "20260601T140000Z"),  # live now, ends in two hours
    _single("20260830T100000Z", "20260830T110000Z"),  # enters the 90-day horizon soon
    _single("20260701T100000Z", "20260701T100000Z"),  # an instant
    _single("20260101T100000Z", "20260101T110000Z"),  # over
    _single("20270101T100000Z", "20270101T110000Z"),  # far beyond the horizon
    SERIES,  # daily, with an exception, a moved and a cancelled occurrence
    cal("BEGIN:VEVENT\r\nUID:w\r\nSUMMARY:Sync\r\nDTSTART:20260301T100000Z\r\nDTEND:20260301T110000Z\r\n"
        "RRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\n"),  # open-ended: one comes into the horizon every week
    cal("BEGIN:VEVENT\r\nUID:r\r\nSUMMARY:Talks\r\nDTSTART:20260601T150000Z\r\nDTEND:20260601T160000Z\r\n"
        "RDATE:20260829T150000Z\r\nEND:VEVENT\r\n"),  # an RDATE just past the horizon
])
def test_items_until__items_are_the_same_for_every_window_before_it_and_differ_after(text):
    facts = read_resource(text)
    until = reuse_bound(facts, kind=Kind.EVENT, window=WINDOW)
    assert until > NOW
    probe_end = min(until, NOW + timedelta(days=400))
    # Every later window before the bound gives the same items (occurrences included).
    step = (probe_end - NOW) / 50
    for n in range(50):
        later = window_from(NOW + step * n, 90)
        assert [(i, i.occurrences) for i in events(text, later)] == [(i, i.occurrences) for i in events(text)]
    if until not in (FOREVER, NOW + SERIES_LOOKAHEAD):
        # Just after it, they differ: the bound is tight, not only safe.
        after = window_from(until + timedelta(seconds=1), 90)
        assert [(i, i.occurrences) for i in events(text, after)] != [(i, i.occurrences) for i in events(text)]


def test_items_until__tasks_never_change_and_a_series_cut_short_is_never_reused():
    task = read_resource(cal("BEGIN:VTODO\r\nUID:t\r\nSUMMARY:Pay\r\nDUE:20260602T100000Z\r\nEND:VTODO\r\n"))
    assert reuse_bound(task, kind=Kind.TASK, window=WINDOW) == FOREVER
    # Every minute: more occurrences than an item holds, so the list is capped.
    dense = read_resource(cal("BEGIN:VEVENT\r\nUID:d\r\nSUMMARY:Ping\r\nDTSTART:20260601T000000Z\r\n"
                              "DTEND:20260601T000030Z\r\nRRULE:FREQ=MINUTELY\r\nEND:VEVENT\r\n"))
    assert len(events(cal("BEGIN:VEVENT\r\nUID:d\r\nSUMMARY:Ping\r\nDTSTART:20260601T000000Z\r\n"
                          "DTEND:20260601T000030Z\r\nRRULE:FREQ=MINUTELY\r\nEND:VEVENT\r\n"))[0].occurrences) \
        == MAX_OCCURRENCES_PER_ITEM
    assert reuse_bound(dense, kind=Kind.EVENT, window=WINDOW) == NOW
