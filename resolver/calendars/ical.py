"""Turn one CalDAV resource's iCalendar text into live items, in two steps.

1. `read_resource(text)` parses the resource once into `ResourceFacts`: small,
   frozen values (per UID: title, status, dates, the recurrence definition and
   its overrides) that do not depend on the moment or the zone of a request,
   so they can be kept while the resource's ETag is unchanged. No icalendar
   object is kept.
2. `items_from(facts, ...)` decides liveness for one request's window and
   zone, and lists each live event's occurrences in it.

Liveness is decided here, on the client, for every resource the server
returns: servers differ in how well they apply a calendar-query filter, so the
filter only saves bandwidth and never decides what is live.

Anyone who can send an invitation can put a resource into a calendar, so the
work per resource is bounded: its size, its number of components, overrides
and listed dates are checked on the raw text before it is parsed, and a
series is expanded within a step budget (`recurrence.py`). A resource beyond
a bound is skipped with a reason, like an unreadable one. A title beyond
MAX_TITLE_CHARS is kept, cut (resolver/domain/items.py).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Callable, Iterable

import icalendar

from resolver.calendars import quickread, recurrence
from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM, Item, Kind, Occurrence, cut_title, make_item

logger = logging.getLogger("resolver.calendars")

CLOSED_TASK_STATUSES = frozenset({"COMPLETED", "CANCELLED"})
COMPONENT = {Kind.TASK: "VTODO", Kind.EVENT: "VEVENT"}
UTC = timezone.utc


class UnparseableResource(Exception):
    """The resource's text is not iCalendar we can read, or is beyond a bound; it is skipped, not fatal."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime


def window_from(now: datetime, horizon_days: int) -> Window:
    return Window(start=now, end=now + timedelta(days=horizon_days))


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on the work one resource may cost (README: "Hostile calendars")."""

    max_bytes: int = 1024 * 1024
    max_components: int = 1000
    max_depth: int = 8
    max_overrides: int = 1000
    max_dates: int = 2000
    recurrence_budget: int = recurrence.DEFAULT_BUDGET


DEFAULT_LIMITS = Limits()

# Values as read: a date (all-day), a naive datetime (floating: read in the
# request's zone), or an aware datetime.
When = date | datetime


@dataclass(frozen=True, slots=True)
class Override:
    """One instance of a series changed by a component with a RECURRENCE-ID."""

    recurrence_id: When
    status: str | None
    start: When | None
    end: When | None
    duration: timedelta | None


@dataclass(frozen=True, slots=True)
class ComponentFacts:
    """What liveness, occurrences and matching need of one UID's master component."""

    uid: str
    name: str  # VTODO or VEVENT
    title: str
    status: str | None
    due: When | None = None
    completed: bool = False
    start: When | None = None
    end: When | None = None
    duration: timedelta | None = None
    rrule: str | None = None
    rdates: tuple[When | tuple[When, When | timedelta], ...] = ()
    exdates: tuple[When, ...] = ()
    overrides: tuple[Override, ...] = ()
    # A value this component needs but that cannot be read ("bad due"): it
    # skips the resource only when the component is asked for (open task,
    # event not cancelled), as before the split.
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceFacts:
    components: tuple[ComponentFacts, ...]


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


class _Bad(Exception):
    pass


def _decoded(component: icalendar.cal.Component, name: str) -> When | None:
    prop = component.get(name)
    if prop is None:
        return None
    if isinstance(prop, list):
        prop = prop[0]
    try:
        value = getattr(prop, "dt", None)
    except Exception:  # icalendar 7 raises BrokenCalendarProperty on reading a broken value
        value = None
    if isinstance(value, (date, datetime)):
        return value
    raise _Bad(f"bad {name.lower()}")


def _duration(component: icalendar.cal.Component) -> timedelta | None:
    prop = component.get("DURATION")
    if isinstance(prop, list):
        prop = prop[0]
    value = getattr(prop, "dt", None)
    return value if isinstance(value, timedelta) else None


