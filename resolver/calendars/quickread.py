"""A quick parse of plain resources; icalendar parses everything else.

Why: a cold read parses every resource of the kind, and icalendar's general
content-line machinery (a quote-aware scan of every character, a Parameters
mapping and a case-insensitive dict per line) cost 0.17 ms for a six-line
task: two thirds of what the plain full read costs on Cyrus, and the whole
of what made a fresh process's first resolution slower than it (issue 27).

What it reads the same way: the lines of the properties `ical.py` reads,
decoded by icalendar's own value types (`types_factory.for_property`, the
same unescaping, the same TZID lookup), in the same component objects'
shape (`get`, `in`, `walk`, `.dt`), so `ical._facts` reads both alike. Lines it
never reads are only checked for a plain name, not decoded: where icalendar
would reject the resource for one of them, `ical.parse_calendar` parses it
again without them, which gives what this reader gives.

What it declines (`None`, and icalendar parses the resource): anything it is
not sure to read as icalendar does: a VTIMEZONE whose TZID icalendar's zone
provider does not know by name (icalendar would make and cache a zone of its
own, for later parses too), a name not in upper case, a parameter other than
VALUE and TZID on a date or LANGUAGE on a text, a quote or backslash in
parameters, an empty date, a value icalendar's type refuses, a VTODO, VEVENT
or VTIMEZONE not directly inside the one VCALENDAR, END not matching BEGIN, a
line outside the calendar or a lone carriage return.
`tests/calendars/test_quickread.py` compares both parses on the iCalendar
corpus and on generated variants.
"""
from __future__ import annotations

import functools
import re
import zoneinfo
from datetime import date, datetime, time, timedelta
from typing import Any

import icalendar
from icalendar.parser.content_line import NEWLINE, UFOLD
from icalendar.parser.property import unescape_backslash
from icalendar.prop import vDDDTypes
from icalendar.timezone import tzp

TYPES = icalendar.Calendar.types_factory
# Name, parameters (no quote, backslash, comma, colon or blank in them), value.
_LINE = re.compile(r"([A-Z0-9-]+)((?:;[A-Z-]+=[^;:\",\\\s]*)*):(.*)\Z", re.S)
_PARAM = re.compile(r";([A-Z-]+)=([^;]*)")
_NAME = re.compile(r"[A-Z][A-Z0-9-]*\Z")

ITEMS = frozenset({"VTODO", "VEVENT"})
DATES = frozenset({"DUE", "COMPLETED", "DTSTART", "DTEND", "RDATE", "EXDATE", "RECURRENCE-ID"})
TEXTS = frozenset({"UID", "SUMMARY", "STATUS"})
READ = DATES | TEXTS | {"DURATION", "RRULE", "EXRULE"}
# Where icalendar applies a TZID parameter (ComponentIcalParser.datetime_names).
_ZONED = frozenset({"DTSTART", "DTEND", "RECURRENCE-ID", "DUE", "RDATE", "EXDATE"})
_VALUES = frozenset({"DATE", "DATE-TIME"})
# One value each (not lists), and the types vDDDTypes would accept (its constructor refuses others).
_SINGLE = frozenset({"DUE", "COMPLETED", "DTSTART", "DTEND", "RECURRENCE-ID"})
_DDD = (datetime, date, timedelta, time, tuple)
# A VTIMEZONE's lines: decoded (so that a value icalendar refuses is its to judge), never kept.
_ZONE_LINES = frozenset({"TZID", "TZOFFSETFROM", "TZOFFSETTO", "TZNAME"})


class QuickComponent:
    """A VTODO or VEVENT's read properties, in the shape ical.py reads from icalendar's Component.

    Texts are the decoded strings (what `str()` of a vText gives), a single
    date carries its decoded value as `.dt`, everything else is icalendar's
    own property object.
    """

    __slots__ = ("name", "properties")

    def __init__(self, name: str) -> None:
        self.name = name
        self.properties: dict[str, Any] = {}

    def get(self, name: str, default: Any = None) -> Any:
        return self.properties.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self.properties

    def add(self, name: str, value: Any) -> None:
        # A property given twice becomes a list, as Component.add makes it.
        known = self.properties.get(name)
        if known is None:
            self.properties[name] = value
        elif isinstance(known, list):
            known.append(value)
        else:
            self.properties[name] = [known, value]


