"""resolver/domain/emptyrange.py: a question by date alone that finds nothing says what was searched."""
from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from resolver.calendars.memory import MemoryCalendar
from resolver.domain.emptyrange import NO_TITLE, nothing_found, wider_range
from resolver.domain.items import Kind, make_item
from resolver.domain.pipeline import resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.requests import parse_request
from resolver.domain.times import TimeRange
from resolver.judges.disabled import DisabledJudge

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=TZ)  # a Monday
ITEMS = [make_item(collection_path="/u/home/", uid="rent", title="Pay the rent", etag='"1"', kind=Kind.TASK,
                   due=date(2027, 1, 20))]


def _day(day: date) -> TimeRange:
    start = datetime.combine(day, datetime.min.time(), tzinfo=TZ)
    return TimeRange(start, start + timedelta(days=1))


def _resolve(text: str, language: str | None = None):
    return resolve(request=parse_request(text=text, kind="task", time_zone="Europe/Berlin", language=language),
                   calendar=MemoryCalendar(items=list(ITEMS)), judge=DisabledJudge(), policy=NoThresholds(),
                   request_id="req_e", now=NOW)


def test_empty_range__tomorrow_with_nothing_due_names_the_day_and_its_week():
    outcome = _resolve("what's due tomorrow?")
    assert (outcome.reason, outcome.candidates) == ("no_candidates", ())
    assert outcome.prompt == ("Nothing is due or occurring on 2027-01-12. Try a wider range, such as from "
                              "2027-01-11 through 2027-01-17, or name the item.")
    (warning,) = [w for w in outcome.warnings if w.code == "empty_time_range"]
    assert warning.details == {
        "searched": {"start": "2027-01-12T00:00:00+01:00", "end": "2027-01-13T00:00:00+01:00"},
        "suggested": {"start": "2027-01-11T00:00:00+01:00", "end": "2027-01-18T00:00:00+01:00"}}


def test_empty_range__in_another_language_too():
    outcome = _resolve("was ist morgen fällig", language="german")
    assert outcome.prompt.startswith("Nothing is due or occurring on 2027-01-12.")


def test_empty_range__a_week_widens_to_its_month():
    outcome = _resolve("anything due this week")
    assert "from 2027-01-11 through 2027-01-17" in outcome.prompt
    assert "from 2027-01-01 through 2027-01-31" in outcome.prompt


def test_empty_range__overdue_with_nothing_overdue_says_so():
    outcome = _resolve("anything overdue")
    assert outcome.prompt == "Nothing is overdue."
    assert [w.details["suggested"] for w in outcome.warnings if w.code == "empty_time_range"] == [None]


def test_empty_range__a_title_that_matches_nothing_keeps_the_old_advice():
    outcome = _resolve("qwzx tomorrow")
    assert outcome.prompt.startswith("Nothing is due or occurring on 2027-01-12")  # no title word: by date
    assert _resolve("qwzx").prompt == NO_TITLE
    assert nothing_found(None, TZ) == (NO_TITLE, ())


@pytest.mark.parametrize("days, first, end", [
    (1, date(2027, 1, 11), date(2027, 1, 18)),   # a day: its week
    (7, date(2027, 1, 1), date(2027, 2, 1)),     # a week: its month
    (31, date(2027, 1, 1), date(2027, 4, 1)),    # a month: three months
])
def test_empty_range__wider_range(days, first, end):
    start = datetime.combine(date(2027, 1, 12), datetime.min.time(), tzinfo=TZ)
    wider = wider_range(TimeRange(start, start + timedelta(days=days)), TZ)
    assert (wider.start.date(), wider.end.date()) == (first, end)
