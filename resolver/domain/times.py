"""Time helpers the pipeline uses: is an item in a time range, which occurrence is meant, what comes soonest."""
from __future__ import annotations

import math
from datetime import datetime, time, timedelta, timezone, tzinfo

from resolver.domain.items import Item, Kind, Occurrence
from resolver.domain.timeexpr import TimeRange

_FAR = datetime.max.replace(tzinfo=timezone.utc)


def _aware(value: str, tz: tzinfo) -> tuple[datetime, datetime] | None:
    """An ISO date or date-time as the stretch it names: a day, or an instant."""
    try:
        if "T" not in value and len(value) <= 10:
            day = datetime.fromisoformat(value).date()
            start = datetime.combine(day, time.min, tzinfo=tz)
            return start, start + timedelta(days=1)
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)  # floating: the request's zone
    return moment, moment


def _occurrences(item: Item, tz: tzinfo) -> tuple[Occurrence, ...]:
    if item.occurrences:
        return item.occurrences
    if item.kind is Kind.EVENT and item.start:
        stretch = _aware(item.start, tz)
        if stretch is not None:
            return (Occurrence(start=stretch[0], end=stretch[1], recurrence_id=None),)
    return ()


def in_range(item: Item, time_range: TimeRange, tz: tzinfo) -> bool:
    """A task due, or an event occurring, within the range."""
    if item.kind is Kind.TASK:
        stretch = _aware(item.due, tz) if item.due else None
        return stretch is not None and time_range.overlaps(*stretch)
    return any(time_range.overlaps(o.start, o.end) for o in _occurrences(item, tz))


def occurrence_for(item: Item, time_range: TimeRange | None, *, tz: tzinfo = timezone.utc) -> Occurrence | None:
    """The occurrence a reference names (inside its range), else the next live one."""
    occurrences = _occurrences(item, tz)
    if not occurrences:
        return None
    if time_range is not None:
        for occurrence in occurrences:
            if time_range.overlaps(occurrence.start, occurrence.end):
                return occurrence
    return occurrences[0]


def occurrences_in(item: Item, time_range: TimeRange, *, tz: tzinfo = timezone.utc) -> list[Occurrence]:
    return [o for o in _occurrences(item, tz) if time_range.overlaps(o.start, o.end)]


def _soonest(item: Item) -> float:
    """Open tasks due soonest and events occurring soonest first; undated last."""
    if item.occurrences:
        return item.occurrences[0].start.timestamp()
    when = item.when
    if not when:
        return math.inf
    stretch = _aware(when, timezone.utc)
    return stretch[0].timestamp() if stretch else math.inf


def _soonest_in(item: Item, time_range: TimeRange, tz: tzinfo) -> float:
    if item.kind is Kind.TASK:
        return _soonest(item)
    inside = occurrences_in(item, time_range, tz=tz)
    return inside[0].start.timestamp() if inside else math.inf
