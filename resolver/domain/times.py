"""Times as the pipeline uses them: typed values, one zone, no strings.

A task's due and an event's start are what the calendar gave: a `date` (all
day) or a `datetime`, aware (UTC, or a TZID the server named) or floating
(naive: read in the request's zone). The request's zone is a `tzinfo`,
parsed once at the request boundary (resolver/domain/requests.py); nothing
here parses a string or falls back to another zone.

A date names a stretch, the whole day in the request's zone; a date-time
names an instant. A `TimeRange` (what a reference's time expression became,
resolver/domain/timeexpr.py) is matched against those stretches.

ISO 8601 strings exist only where a time leaves the process: the envelope,
the judge's state, the page (`iso` below).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Union

from resolver.domain.items import Item, Kind, Occurrence

# A due or start as the calendar gives it: all day, or a moment.
When = Union[date, datetime]


@dataclass(frozen=True)
class TimeRange:
    """A half-open range [start, end) of aware datetimes in the request's zone."""

    start: datetime
    end: datetime
    # A time of day without a day ("call with Omar at 4pm"): the stretch
    # repeats every day from `start` on, so the next occurrence at that time
    # of day is the one meant, whichever day it falls on.
    every_day: bool = False
    # Only what lies wholly inside counts ("overdue": due before now; a task
    # due today, a day that has begun, is not yet overdue).
    whole: bool = False

    def overlaps(self, start: datetime, end: datetime) -> bool:
        if self.whole:
            return self.start <= start and (end < self.end if end <= start else end <= self.end)
        if not self.every_day:
            return _overlap(self.start, self.end, start, end)
        if end <= self.start and not (end <= start and start >= self.start):
            return False  # over before the first stretch began
        tz = self.start.tzinfo
        local = start.astimezone(tz)
        length = self.end - self.start
        # The stretch on the occurrence's own day, and the day before (an
        # occurrence that began before midnight and runs into the stretch).
        for day in (local.date(), local.date() - timedelta(days=1)):
            begin = datetime.combine(day, self.start.timetz())
            if begin + length > self.start and _overlap(begin, begin + length, start, end):
                return True
        return False

    def contains_day(self, day: date, tz: tzinfo) -> bool:
        begin = datetime.combine(day, time.min, tzinfo=tz)
        return self.overlaps(begin, begin + timedelta(days=1))


def _overlap(begin: datetime, finish: datetime, start: datetime, end: datetime) -> bool:
    if end <= start:  # an instant (or a zero-length event) is inside or not
        return begin <= start < finish
    return start < finish and end > begin


def stretch(value: When, tz: tzinfo) -> tuple[datetime, datetime]:
    """The stretch a due or start names: a date is its whole day in `tz`, a date-time an instant.

    A floating (naive) date-time is read in `tz`, the request's zone.
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=tz)
        return moment, moment
    if isinstance(value, date):
        start = datetime.combine(value, time.min, tzinfo=tz)
        return start, start + timedelta(days=1)
    raise TypeError(f"a due or start is a date or a datetime, not {type(value).__name__}")


def iso(value: When | None) -> str | None:
    """ISO 8601 as the calendar gave the value (`2026-03-13`, `2026-03-13T09:00:00+01:00`): for the wire."""
    return None if value is None else value.isoformat()


def when_from_iso(value: str | None) -> When | None:
    """`2026-03-13` -> a date, anything with a time -> a datetime: for loaders of data files and tests."""
    if value is None:
        return None
    if "T" not in value and " " not in value and len(value) <= 10:
        return date.fromisoformat(value)
    return datetime.fromisoformat(value)


def _occurrences(item: Item, tz: tzinfo) -> tuple[Occurrence, ...]:
    if item.occurrences:
        return item.occurrences
    if item.kind is Kind.EVENT and item.start is not None:
        begin, end = stretch(item.start, tz)
        return (Occurrence(start=begin, end=end, recurrence_id=None),)
    return ()


def in_range(item: Item, time_range: TimeRange, tz: tzinfo) -> bool:
    """A task due, or an event occurring, within the range."""
    if item.kind is Kind.TASK:
        return item.due is not None and time_range.overlaps(*stretch(item.due, tz))
    return any(time_range.overlaps(o.start, o.end) for o in _occurrences(item, tz))


def occurrence_for(item: Item, time_range: TimeRange | None, *, tz: tzinfo) -> Occurrence | None:
    """The occurrence a reference names (inside its range), else the next live one."""
    occurrences = _occurrences(item, tz)
    if not occurrences:
        return None
    if time_range is not None:
        for occurrence in occurrences:
            if time_range.overlaps(occurrence.start, occurrence.end):
                return occurrence
    return occurrences[0]


def occurrences_in(item: Item, time_range: TimeRange, *, tz: tzinfo) -> list[Occurrence]:
    return [o for o in _occurrences(item, tz) if time_range.overlaps(o.start, o.end)]


def _soonest(item: Item) -> float:
    """Open tasks due soonest and events occurring soonest first; undated last.

    Only an order between items: floating times are taken as UTC here, so the
    order does not depend on the request's zone.
    """
    if item.occurrences:
        return item.occurrences[0].start.timestamp()
    when = item.when
    if when is None:
        return math.inf
    return stretch(when, timezone.utc)[0].timestamp()


def _soonest_in(item: Item, time_range: TimeRange, tz: tzinfo) -> float:
    if item.kind is Kind.TASK:
        return _soonest(item)
    inside = occurrences_in(item, time_range, tz=tz)
    return inside[0].start.timestamp() if inside else math.inf
