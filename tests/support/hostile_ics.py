"""Hostile or merely odd calendar resources (issue: bounded work per resource).

Each builder takes the moment the test or benchmark treats as now and returns
the resource's iCalendar text. Shared by tests/hostile/test_hostile_calendars.py,
tests/calendars/test_bounds.py and bench/hostile.py.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Callable


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _calendar(*events: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject//hostile//EN\r\n" + "".join(events) + "END:VCALENDAR\r\n"


def _event(uid: str, summary: str, start: datetime, *lines: str, minutes: int = 30) -> str:
    body = "".join(f"{line}\r\n" for line in lines)
    return (f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20200101T000000Z\r\nSUMMARY:{summary}\r\n"
            f"DTSTART:{_stamp(start)}\r\nDTEND:{_stamp(start + timedelta(minutes=minutes))}\r\n{body}END:VEVENT\r\n")


def secondly_from_2020(now: datetime) -> str:
    return _calendar(_event("hostile-secondly-2020", "Hostile secondly old", datetime(2020, 1, 1, tzinfo=timezone.utc),
                            "RRULE:FREQ=SECONDLY", minutes=0))


def secondly_last_week(now: datetime) -> str:
    return _calendar(_event("hostile-secondly-week", "Hostile secondly recent", now - timedelta(days=7),
                            "RRULE:FREQ=SECONDLY", minutes=0))


def secondly_20_days_ago(now: datetime) -> str:
    return _calendar(_event("hostile-secondly-20d", "Hostile secondly twenty days", now - timedelta(days=20),
                            "RRULE:FREQ=SECONDLY", minutes=0))


def minutely_from_2020(now: datetime) -> str:
    return _calendar(_event("hostile-minutely-2020", "Hostile minutely old", datetime(2020, 1, 1, tzinfo=timezone.utc),
                            "RRULE:FREQ=MINUTELY", minutes=0))


def minutely_last_week(now: datetime) -> str:
    return _calendar(_event("hostile-minutely-week", "Hostile minutely recent", now - timedelta(days=7),
                            "RRULE:FREQ=MINUTELY", minutes=0))


def impossible_rule(now: datetime) -> str:
    return _calendar(_event("hostile-feb-30", "Hostile impossible", datetime(2020, 1, 1, 9, tzinfo=timezone.utc),
                            "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"))


def impossible_secondly_rule(now: datetime) -> str:
    return _calendar(_event("hostile-feb-30-secondly", "Hostile impossible secondly",
                            datetime(2020, 1, 1, 9, tzinfo=timezone.utc),
                            "RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", minutes=0))


def rdate_40000(now: datetime) -> str:
    first = datetime(2010, 1, 1, 9, tzinfo=timezone.utc)
    dates = ",".join(_stamp(first + timedelta(hours=6 * i)) for i in range(40_000))
    return _calendar(_event("hostile-rdate", "Hostile many dates", first, f"RDATE:{dates}"))


def overrides_3000(now: datetime) -> str:
    first = datetime(2018, 1, 1, 9, tzinfo=timezone.utc)
    master = _event("hostile-overrides", "Hostile overrides", first, "RRULE:FREQ=DAILY")
    moved = [
        _event("hostile-overrides", "Hostile overrides (moved)", first + timedelta(days=i, hours=1),
               f"RECURRENCE-ID:{_stamp(first + timedelta(days=i))}")
        for i in range(3_000)
    ]
    return _calendar(master, *moved)


def long_title(now: datetime) -> str:
    """A live event whose SUMMARY is 200 KB: read, and cut to its first MAX_TITLE_CHARS characters (items.py)."""
    title = "Hostile long title " + "padding words " * (200_000 // 14)
    return _calendar(_event("hostile-long-title", title, now + timedelta(days=2)))


def long_uid(now: datetime) -> str:
    """A live event whose UID is 200 KB: every envelope would carry it whole, so it is skipped."""
    return _calendar(_event("hostile-long-uid-" + "x" * 200_000, "Hostile long uid", now + timedelta(days=2)))


def nested_alarms(now: datetime) -> str:
    opening = "".join(f"BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:a{i}\r\nTRIGGER:-PT{i + 1}M\r\n" for i in range(200))
    closing = "END:VALARM\r\n" * 200
    event = _event("hostile-alarms", "Hostile nested alarms", now + timedelta(days=1)).replace(
        "END:VEVENT\r\n", opening + closing + "END:VEVENT\r\n")
    return _calendar(event)


# name -> (builder, UID, what the reader must do with it: a skip reason or "live")
HOSTILE: dict[str, tuple[Callable[[datetime], str], str, str]] = {
    "secondly_from_2020": (secondly_from_2020, "hostile-secondly-2020", "live"),
    "secondly_last_week": (secondly_last_week, "hostile-secondly-week", "live"),
    "secondly_20_days_ago": (secondly_20_days_ago, "hostile-secondly-20d", "live"),
    "minutely_from_2020": (minutely_from_2020, "hostile-minutely-2020", "live"),
    "minutely_last_week": (minutely_last_week, "hostile-minutely-week", "live"),
    "impossible_rule": (impossible_rule, "hostile-feb-30", "recurrence_too_complex"),
    "impossible_secondly_rule": (impossible_secondly_rule, "hostile-feb-30-secondly", "recurrence_too_complex"),
    "rdate_40000": (rdate_40000, "hostile-rdate", "too_many_dates"),
    "overrides_3000": (overrides_3000, "hostile-overrides", "too_many_overrides"),
    "long_title": (long_title, "hostile-long-title", "live"),
    "nested_alarms": (nested_alarms, "hostile-alarms", "too_many_components"),
    "long_uid": (long_uid, "hostile-long-uid", "uid_too_long"),
}
