"""Turn one CalDAV resource's iCalendar text into live items.

Liveness is decided here, on the client, for every resource the server
returns: servers differ in how well they apply a calendar-query filter, so the
filter only saves bandwidth and never decides what is live.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
import icalendar
import recurring_ical_events

from resolver.domain.items import Item, Kind, make_item

CLOSED_TASK_STATUSES = frozenset({"COMPLETED", "CANCELLED"})
COMPONENT = {Kind.TASK: "VTODO", Kind.EVENT: "VEVENT"}


class UnparseableResource(Exception):
    """The resource's text is not iCalendar we can read; it is skipped, not fatal."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime


def window_from(now: datetime, horizon_days: int) -> Window:
    return Window(start=now, end=now + timedelta(days=horizon_days))


def _as_utc(value: date | datetime) -> datetime:
    if isinstance(value, datetime):
        # Floating times have no zone; read them as UTC, the server's clock.
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value
    return datetime.combine(value, time.min, tzinfo=timezone.utc)


def _iso(value: date | datetime) -> str:
    return value.isoformat()


def _text(component: icalendar.cal.Component, name: str) -> str:
    value = component.get(name)
    if value is None:
        return ""
    if isinstance(value, list):  # a property given twice: take the first
        value = value[0]
    return str(value)


def _status(component: icalendar.cal.Component) -> str | None:
    status = _text(component, "STATUS").strip().upper()
    return status or None


def _decoded(component: icalendar.cal.Component, name: str) -> date | datetime | None:
    prop = component.get(name)
    if prop is None:
        return None
    if isinstance(prop, list):
        prop = prop[0]
    value = getattr(prop, "dt", None)
    if isinstance(value, (date, datetime)):
        return value
    raise UnparseableResource(f"bad {name.lower()}")


def _masters(calendar: icalendar.cal.Component, name: str) -> dict[str, icalendar.cal.Component]:
    """One component per UID: the series master, or the first one seen."""
    masters: dict[str, icalendar.cal.Component] = {}
    for component in calendar.walk(name):
        uid = _text(component, "UID").strip()
        if not uid:
            continue
        if uid not in masters or (
            "RECURRENCE-ID" in masters[uid] and "RECURRENCE-ID" not in component
        ):
            masters[uid] = component
    return masters


def _task_is_open(todo: icalendar.cal.Component) -> bool:
    return _status(todo) not in CLOSED_TASK_STATUSES and "COMPLETED" not in todo


def _event_end(event: icalendar.cal.Component, start: date | datetime) -> datetime:
    end = _decoded(event, "DTEND")
    if end is not None:
        return _as_utc(end)
    duration = event.get("DURATION")
    if duration is not None and isinstance(getattr(duration, "dt", None), timedelta):
        return _as_utc(start) + duration.dt
    # RFC 5545 3.6.1: a date-only start lasts one day; a date-time start, no time.
    if not isinstance(start, datetime):
        return _as_utc(start) + timedelta(days=1)
    return _as_utc(start)


def _overlaps(start: datetime, end: datetime, window: Window) -> bool:
    if end == start:  # an instant is live when it falls inside the window
        return window.start <= start < window.end
    return start < window.end and end > window.start


def _next_occurrence(calendar: icalendar.cal.Component, uid: str, window: Window) -> datetime | date | None:
    """The first occurrence of a recurring series overlapping the window, if any.

    `after()` yields occurrences in order of start and stops being asked at
    the first one past the window: `between()` would build every occurrence
    in the window (a daily series over a long horizon, thousands) to use one.
    """
    for occurrence in recurring_ical_events.of(calendar).after(window.start):
        start = _decoded(occurrence, "DTSTART")
        if start is None:
            continue
        if _as_utc(start) >= window.end:
            return None  # in order of start: nothing later is in the window
        if _text(occurrence, "UID").strip() != uid or _status(occurrence) == "CANCELLED":
            continue
        return start
    return None


def _live_event_start(
    calendar: icalendar.cal.Component, event: icalendar.cal.Component, uid: str, window: Window
) -> date | datetime | None:
    if _status(event) == "CANCELLED":
        return None
    start = _decoded(event, "DTSTART")
    if start is None:
        raise UnparseableResource("event without dtstart")
    if "RRULE" in event or "RDATE" in event or _has_overrides(calendar, uid):
        return _next_occurrence(calendar, uid, window)
    return start if _overlaps(_as_utc(start), _event_end(event, start), window) else None


def _has_overrides(calendar: icalendar.cal.Component, uid: str) -> bool:
    return any(
        "RECURRENCE-ID" in c and _text(c, "UID").strip() == uid for c in calendar.walk("VEVENT")
    )


