"""Occurrences of an RRULE at or after a moment, for a bounded amount of work.

Walking a series from its DTSTART costs as much as the series is old and
dense: `FREQ=SECONDLY` from 2020 is hundreds of millions of steps before the
first occurrence of today. Anyone who can send an invitation can put such a
series into a calendar, so the walk never starts at DTSTART when it does not
have to:

- The start is moved forward arithmetically, by a whole number of the rule's
  periods (FREQ x INTERVAL), to just before the moment asked for. The BY*
  values RFC 5545 takes from DTSTART when absent (the weekday of a weekly
  rule, the day of a monthly one, the time of day of anything coarser than
  that unit) are made explicit first, so the moved rule produces exactly the
  same occurrences from there on. COUNT is moved along only where every period
  holds exactly one occurrence; otherwise the walk starts at DTSTART.
- Whatever remains is bounded in steps (days examined plus occurrences
  produced), not in wall-clock time, so the same calendar gets the same answer
  on a slow and a fast machine. dateutil examines the days of a period without
  yielding when none matches (`BYMONTH=2;BYMONTHDAY=30` never matches, and
  dateutil would look until the year 9999), so the step counter sits on the
  day filter itself: a neutral BYMONTH (all twelve months) or BYDAY (all seven
  days) that counts each day it is asked about.

dateutil (installed with icalendar) does the expansion itself.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any, Iterator

from dateutil import rrule as du

# Steps per series (days examined plus occurrences produced) before giving up.
DEFAULT_BUDGET = 10_000

_FREQ = {"YEARLY": du.YEARLY, "MONTHLY": du.MONTHLY, "WEEKLY": du.WEEKLY, "DAILY": du.DAILY,
         "HOURLY": du.HOURLY, "MINUTELY": du.MINUTELY, "SECONDLY": du.SECONDLY}
_DAYS = {"MO": du.MO, "TU": du.TU, "WE": du.WE, "TH": du.TH, "FR": du.FR, "SA": du.SA, "SU": du.SU}
_BYDAY = re.compile(r"^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_UNTIL = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z?))?$")
_INTS = {"BYSETPOS": "bysetpos", "BYMONTH": "bymonth", "BYMONTHDAY": "bymonthday",
         "BYYEARDAY": "byyearday", "BYWEEKNO": "byweekno", "BYHOUR": "byhour",
         "BYMINUTE": "byminute", "BYSECOND": "bysecond"}
# Seconds per period of the rules whose periods all have the same length in wall-clock time.
_FIXED = {du.SECONDLY: 1, du.MINUTELY: 60, du.HOURLY: 3600, du.DAILY: 86400, du.WEEKLY: 604800}


class RecurrenceTooComplex(Exception):
    """The step budget ran out before the series gave an answer."""


class BadRule(ValueError):
    """An RRULE value we cannot read."""


@lru_cache(maxsize=2048)
def parse_rule(text: str) -> tuple[tuple[str, Any], ...]:
    """RRULE text -> dateutil keyword arguments (without dtstart and until), as a hashable tuple.

    UNTIL is returned raw under "until" as (date, time | None, is_utc), to be read
    against DTSTART later. Raises BadRule.
    """
    parts: dict[str, str] = {}
    for piece in text.strip().split(";"):
        if not piece.strip():
            continue
        name, sep, value = piece.partition("=")
        if not sep:
            raise BadRule(f"bad rrule part {piece!r}")
        parts[name.strip().upper()] = value.strip()
    try:
        kwargs: dict[str, Any] = {"freq": _FREQ[parts.pop("FREQ", "").upper()]}
        if "INTERVAL" in parts:
            kwargs["interval"] = int(parts.pop("INTERVAL"))
            if kwargs["interval"] < 1:
                raise BadRule("interval below 1")
        if "COUNT" in parts:
            kwargs["count"] = int(parts.pop("COUNT"))
        if "UNTIL" in parts:
            found = _UNTIL.match(parts.pop("UNTIL").upper())
            if not found:
                raise BadRule("bad until")
            y, m, d, hh, mm, ss, z = found.groups()
            clock = time(int(hh), int(mm), int(ss)) if hh is not None else None
            kwargs["until"] = (date(int(y), int(m), int(d)), clock, bool(z))
        if "WKST" in parts:
            kwargs["wkst"] = _DAYS[parts.pop("WKST").upper()]
        if "BYDAY" in parts:
            days = []
            for value in parts.pop("BYDAY").upper().split(","):
                found = _BYDAY.match(value.strip())
                if not found:
                    raise BadRule("bad byday")
                ordinal, name = found.groups()
                days.append(_DAYS[name](int(ordinal)) if ordinal and int(ordinal) != 0 else _DAYS[name])
            kwargs["byweekday"] = tuple(days)
        for name, key in _INTS.items():
            if name in parts:
                kwargs[key] = tuple(int(v) for v in parts.pop(name).split(",") if v.strip())
    except (KeyError, ValueError) as err:
        raise BadRule(str(err)) from err
    # Anything else (X- parts, RSCALE, SKIP) is ignored, as dateutil would refuse it.
    return tuple(sorted(kwargs.items()))


class _Counted(tuple):
    """A BY* value set that counts how often dateutil asks it about a day."""

    def __new__(cls, values: Any, meter: "_Meter") -> "_Counted":
        self = super().__new__(cls, values)
        self.meter = meter
        return self

    def __contains__(self, value: object) -> bool:
        self.meter.step()
        return tuple.__contains__(self, value)


class _Meter:
    __slots__ = ("left",)

    def __init__(self, budget: int) -> None:
        self.left = budget

    def step(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise RecurrenceTooComplex()


def _until(raw: tuple[date, time | None, bool], dtstart: datetime, floating_zone: tzinfo) -> datetime:
    """UNTIL as dateutil wants it: aware when DTSTART is, naive when it is not."""
    day, clock, is_utc = raw
    # A date UNTIL includes that whole day.
    value = datetime.combine(day, clock if clock is not None else time(23, 59, 59))
    if is_utc:
        value = value.replace(tzinfo=timezone.utc)
        if dtstart.tzinfo is None:  # a floating or all-day series read in the request's zone
            return value.astimezone(floating_zone).replace(tzinfo=None)
        return value
    if dtstart.tzinfo is not None:
        return value.replace(tzinfo=dtstart.tzinfo)
    return value


def _pinned(kwargs: dict[str, Any], dtstart: datetime) -> dict[str, Any]:
    """The BY* values dateutil would take from DTSTART, made explicit."""
    freq = kwargs["freq"]
    pinned = dict(kwargs)
    if not any(kwargs.get(k) for k in ("byweekday", "byyearday", "bymonthday", "byweekno")):
        if freq == du.YEARLY:
            pinned.setdefault("bymonth", (dtstart.month,))
            pinned["bymonthday"] = (dtstart.day,)
        elif freq == du.MONTHLY:
            pinned["bymonthday"] = (dtstart.day,)
        elif freq == du.WEEKLY:
            pinned["byweekday"] = (dtstart.weekday(),)
    if freq < du.HOURLY and not kwargs.get("byhour"):
        pinned["byhour"] = (dtstart.hour,)
    if freq < du.MINUTELY and not kwargs.get("byminute"):
        pinned["byminute"] = (dtstart.minute,)
    if freq < du.SECONDLY and not kwargs.get("bysecond"):
        pinned["bysecond"] = (dtstart.second,)
    return pinned


def _one_per_period(kwargs: dict[str, Any]) -> bool:
    """Every period holds exactly one occurrence: COUNT can be moved along with the start."""
    return kwargs["freq"] in _FIXED and not any(
        kwargs.get(k) for k in ("bysetpos", "bymonth", "bymonthday", "byyearday", "byweekno",
                                "byweekday", "byhour", "byminute", "bysecond"))


def _moved(kwargs: dict[str, Any], dtstart: datetime, target: datetime) -> tuple[dict[str, Any], datetime] | None:
    """The rule and start moved forward by whole periods to just before `target` (wall-clock).

    None when the series has no occurrence left after the move (COUNT used up).
    """
    freq, interval = kwargs["freq"], kwargs.get("interval", 1)
    wall = dtstart.replace(tzinfo=None)
    if target <= wall:
        return kwargs, dtstart
    if freq in _FIXED:
        step = _FIXED[freq] * interval
        periods = int((target - wall).total_seconds() // step) - 1  # one period of slack
        if periods <= 0:
            return kwargs, dtstart
        moved = wall + timedelta(seconds=periods * step)
    elif freq == du.MONTHLY:
        months = (target.year - wall.year) * 12 + target.month - wall.month
        periods = months // interval - 1
        if periods <= 0:
            return kwargs, dtstart
        index = wall.year * 12 + wall.month - 1 + periods * interval
        moved = wall.replace(year=index // 12, month=index % 12 + 1, day=1)
    else:  # YEARLY
        periods = (target.year - wall.year) // interval - 1
        if periods <= 0:
            return kwargs, dtstart
        moved = wall.replace(year=wall.year + periods * interval, month=1, day=1)
    new = _pinned(kwargs, dtstart)
    if "count" in kwargs:
        if not _one_per_period(kwargs):
            return kwargs, dtstart  # cannot tell how many were used up: walk from the start
        new["count"] = kwargs["count"] - periods
        if new["count"] <= 0:
            return None
        new = dict(kwargs, count=new["count"])  # one per period: nothing to pin
    return new, moved.replace(tzinfo=dtstart.tzinfo)


def _watch(rule: du.rrule, meter: _Meter) -> None:
    """Put the step counter on the day filter dateutil asks about every day.

    A neutral filter is added where the rule has none: all twelve months (not
    for a yearly rule with BYDAY ordinals, whose meaning BYMONTH changes), or
    else all seven weekdays. dateutil reads these sets when iteration starts.
    """
    if rule._bymonth:
        rule._bymonth = _Counted(rule._bymonth, meter)
    elif not (rule._freq == du.YEARLY and rule._bynweekday):
        rule._bymonth = _Counted(range(1, 13), meter)
    elif rule._byweekno:
        raise RecurrenceTooComplex()  # no filter every day passes through: refuse rather than guess
    else:
        rule._byweekday = _Counted(rule._byweekday or range(7), meter)


def starts(rule_text: str, dtstart: datetime, *, after: datetime, floating_zone: tzinfo,
           budget: int = DEFAULT_BUDGET) -> Iterator[datetime]:
    """Occurrence starts of the rule at or after `after`, in order.

    `dtstart` and `after` are both aware or both naive (floating and all-day
    series are expanded in wall-clock time). Raises BadRule for a rule we cannot
    read and RecurrenceTooComplex, possibly after some starts, when the budget
    is spent.
    """
    kwargs = dict(parse_rule(rule_text))
    meter = _Meter(budget)
    if "until" in kwargs:
        kwargs["until"] = _until(kwargs["until"], dtstart, floating_zone)
        if kwargs["until"] < after:
            return
    target = after.astimezone(dtstart.tzinfo).replace(tzinfo=None) if dtstart.tzinfo else after
    simple = _one_per_period(kwargs)  # before the move, which makes the defaults explicit
    moved = _moved(kwargs, dtstart, target)
    if moved is None:
        return
    kwargs, start = moved
    if simple:
        yield from _arithmetic(kwargs, start, after, meter)
        return
    try:
        rule = du.rrule(dtstart=start, cache=False, **kwargs)
    except (ValueError, TypeError, OverflowError) as err:
        # "Invalid rrule byxxx generates an empty set" and friends: no occurrence ever.
        if "empty set" in str(err):
            return
        raise BadRule(str(err)) from err
    _watch(rule, meter)
    try:
        for value in rule:
            meter.step()
            if value >= after:
                yield value
    except (ValueError, OverflowError):
        return  # ran past the year 9999: no later occurrence


def _arithmetic(kwargs: dict[str, Any], start: datetime, after: datetime, meter: _Meter) -> Iterator[datetime]:
    """One occurrence per fixed-length period: start + n x step, in wall-clock time as dateutil counts.

    The same values as dateutil, without its per-period bookkeeping (about
    six times cheaper per occurrence): a dense series lists up to
    MAX_OCCURRENCES_PER_ITEM occurrences on every request.
    """
    step = timedelta(seconds=_FIXED[kwargs["freq"]] * kwargs.get("interval", 1))
    count, until, zone = kwargs.get("count"), kwargs.get("until"), start.tzinfo
    wall = start.replace(tzinfo=None)
    produced = 0
    try:
        while count is None or produced < count:
            value = wall.replace(tzinfo=zone) if zone is not None else wall
            if until is not None and value > until:
                return
            meter.step()
            if value >= after:
                yield value
            wall += step
            produced += 1
    except OverflowError:
        return  # past the year 9999