def _date_list(component: icalendar.cal.Component, name: str) -> list:
    props = component.get(name)
    if props is None:
        return []
    if not isinstance(props, list):
        props = [props]
    found = []
    for prop in props:
        for value in getattr(prop, "dts", ()):
            found.append(value.dt)
    return found


_BEGIN_OR_END = re.compile(r"^(BEGIN|END):", re.I | re.M)
_RECURRENCE_ID = re.compile(r"^RECURRENCE-ID[;:]", re.I | re.M)
_DATE_LIST = re.compile(r"^(?:RDATE|EXDATE)[;:][^\r\n]*", re.I | re.M)


def check_bounds(text: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse, on the raw text and before any parse, a resource beyond a bound."""
    if len(text) > limits.max_bytes or (
        len(text) * 4 > limits.max_bytes and len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes
    ):
        raise UnparseableResource("resource_too_large")
    unfolded = _FOLD.sub("", text)
    if len(_RECURRENCE_ID.findall(unfolded)) > limits.max_overrides:
        raise UnparseableResource("too_many_overrides")
    dates = 0
    for line in _DATE_LIST.findall(unfolded):
        dates += line.count(",") + 1
        if dates > limits.max_dates:
            raise UnparseableResource("too_many_dates")
    depth = components = 0
    for found in _BEGIN_OR_END.finditer(unfolded):
        if found.group(1).upper() == "BEGIN":
            components += 1
            depth += 1
            if components > limits.max_components or depth > limits.max_depth:
                raise UnparseableResource("too_many_components")
        else:
            depth = max(depth - 1, 0)


def read_resource(text: str, *, limits: Limits = DEFAULT_LIMITS) -> ResourceFacts:
    """Parse one resource into window-independent facts; raises UnparseableResource."""
    check_bounds(text, limits)
    return _read_checked(text)


def _read_checked(text: str) -> ResourceFacts:
    # Plain resources (most of them) are read without icalendar's general parser: quickread.py.
    calendar = quickread.parse(text) or parse_calendar(text)
    try:
        return ResourceFacts(components=tuple(
            _facts(name, uid, master, overrides)
            for name in ("VTODO", "VEVENT")
            for uid, (master, overrides) in _by_uid(calendar, name).items()
        ))
    except UnparseableResource:
        raise
    except Exception as err:  # a value icalendar accepted but cannot decode
        raise UnparseableResource("bad property value") from err


# A UID is an identifier, not text to show: it cannot be cut like a title (the item
# would no longer resolve by it), and every envelope carries it whole. Real ones are
# tens of characters (a UUID, an Exchange GOID in hex: under 200); a longer one is
# an attack on every envelope listing the item, and its resource is skipped.
MAX_UID_CHARS = 1024


def _by_uid(calendar: icalendar.cal.Component, name: str) -> dict[str, tuple[icalendar.cal.Component, list]]:
    """Per UID: the series master (or the first component seen), and the overrides."""
    found: dict[str, tuple[icalendar.cal.Component | None, list]] = {}
    for component in calendar.walk(name):
        uid = _text(component, "UID").strip()
        if not uid:
            continue
        if len(uid) > MAX_UID_CHARS:
            raise UnparseableResource("uid_too_long")
        master, overrides = found.get(uid, (None, []))
        if "RECURRENCE-ID" in component:
            overrides.append(component)
        elif master is None:
            master = component
        found[uid] = (master, overrides)
    # A UID with overrides only: the first of them stands for the item, as before.
    return {uid: (master if master is not None else overrides[0], overrides if master is not None else overrides[1:])
            for uid, (master, overrides) in found.items()}


def _facts(name: str, uid: str, master: icalendar.cal.Component, overrides: list) -> ComponentFacts:
    # Cut here (both parsers' components come through here), so that the parse memo keeps
    # at most MAX_TITLE_CHARS of a hostile SUMMARY; make_item marks the item (items.py).
    title, _cut = cut_title(_text(master, "SUMMARY"))
    status = _status(master)
    if name == "VTODO":
        try:
            due, error = _decoded(master, "DUE"), None
        except _Bad as bad:
            due, error = None, str(bad)
        return ComponentFacts(uid=uid, name=name, title=title, status=status, due=due,
                              completed="COMPLETED" in master, error=error)
    error = None
    start = end = None
    try:
        start = _decoded(master, "DTSTART")
        end = _decoded(master, "DTEND")
    except _Bad as bad:
        error = str(bad)
    if error is None and start is None:
        error = "event without dtstart"
    rrule = master.get("RRULE")
    if isinstance(rrule, list):
        rrule = rrule[0]
    rrule_text = rrule.to_ical().decode("utf-8", "replace") if rrule is not None else None
    if rrule_text is not None:
        try:
            recurrence.parse_rule(rrule_text)
        except recurrence.BadRule:
            error = error or "bad property value"
    moved = []
    for component in overrides:
        try:
            rid = _decoded(component, "RECURRENCE-ID")
            moved.append(Override(recurrence_id=rid, status=_status(component),
                                  start=_decoded(component, "DTSTART"), end=_decoded(component, "DTEND"),
                                  duration=_duration(component)))
        except _Bad:
            error = error or "bad property value"
    # A master that is itself an override (no master in the resource) is a single instance.
    is_instance = "RECURRENCE-ID" in master
    return ComponentFacts(
        uid=uid, name=name, title=title, status=status, start=start, end=end, duration=_duration(master),
        rrule=None if is_instance else rrule_text,
        rdates=() if is_instance else tuple(_date_list(master, "RDATE")),
        exdates=() if is_instance else tuple(_date_list(master, "EXDATE")),
        overrides=tuple(moved), error=error,
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
    href: str = "",
    tz: tzinfo | None = None,
    limits: Limits = DEFAULT_LIMITS,
    closed: list[Item] | None = None,
) -> list[Item]:
    """The live items of `kind` in one resource (the done ones appended to `closed`, as `items_from` says);
    raises UnparseableResource."""
    check_bounds(text, limits)
    if kind is Kind.EVENT and certainly_ended(text, window.start):
        return []
    facts = _read_checked(text)
    return items_from(facts, kind=kind, collection_path=collection_path, href=href, etag=etag, closed=closed,
                      window=window, tz=tz, limits=limits)


def items_from(
    facts: ResourceFacts,
    *,
    kind: Kind,
    collection_path: str,
    href: str = "",
    etag: str,
    window: Window,
    tz: tzinfo | None = None,
    limits: Limits = DEFAULT_LIMITS,
    exact: list[bool] | None = None,
    closed: list[Item] | None = None,
) -> list[Item]:
    """The live items of `kind` in these facts for this window; raises UnparseableResource.

    `tz` is the zone floating times and all-day dates are read in (None: UTC).
    `exact`: as for `occurrences`, for every series read.
    `closed`: when given, the items that are not live because they are done (a task COMPLETED or
    CANCELLED, an event CANCELLED with an occurrence in the window) are appended to it. A closed
    component that cannot be read is left out, never a reason to skip the resource.
    """
    zone = tz or UTC
    name = COMPONENT[kind]
    items: list[Item] = []
    for component in facts.components:
        if component.name != name:
            continue
        item = _task(component, collection_path, href, etag) if kind is Kind.TASK else \
            _event(component, collection_path, href, etag, window, zone, limits, exact)
        if item is not None:
            items.append(item)
        elif closed is not None and _is_closed(component, kind):
            done = _closed(component, kind, collection_path, href, etag, window, zone, limits, exact)
            if done is not None:
                closed.append(done)
    return items


def _is_closed(c: ComponentFacts, kind: Kind) -> bool:
    if kind is Kind.TASK:
        return c.status in CLOSED_TASK_STATUSES or c.completed
    return c.status == "CANCELLED"


def _closed(c: ComponentFacts, kind: Kind, collection_path: str, href: str, etag: str, window: Window,
            zone: tzinfo, limits: Limits, exact: list[bool] | None = None) -> Item | None:
    """The item of a done component, built as a live one would be (an event: its occurrences in the window)."""
    if c.error is not None:
        return None
    if kind is Kind.TASK:
        return make_item(collection_path=collection_path, uid=c.uid, title=c.title, etag=etag, kind=Kind.TASK,
                         status=c.status or "COMPLETED", due=c.due, href=href)
    try:
        return _event_item(c, collection_path, href, etag, window, zone, limits, exact)
    except UnparseableResource:
        return None


FOREVER = datetime.max.replace(tzinfo=UTC)


# How far past the horizon a series is looked at to know when its next
# occurrence comes into the window (items_until).
SERIES_LOOKAHEAD = timedelta(days=1)


def items_until(
    facts: ResourceFacts,
    *,
    kind: Kind,
    collection_path: str,
    href: str = "",
    etag: str,
    window: Window,
    tz: tzinfo | None = None,
    limits: Limits = DEFAULT_LIMITS,
    closed: list[Item] | None = None,
) -> tuple[list[Item], datetime]:
    """`items_from`, and until when a later window of the same length gives the same items.

    Lets a request reuse the items built for an unchanged resource instead of
    building them again (caldav.py). Tasks never depend on the window. An
    event's live occurrences change only when the window's start passes the
    end of one of them (it is over) or the start of a later one minus the
    horizon (it comes into the window): the earliest such instant is the
    bound. For a series the next occurrence past the horizon is looked for
    SERIES_LOOKAHEAD ahead (the bound is at most that far); a series whose
    occurrences were cut short (the cap, or the step budget) is never reused.
    A bound of `window.start` means: not reusable for any later window.
    """
    exact = [True]
    items = items_from(facts, kind=kind, collection_path=collection_path, href=href, etag=etag, window=window,
                       tz=tz, limits=limits, exact=exact, closed=closed)
    if kind is Kind.TASK:
        return items, FOREVER
    if not exact[0]:
        return items, window.start
    zone = tz or UTC
    horizon = window.end - window.start
    # A live occurrence ends (an instant: once the window starts after it); so does a cancelled one, kept
    # (`closed` holds this resource's alone: the caller passes a list per resource).
    edges = [o.start if o.end == o.start else o.end for item in items + (closed or []) for o in item.occurrences]
    for c in facts.components:
        if c.name != "VEVENT" or (c.status == "CANCELLED" and closed is None):
            continue
        if c.start is None:
            return items, window.start
        if c.rrule or c.rdates or c.overrides:
            coming = _series_coming(c, window, zone, limits)
            if coming is None:
                return items, window.start
            edges.extend(coming)
        else:
            edges.append(_aware(c.start, zone) - horizon)  # it comes into the window
    return items, min((edge for edge in edges if edge >= window.start), default=FOREVER)


def _series_coming(c: ComponentFacts, window: Window, zone: tzinfo, limits: Limits) -> list[datetime] | None:
    """When the series' next occurrences past the horizon come into the window, or None when unknown."""
    horizon = window.end - window.start
    ahead = Window(start=window.end, end=window.end + SERIES_LOOKAHEAD)
    exact = [True]
    try:
        found = occurrences(c, ahead, zone, budget=limits.recurrence_budget, exact=exact)
    except (recurrence.RecurrenceTooComplex, recurrence.BadRule):
        return None
    if not exact[0]:
        return None
    return [window.start + SERIES_LOOKAHEAD] + [o.start - horizon for _, o in found if o.start >= window.end]


def _task(c: ComponentFacts, collection_path: str, href: str, etag: str) -> Item | None:
    if c.status in CLOSED_TASK_STATUSES or c.completed:
        return None
    if c.error is not None:
        raise UnparseableResource(c.error)
    return make_item(collection_path=collection_path, uid=c.uid, title=c.title, etag=etag, kind=Kind.TASK,
                     status=c.status, due=c.due, href=href)


def _event(c: ComponentFacts, collection_path: str, href: str, etag: str, window: Window,
           zone: tzinfo, limits: Limits, exact: list[bool] | None = None) -> Item | None:
    if c.status == "CANCELLED":
        return None
    return _event_item(c, collection_path, href, etag, window, zone, limits, exact)


def _event_item(c: ComponentFacts, collection_path: str, href: str, etag: str, window: Window,
                zone: tzinfo, limits: Limits, exact: list[bool] | None = None) -> Item | None:
    """An event's item with its occurrences in the window (None: it has none there); raises
    UnparseableResource. A live one and a cancelled one kept apart are built alike."""
    if c.error is not None:
        raise UnparseableResource(c.error)
    try:
        found = occurrences(c, window, zone, budget=limits.recurrence_budget, exact=exact)
    except recurrence.RecurrenceTooComplex:
        raise UnparseableResource("recurrence_too_complex") from None
    except recurrence.BadRule:
        raise UnparseableResource("bad property value") from None
    if not found:
        return None
    first_start, first = found[0]
    return make_item(collection_path=collection_path, uid=c.uid, title=c.title, etag=etag, kind=Kind.EVENT,
                     status=c.status, start=first_start, href=href,
                     occurrences=tuple(occurrence for _, occurrence in found))


def _iso(value: When) -> str:
    return value.isoformat()


def _aware(value: When, zone: tzinfo) -> datetime:
    """An instant: all-day dates at midnight and floating times in the request's zone."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=zone) if value.tzinfo is None else value
    return datetime.combine(value, time.min, tzinfo=zone)


def _end_of(start: When, end: When | None, duration: timedelta | None, zone: tzinfo) -> datetime:
    if end is not None:
        return _aware(end, zone)
    if duration is not None:
        return _aware(start, zone) + duration
    # RFC 5545 3.6.1: a date-only start lasts one day; a date-time start, no time.
    if not isinstance(start, datetime):
        return _aware(start, zone) + timedelta(days=1)
    return _aware(start, zone)


def _overlaps(start: datetime, end: datetime, window: Window) -> bool:
    if end == start:  # an instant is live when it falls inside the window
        return window.start <= start < window.end
    return start < window.end and end > window.start


def occurrences(c: ComponentFacts, window: Window, zone: tzinfo, *,
                budget: int = recurrence.DEFAULT_BUDGET,
                exact: list[bool] | None = None) -> list[tuple[When, Occurrence]]:
    """The live occurrences of an event overlapping the window, in order of start.

    Each comes with its start as the calendar gives it (for `Item.start`). At
    most MAX_OCCURRENCES_PER_ITEM. Raises RecurrenceTooComplex only when the
    budget ran out before a single live occurrence was found: a series found
    live keeps the occurrences found so far. `exact`, when given, has its
    one element set to False when the list was cut short (by the cap or the
    budget), so that it is not every occurrence overlapping the window.
    """
    start = c.start
    assert start is not None
    is_series = bool(c.rrule or c.rdates or c.overrides)
    end = _end_of(start, c.end, c.duration, zone)
    if not is_series:
        begin = _aware(start, zone)
        if _overlaps(begin, end, window):
            return [(start, Occurrence(start=begin, end=end))]
        return []
    length = end - _aware(start, zone)
    removed = {_key(value, zone) for value in c.exdates}
    removed.update(_key(o.recurrence_id, zone) for o in c.overrides)
    found: list[tuple[datetime, When, Occurrence]] = []

    def add(original: When, begin: When, finish: datetime, status: str | None, rid: When) -> None:
        if status == "CANCELLED":
            return
        aware_begin = _aware(begin, zone)
        if _overlaps(aware_begin, finish, window):
            found.append((aware_begin, begin, Occurrence(start=aware_begin, end=finish, recurrence_id=_iso(rid))))

    listed = _place_listed(c, zone, length, removed, add)
    # DTSTART is the first instance of a series (RFC 5545 3.8.5.3), also with RDATE only.
    if _key(start, zone) not in removed and _key(start, zone) not in listed:
        add(start, start, end, c.status, start)
    if c.rrule:
        complete = _rule_occurrences(c, window, zone, length, removed | listed | {_key(start, zone)}, budget,
                                     found, add)
        if exact is not None and not complete:
            exact[0] = False
    if exact is not None and len(found) > MAX_OCCURRENCES_PER_ITEM:
        exact[0] = False
    found.sort(key=lambda entry: entry[0])
    return [(original, occurrence) for _, original, occurrence in found[:MAX_OCCURRENCES_PER_ITEM]]


def _place_listed(c: ComponentFacts, zone: tzinfo, length: timedelta, removed: set[datetime],
                  add: Callable[[When, When, datetime, str | None, When], None]) -> set[datetime]:
    """Places the overrides and RDATEs (short lists, bounded by Limits) each on its own; the RDATEs' instants.

    The rule's expansion skips those instants, so that an RDATE repeating a rule's start is one occurrence.
    """
    for o in c.overrides:
        o_start = o.start if o.start is not None else o.recurrence_id
        add(o.recurrence_id, o_start, _end_of(o_start, o.end, o.duration if o.duration is not None else
                                             (length if o.end is None else None), zone), o.status, o.recurrence_id)
    listed = set()
    for value in c.rdates:
        if isinstance(value, tuple):  # a PERIOD: start and end or duration
            begin, until = value
            finish = _aware(begin, zone) + until if isinstance(until, timedelta) else _aware(until, zone)
        else:
            begin, finish = value, _aware(value, zone) + length
        listed.add(_key(begin, zone))
        if _key(begin, zone) not in removed:
            add(begin, begin, finish, c.status, begin)
    return listed


def _key(value: When, zone: tzinfo) -> datetime:
    return _aware(value, zone)  # aware datetimes hash and compare by instant


def _rule_occurrences(c: ComponentFacts, window: Window, zone: tzinfo, length: timedelta,
                      skip: set[datetime], budget: int, found: list, add) -> bool:
    """Appends the rule's occurrences in the window to `found`; False when cut short (cap or budget)."""
    start = c.start
    all_day = not isinstance(start, datetime)
    base = datetime.combine(start, time.min) if all_day else start
    # Occurrences that began before the window and still last into it count too.
    earliest = window.start - max(length, timedelta(0))
    after = earliest if base.tzinfo is not None else earliest.astimezone(zone).replace(tzinfo=None)
    kept = 0
    append = found.append
    # The hot loop of a dense series (up to MAX_OCCURRENCES_PER_ITEM per
    # request): one aware start per value, compared and hashed as is (aware
    # datetimes compare and hash by instant, whatever their zone).
    try:
        for value in recurrence.starts(c.rrule, base, after=after, floating_zone=zone, budget=budget):
            begin = value if value.tzinfo is not None else value.replace(tzinfo=zone)
            if begin >= window.end:
                return True  # in order of start: nothing later is in the window
            if skip and begin in skip:
                continue
            finish = begin + length
            if finish == begin:
                if begin < window.start:
                    continue
            elif finish <= window.start:
                continue
            original = value.date() if all_day else value
            append((begin, original, Occurrence(start=begin, end=finish, recurrence_id=original.isoformat())))
            kept += 1
            if kept >= MAX_OCCURRENCES_PER_ITEM:
                return False
    except recurrence.RecurrenceTooComplex:
        if not found:
            raise
        logger.info("series %s: occurrence budget spent after %d occurrences", c.uid, len(found))
        return False
    return True
