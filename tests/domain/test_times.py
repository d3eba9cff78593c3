"""The time helpers: typed dues and starts, all-day vs timed, floating vs aware, zone edges (no server)."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from resolver.calendars.memory import MemoryCalendar
from resolver.domain.errors import InvalidRequest
from resolver.domain.items import Kind, Occurrence, make_item
from resolver.domain.requests import ResolveRequest, parse_document, parse_request, parse_time_zone
from resolver.domain.times import (
    TimeRange,
    _soonest,
    in_range,
    iso,
    occurrence_for,
    occurrences_in,
    stretch,
    when_from_iso,
)
from resolver.envelope import item_dict
from resolver.domain.pipeline import Outcome, Status

BERLIN = ZoneInfo("Europe/Berlin")
TOKYO = ZoneInfo("Asia/Tokyo")
UTC = timezone.utc


def task(due, uid: str = "t"):
    return make_item(collection_path="/u/work/", uid=uid, title="Pay invoice", etag='"1"', kind=Kind.TASK, due=due)


def event(start, occurrences=(), uid: str = "e"):
    return make_item(collection_path="/u/work/", uid=uid, title="Yoga", etag='"1"', kind=Kind.EVENT, start=start,
                     occurrences=occurrences)


def day_in(day: date, tz) -> TimeRange:
    begin = datetime.combine(day, datetime.min.time(), tzinfo=tz)
    return TimeRange(begin, begin + timedelta(days=1))


# --- stretch: what a due or start names ------------------------------------------


def test_stretch__a_date_is_its_whole_day_in_the_zone():
    assert stretch(date(2027, 1, 12), BERLIN) == (datetime(2027, 1, 12, tzinfo=BERLIN),
                                                   datetime(2027, 1, 13, tzinfo=BERLIN))


def test_stretch__an_aware_datetime_keeps_its_zone():
    moment = datetime(2027, 1, 12, 9, tzinfo=UTC)
    assert stretch(moment, TOKYO) == (moment, moment)
    assert stretch(moment, TOKYO)[0].tzinfo is UTC


def test_stretch__a_floating_datetime_is_read_in_the_zone():
    begin, end = stretch(datetime(2027, 1, 12, 9), TOKYO)
    assert begin == end == datetime(2027, 1, 12, 9, tzinfo=TOKYO)


def test_stretch__a_date_on_a_dst_change_day_is_23_hours():
    """Europe/Berlin springs forward on 2027-03-28: that day is 23 hours long, not 24."""
    begin, end = stretch(date(2027, 3, 28), BERLIN)
    assert end.astimezone(UTC) - begin.astimezone(UTC) == timedelta(hours=23)


def test_stretch__refuses_a_string():
    """Strings are for the wire: a time that is still a string here is a bug, not a date."""
    with pytest.raises(TypeError):
        stretch("2027-01-12", UTC)


# --- in_range: date vs datetime due, floating vs aware -----------------------------


def test_in_range__date_due_is_in_its_day_in_any_zone():
    item = task(date(2027, 1, 12))
    for tz in (UTC, BERLIN, TOKYO):
        assert in_range(item, day_in(date(2027, 1, 12), tz), tz)
        assert not in_range(item, day_in(date(2027, 1, 13), tz), tz)


def test_in_range__aware_due_near_midnight_depends_on_the_zone():
    """23:30 UTC on the 11th is already the 12th in Berlin, still the 11th in UTC."""
    item = task(datetime(2027, 1, 11, 23, 30, tzinfo=UTC))
    assert in_range(item, day_in(date(2027, 1, 12), BERLIN), BERLIN)
    assert not in_range(item, day_in(date(2027, 1, 12), UTC), UTC)
    assert in_range(item, day_in(date(2027, 1, 11), UTC), UTC)


def test_in_range__floating_due_follows_the_request_zone():
    item = task(datetime(2027, 1, 12, 0, 30))
    assert in_range(item, day_in(date(2027, 1, 12), TOKYO), TOKYO)
    assert in_range(item, day_in(date(2027, 1, 12), BERLIN), BERLIN)


def test_in_range__undated_task_is_never_in_range():
    assert not in_range(task(None), day_in(date(2027, 1, 12), UTC), UTC)


def test_in_range__all_day_event_without_occurrences():
    item = event(date(2027, 1, 12))
    assert in_range(item, day_in(date(2027, 1, 12), BERLIN), BERLIN)
    assert not in_range(item, day_in(date(2027, 1, 13), BERLIN), BERLIN)


def test_in_range__an_instant_at_the_range_end_is_outside():
    item = task(datetime(2027, 1, 13, tzinfo=BERLIN))
    assert not in_range(item, day_in(date(2027, 1, 12), BERLIN), BERLIN)
    assert in_range(item, day_in(date(2027, 1, 13), BERLIN), BERLIN)


# --- occurrences ------------------------------------------------------------------


def test_occurrence_for__an_all_day_start_becomes_a_day_long_occurrence_in_the_zone():
    occurrence = occurrence_for(event(date(2027, 1, 12)), None, tz=TOKYO)
    assert occurrence == Occurrence(start=datetime(2027, 1, 12, tzinfo=TOKYO),
                                    end=datetime(2027, 1, 13, tzinfo=TOKYO), recurrence_id=None)


def test_occurrence_for__the_one_in_range_else_the_next():
    first = datetime(2027, 1, 12, 18, tzinfo=BERLIN)
    spans = tuple(Occurrence(start=s, end=s + timedelta(hours=1), recurrence_id=iso(s))
                  for s in (first, first + timedelta(days=2)))
    item = event(first, spans)
    assert occurrence_for(item, day_in(date(2027, 1, 14), BERLIN), tz=BERLIN) == spans[1]
    assert occurrence_for(item, day_in(date(2027, 1, 20), BERLIN), tz=BERLIN) == spans[0]
    assert occurrences_in(item, day_in(date(2027, 1, 20), BERLIN), tz=BERLIN) == []


def test_occurrence_for__a_task_has_none():
    assert occurrence_for(task(date(2027, 1, 12)), None, tz=UTC) is None


# --- order: soonest first ------------------------------------------------------------


def test_soonest__dates_and_datetimes_order_together_and_undated_last():
    items = [task(None, "u"), task(date(2027, 1, 13), "d"), task(datetime(2027, 1, 12, 9, tzinfo=BERLIN), "a"),
             task(datetime(2027, 1, 12, 10), "f")]
    assert [i.uid for i in sorted(items, key=_soonest)] == ["a", "f", "d", "u"]


# --- the wire -----------------------------------------------------------------------


@pytest.mark.parametrize("value, text", [
    (date(2027, 1, 12), "2027-01-12"),
    (datetime(2027, 1, 12, 9, tzinfo=UTC), "2027-01-12T09:00:00+00:00"),
    (datetime(2027, 1, 12, 9, tzinfo=BERLIN), "2027-01-12T09:00:00+01:00"),
    (datetime(2027, 1, 12, 9), "2027-01-12T09:00:00"),
    (None, None),
])
def test_iso__as_the_calendar_gave_it(value, text):
    assert iso(value) == text
    assert when_from_iso(text) == value


def test_envelope__serialises_typed_times_as_iso():
    item = task(datetime(2027, 1, 12, 9, tzinfo=BERLIN))
    outcome = Outcome(request_id="r", status=Status.OK, kind=Kind.TASK, method=None, item=item)
    assert item_dict(item, outcome)["due"] == "2027-01-12T09:00:00+01:00"
    dated = event(date(2027, 1, 12))
    assert item_dict(dated, Outcome(request_id="r", status=Status.OK, kind=Kind.EVENT, method=None,
                                    item=dated))["start"] == "2027-01-12"


# --- the zone: parsed once at the boundary, never a silent UTC ----------------------


def test_parse_time_zone__a_name_becomes_its_zone_and_none_is_utc():
    assert parse_time_zone("Europe/Berlin") is BERLIN
    assert parse_time_zone(None) is UTC


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "Europe/Berlin\x00", "../../etc/passwd", "x" * 65, 3,
                                  "Europe/\ud800"])
def test_parse_time_zone__unknown_is_invalid_request(name):
    with pytest.raises(InvalidRequest) as caught:
        parse_time_zone(name)
    assert caught.value.code == "invalid_request" and caught.value.details["field"] == "time_zone"


@pytest.mark.parametrize("parse", [
    lambda zone: parse_request(text="a", kind="task", time_zone=zone),
    lambda zone: parse_request(text="a", kind="task", default_time_zone=zone),
    lambda zone: parse_document({"text": "a", "kind": "task", "time_zone": zone}),
    lambda zone: parse_document({"text": "a", "kind": "task"}, default_time_zone=zone),
])
def test_request_boundary__unknown_zone_is_invalid_request_named_or_defaulted(parse):
    with pytest.raises(InvalidRequest) as caught:
        parse("Mars/Olympus")
    assert caught.value.details["field"] == "time_zone"
    assert parse("Asia/Tokyo").time_zone is TOKYO


def test_request__a_zone_name_never_travels_inward():
    """A request built past the parser with a name is refused, not read as UTC later."""
    with pytest.raises(TypeError):
        ResolveRequest(text="a", kind=Kind.TASK, time_zone="Europe/Berlin")  # type: ignore[arg-type]


def test_memory_calendar__takes_a_zone_not_a_name():
    calendar = MemoryCalendar(items=[task(date(2027, 1, 12))])
    with pytest.raises(TypeError):
        calendar.fetch(kind=Kind.TASK, collection_ids=None, time_zone="Europe/Berlin")  # type: ignore[arg-type]
    assert len(calendar.fetch(kind=Kind.TASK, collection_ids=None, time_zone=BERLIN).items) == 1
