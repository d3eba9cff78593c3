"""A question by date alone that finds nothing: say which range was searched, suggest a wider one.

"What's due tomorrow?" with nothing due tomorrow is not a reference to
rephrase with more of a title: the answer is that the range is empty. The
clarification names the range searched (in the request's zone) and a wider
one to try: a day (or a time of day) widens to its week, a week or a few
days to their month, a month or more to the next three months from its
start. "Overdue" (everything due before now) has nothing wider to suggest.
"""
from __future__ import annotations

from datetime import datetime, time, timedelta, tzinfo
from typing import Any

from resolver.domain.codes import EVERY_DAY, NOTHING_OVERDUE, Reason, WarningCode
from resolver.domain.times import TimeRange

# The texts are the reason's and the warning's (resolver/domain/codes.py); the ranges are described here.
NO_TITLE = Reason.NO_CANDIDATES.prompt(listed=0, matched=0)
CODE = WarningCode.EMPTY_TIME_RANGE


def wider_range(searched: TimeRange, tz: tzinfo) -> TimeRange | None:
    """The range to suggest instead of `searched`; None when nothing wider makes sense (overdue)."""
    if searched.whole:
        return None
    start = searched.start.astimezone(tz)
    days = (searched.end - searched.start).days
    first = start.date()
    if days < 7:
        monday = first - timedelta(days=first.weekday())
        begin, end = monday, monday + timedelta(days=7)
    elif days < 28:
        begin = first.replace(day=1)
        end = (begin + timedelta(days=32)).replace(day=1)
    else:
        begin = first.replace(day=1)
        end = begin
        for _ in range(3):
            end = (end + timedelta(days=32)).replace(day=1)
    return TimeRange(datetime.combine(begin, time.min, tzinfo=tz), datetime.combine(end, time.min, tzinfo=tz))


def _described(span: TimeRange, tz: tzinfo) -> str:
    """"on 2027-01-12", "from 2027-01-11 through 2027-01-17", "from 2027-01-12 15:00 to 15:30"."""
    start, end = span.start.astimezone(tz), span.end.astimezone(tz)
    if start.time() == time.min and end.time() == time.min:
        last = end.date() - timedelta(days=1)
        return f"on {start.date()}" if last == start.date() else f"from {start.date()} through {last}"
    shown_end = end.strftime("%H:%M") if end.date() == start.date() else end.strftime("%Y-%m-%d %H:%M")
    return f"from {start.strftime('%Y-%m-%d %H:%M')} to {shown_end}"


def _span(searched: TimeRange, tz: tzinfo) -> dict[str, Any]:
    return {"start": searched.start.astimezone(tz).isoformat(), "end": searched.end.astimezone(tz).isoformat()}


def nothing_found(searched: TimeRange | None, tz: tzinfo) -> tuple[str, tuple[dict[str, Any], ...]]:
    """The prompt of a clarification with no candidates, and its warning (code, message, details) if any.

    `searched` is the range of a reference that asked by date alone; None for
    one that named a title and matched nothing.
    """
    if searched is None:
        return NO_TITLE, ()
    if searched.whole:
        prompt = NOTHING_OVERDUE
        details: dict[str, Any] = {"searched": {"end": searched.end.astimezone(tz).isoformat()}, "suggested": None}
    else:
        wider = wider_range(searched, tz)
        assert wider is not None
        prompt = CODE.prompt.format(searched=_described(searched, tz), wider=_described(wider, tz),
                                    every_day=EVERY_DAY if searched.every_day else "")
        details = {"searched": _span(searched, tz), "suggested": _span(wider, tz)}
    return prompt, ({"code": CODE, "message": prompt, "details": details},)