_FOLD = re.compile(r"\r?\n[ \t]")
_NESTED = re.compile(r"^BEGIN:(VTIMEZONE|VALARM)\b.*?^END:\1\b", re.I | re.M | re.S)
_VEVENT = re.compile(r"^BEGIN:VEVENT\b(.*?)^END:VEVENT\b", re.I | re.M | re.S)
_BEGIN_VEVENT = re.compile(r"^BEGIN:VEVENT\b", re.I | re.M)
_PROPERTY = re.compile(r"^([A-Za-z0-9-]+)[;:]", re.M)
_DATE_VALUE = re.compile(r"^(DTSTART|DTEND)(?:;[^:\r\n]*)?:(\d{4})(\d{2})(\d{2})(?:T\d{6}Z?)?\r?$", re.I | re.M)
# Properties that can put an occurrence anywhere: the full parse decides.
_MOVABLE = frozenset({"RRULE", "RDATE", "EXRULE", "RECURRENCE-ID", "DURATION"})
# A zone moves a local time by at most a day (a broken VTIMEZONE, such as
# TZOFFSETTO:+5328 in the wild, by a little more), and an all-day DTSTART
# without DTEND lasts one day: a week of slack covers them all.
_SLACK = timedelta(days=7)


def certainly_ended(text: str, before: datetime) -> bool:
    """True only when every VEVENT in `text` surely ended before `before`.

    A look at the raw text, so that the calendar's history (events are
    fetched without a server-side time-range) is not parsed on every request.
    It answers False at the first doubt: a recurrence, a DURATION, a value it
    cannot read, a VEVENT without DTSTART. Sub-components (VTIMEZONE, VALARM)
    are set aside first, as their DTSTART, RRULE and DURATION are not the event's.
    """
    body = _NESTED.sub("", _FOLD.sub("", text))
    events = _VEVENT.findall(body)
    if not events or len(events) != len(_BEGIN_VEVENT.findall(body)):
        return False
    latest: date | None = None
    for event in events:
        names = {name.upper() for name in _PROPERTY.findall(event)}
        if names & _MOVABLE or "DTSTART" not in names:
            return False
        values = _DATE_VALUE.findall(event)
        # Every DTSTART and DTEND line must be one we read, or we know nothing.
        if len(values) != sum(1 for name in _PROPERTY.findall(event) if name.upper() in ("DTSTART", "DTEND")):
            return False
        for _name, year, month, day in values:
            try:
                found = date(int(year), int(month), int(day))
            except ValueError:
                return False
            latest = found if latest is None or found > latest else latest
    if latest is None:
        return False
    return datetime.combine(latest, time.min, tzinfo=timezone.utc) + _SLACK <= before


# The properties liveness and titles are read from, and what they depend on.
_READ = frozenset({
    "BEGIN", "END", "VERSION", "PRODID", "UID", "SUMMARY", "STATUS", "DUE", "COMPLETED", "DTSTART",
    "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE", "EXRULE", "RECURRENCE-ID",
    "TZID", "TZOFFSETFROM", "TZOFFSETTO", "TZNAME",
})
_LINE_NAME = re.compile(r"^([A-Za-z0-9-]+)")


def _only_what_we_read(text: str) -> str:
    lines = _FOLD.sub("", text).splitlines()
    kept = [line for line in lines if (m := _LINE_NAME.match(line)) and m.group(1).upper() in _READ]
    return "\r\n".join(kept) + "\r\n"


def parse_calendar(text: str) -> icalendar.cal.Component:
    """Parse a resource; a value we never read cannot make it unreadable.

    icalendar rejects a whole VTODO for one bad value anywhere in it (it is
    lenient with VEVENTs only): DAVx5 sends an empty `PRIORITY:`, which hid
    the task. So when parsing fails, it is tried once more with only the
    properties the resolver reads; if those are broken, the resource is skipped.
    """
    try:
        return icalendar.Calendar.from_ical(text)
    except Exception as err:  # icalendar raises ValueError and friends for bad text
        reduced = _only_what_we_read(text)
        if reduced.strip() and reduced != text:
            try:
                return icalendar.Calendar.from_ical(reduced)
            except Exception:
                pass
        raise UnparseableResource("not iCalendar") from err


def live_items(
    text: str,
    *,
    kind: Kind,
    collection_path: str,
    etag: str,
    window: Window,
) -> list[Item]:
    """The live items of `kind` in one resource; raises UnparseableResource."""
    if kind is Kind.EVENT and certainly_ended(text, window.start):
        return []
    calendar = parse_calendar(text)
    items: list[Item] = []
    try:
        for uid, component in _masters(calendar, COMPONENT[kind]).items():
            item = _item(calendar, component, uid=uid, kind=kind,
                         collection_path=collection_path, etag=etag, window=window)
            if item is not None:
                items.append(item)
    except UnparseableResource:
        raise
    except Exception as err:  # a value icalendar accepted but cannot decode
        raise UnparseableResource("bad property value") from err
    return items


def _item(
    calendar: icalendar.cal.Component,
    component: icalendar.cal.Component,
    *,
    uid: str,
    kind: Kind,
    collection_path: str,
    etag: str,
    window: Window,
) -> Item | None:
    title = _text(component, "SUMMARY")
    if kind is Kind.TASK:
        if not _task_is_open(component):
            return None
        due = _decoded(component, "DUE")
        return make_item(collection_path=collection_path, uid=uid, title=title, etag=etag,
                         kind=kind, status=_status(component),
                         due=_iso(due) if due is not None else None)
    start = _live_event_start(calendar, component, uid, window)
    if start is None:
        return None
    return make_item(collection_path=collection_path, uid=uid, title=title, etag=etag,
                     kind=kind, status=_status(component), start=_iso(start))