class QuickCalendar:
    __slots__ = ("components",)

    def __init__(self, components: list[QuickComponent]) -> None:
        self.components = components

    def walk(self, name: str) -> list[QuickComponent]:
        return [c for c in self.components if c.name == name]


class _Decline(Exception):
    pass


def parse(text: str) -> QuickCalendar | None:
    """The resource's VTODOs and VEVENTs, or None where icalendar must parse it."""
    try:
        return _parse(text)
    except _Decline:
        return None


def _parse(text: str) -> QuickCalendar:
    stack: list[str] = []
    components: list[QuickComponent] = []
    current: QuickComponent | None = None
    zone_named = False  # this VTIMEZONE's TZID was seen
    done = False
    for line in NEWLINE.split(UFOLD.sub("", text)):
        if not line:
            continue
        found = _LINE.match(line)
        if found is None or done or "\r" in line:
            raise _Decline
        name, params, value = found.groups()
        if name == "BEGIN":
            current = _begin(stack, value, params, current)
            zone_named = zone_named and value != "VTIMEZONE"
        elif name == "END":
            if params or not stack or stack[-1] != value:
                raise _Decline
            stack.pop()
            if current is not None and len(stack) == 1:
                components.append(current)
                current = None
            done = not stack
        elif not stack:
            raise _Decline
        elif name in READ or name in _ZONE_LINES:
            # Decoded wherever it is (a VALARM's, a VTIMEZONE's too): icalendar's
            # reparse without unread lines (ical.parse_calendar) would decode it there.
            decoded = _decoded(name, params, value)
            if name == "TZID" and stack[-1] == "VTIMEZONE":
                if zone_named:
                    raise _Decline  # two TZIDs in one VTIMEZONE: icalendar's to read
                _known_zone(str(decoded))
                zone_named = True
            if current is not None and len(stack) == 2 and name in READ:
                current.add(name, decoded)
    if not done:
        raise _Decline
    return QuickCalendar(components)


def _begin(stack: list[str], value: str, params: str, current: QuickComponent | None) -> QuickComponent | None:
    if params or not _NAME.match(value):
        raise _Decline
    depth = len(stack)
    if (depth == 0) != (value == "VCALENDAR") or (value in ITEMS or value == "VTIMEZONE") and depth != 1:
        raise _Decline
    stack.append(value)
    if depth == 1:
        return QuickComponent(value) if value in ITEMS else None
    return current


def _known_zone(tzid: str) -> None:
    """A VTIMEZONE whose TZID icalendar's provider knows by name changes nothing icalendar reads.

    icalendar caches a zone made from a VTIMEZONE (for every later parse, too)
    only when its provider does not know the TZID; a known one is looked up by
    name with or without the component. Any other VTIMEZONE is icalendar's to read.
    """
    if not tzp.uses_zoneinfo() or tzid not in _iana_names():
        raise _Decline


@functools.cache
def _iana_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _decoded(name: str, params: str, value: str) -> Any:
    """One read property's value, decoded as icalendar's parser decodes it."""
    found = dict(_PARAM.findall(params)) if params else {}
    allowed = ({"VALUE", "TZID"} if name in DATES else {"LANGUAGE"} if name in TEXTS else set())
    if not found.keys() <= allowed or ("TZID" in found and name not in _ZONED):
        raise _Decline
    kind = found.get("VALUE")
    if (kind is not None and kind not in _VALUES) or (not value and name not in TEXTS):
        raise _Decline
    factory = _factory(name, kind)
    if hasattr(factory, "get_value_from_content_line"):
        raise _Decline
    tzid = found.get("TZID")
    unescaped = unescape_backslash(value)
    try:
        parsed = factory.from_ical(unescaped, tzid) if tzid else factory.from_ical(unescaped)
        if name in TEXTS:
            return parsed  # what str() of icalendar's vText gives, without building one
        if factory is vDDDTypes and name in _SINGLE and isinstance(parsed, _DDD):
            return _When(parsed)  # the .dt that ical.py reads, without a Parameters mapping
        return factory(parsed)
    except Exception as err:  # icalendar refuses the value: it decides what that means
        raise _Decline from err


@functools.lru_cache(maxsize=64)
def _factory(name: str, kind: str | None) -> type:
    return TYPES.for_property(name, kind)


class _When:
    __slots__ = ("dt",)

    def __init__(self, dt: Any) -> None:
        self.dt = dt
