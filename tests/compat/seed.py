"""The 20 items every peer is seeded with (issue 27), the changes made to them, and the expected answers.

Tasks and events relative to now: open tasks, a recurring task, a completed
and a cancelled one, two with the same title, `pct%2541.ics` and
`with%20space.ics`; a weekly series, a daily series with an EXDATE, a TZID
event (with its VTIMEZONE), an all-day event, a past, a cancelled and an
ongoing one. Then an edit, an add, a delete and a DELETE + PUT on one href.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

NOW = datetime.now(timezone.utc).replace(microsecond=0, second=0)
DAY = timedelta(days=1)


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def _wrap(*components: str) -> str:
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject//compat//EN\r\n" + "".join(components)
            + "END:VCALENDAR\r\n")


def _component(name: str, uid: str, title: str, *lines: str) -> str:
    body = "".join(line + "\r\n" for line in lines)
    return f"BEGIN:{name}\r\nUID:{uid}\r\nDTSTAMP:{_utc(NOW)}\r\nSUMMARY:{title}\r\n{body}END:{name}\r\n"


def task(uid: str, title: str, *lines: str) -> str:
    return _wrap(_component("VTODO", uid, title, *lines))


def event(uid: str, title: str, *lines: str) -> str:
    return _wrap(_component("VEVENT", uid, title, *lines))


BERLIN = ("BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\n"
          "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\n"
          "END:STANDARD\r\nBEGIN:DAYLIGHT\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\n"
          "TZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n")
_tomorrow_nine = (NOW + DAY).replace(hour=9, minute=0)
_local = (NOW + 2 * DAY).strftime("%Y%m%dT140000")


def items() -> dict[str, str]:
    """Resource name (as PUT, percent-encoded) -> iCalendar text."""
    return {
        "t-outline.ics": task("t-outline", "Draft portfolio outline", f"DUE:{_utc(NOW + 3 * DAY)}"),
        "t-slides.ics": task("t-slides", "Prepare quarterly slides", "STATUS:NEEDS-ACTION"),
        "t-recurring.ics": task("t-recurring", "Water the plants", f"DTSTART:{_utc(NOW - 7 * DAY)}",
                                f"DUE:{_utc(NOW - 6 * DAY)}", "RRULE:FREQ=WEEKLY"),
        "t-completed.ics": task("t-completed", "File taxes", "STATUS:COMPLETED", f"COMPLETED:{_utc(NOW - DAY)}"),
        "t-cancelled.ics": task("t-cancelled", "Cancelled errand", "STATUS:CANCELLED"),
        "pct%2541.ics": task("t-pct", "Renew library card"),
        "with%20space.ics": task("t-space", "Book the car service"),
        "expenses.ics": task("t-travel", "Submit travel expenses", f"DUE:{_utc(NOW + 5 * DAY)}"),
        "t-edit.ics": task("t-edit", "Call the plumber"),
        "t-delete.ics": task("t-delete", "Return library books"),
        "t-dup-a.ics": task("t-dup-a", "Team offsite planning"),
        "t-dup-b.ics": task("t-dup-b", "Team offsite planning", f"DUE:{_utc(NOW + 9 * DAY)}"),
        "e-weekly.ics": event("e-weekly", "Weekly sync", f"DTSTART:{_utc(NOW - 30 * DAY)}",
                              f"DTEND:{_utc(NOW - 30 * DAY + timedelta(hours=1))}", "RRULE:FREQ=WEEKLY"),
        "e-exdate.ics": event("e-exdate", "Morning yoga class", f"DTSTART:{_utc(_tomorrow_nine - 3 * DAY)}",
                              f"DTEND:{_utc(_tomorrow_nine - 3 * DAY + timedelta(hours=1))}",
                              "RRULE:FREQ=DAILY;COUNT=10", f"EXDATE:{_utc(_tomorrow_nine)}"),
        "e-tzid.ics": _wrap(BERLIN, _component("VEVENT", "e-tzid", "Design review",
                                               f"DTSTART;TZID=Europe/Berlin:{_local}",
                                               f"DTEND;TZID=Europe/Berlin:{_local[:9]}150000")),
        "e-allday.ics": event("e-allday", "Company holiday", f"DTSTART;VALUE=DATE:{(NOW + 5 * DAY):%Y%m%d}",
                              f"DTEND;VALUE=DATE:{(NOW + 6 * DAY):%Y%m%d}"),
        "e-past.ics": event("e-past", "Past retro", f"DTSTART:{_utc(NOW - 10 * DAY)}",
                            f"DTEND:{_utc(NOW - 10 * DAY + timedelta(hours=1))}"),
        "e-cancelled.ics": event("e-cancelled", "Cancelled launch", "STATUS:CANCELLED",
                                 f"DTSTART:{_utc(NOW + 3 * DAY)}", f"DTEND:{_utc(NOW + 3 * DAY + timedelta(hours=1))}"),
        "e-ongoing.ics": event("e-ongoing", "Ongoing conference", f"DTSTART:{_utc(NOW - DAY)}",
                               f"DTEND:{_utc(NOW + 2 * DAY)}"),
        "e-dentist.ics": event("e-dentist", "Dentist appointment", f"DTSTART:{_utc(NOW + 2 * DAY)}",
                               f"DTEND:{_utc(NOW + 2 * DAY + timedelta(minutes=30))}"),
    }


# (reference, kind) -> the UID it must resolve to, a set of UIDs a clarification must offer, or None
# (nothing resolved: the item is not live, or no longer exists).
BEFORE: dict[tuple[str, str], str | frozenset[str] | None] = {
    ("Draft portfolio outline", "task"): "t-outline",
    ("Prepare quarterly slides", "task"): "t-slides",
    ("Water the plants", "task"): "t-recurring",
    ("Renew library card", "task"): "t-pct",
    ("Book the car service", "task"): "t-space",
    ("Submit travel expenses", "task"): "t-travel",
    ("Call the plumber", "task"): "t-edit",
    ("Return library books", "task"): "t-delete",
    ("Team offsite planning", "task"): frozenset({"t-dup-a", "t-dup-b"}),
    ("File taxes", "task"): None,
    ("Cancelled errand", "task"): None,
    ("Weekly sync", "event"): "e-weekly",
    ("Morning yoga class", "event"): "e-exdate",
    ("Design review", "event"): "e-tzid",
    ("Company holiday", "event"): "e-allday",
    ("Ongoing conference", "event"): "e-ongoing",
    ("Dentist appointment", "event"): "e-dentist",
    ("Past retro", "event"): None,
    ("Cancelled launch", "event"): None,
    ("Dentist appointment", "task"): None,
    ("Draft portfolio outline", "event"): None,
}


# The references that name a done item and no live one: each answers with `closed_item_matched` (and no other does).
CLOSED = frozenset({("File taxes", "task"), ("Cancelled errand", "task"), ("Cancelled launch", "event")})
# The references that name a live item of the other kind and none of theirs: each answers with
# `other_kind_matched` (and no other does).
OTHER_KIND = frozenset({("Dentist appointment", "task"), ("Draft portfolio outline", "event"),
                        # After the changes, asked as events: the tasks' state must hold the edit and the add
                        # (read again, or carried by the events' sync: reader._carry).
                        ("Call the electrician", "event"), ("Order new glasses", "event")})


def changes() -> list[tuple[str, str, str | None]]:
    """(action, resource name, new text): an edit, an add, a delete, a DELETE + PUT on one href."""
    return [
        ("put", "t-edit.ics", task("t-edit", "Call the electrician")),
        ("put", "pct%2541.ics", task("t-pct", "Renew library card soon")),
        ("put", "t-new.ics", task("t-new", "Order new glasses")),
        ("delete", "t-delete.ics", None),
        ("delete", "expenses.ics", None),
        ("put", "expenses.ics", task("t-conference", "Submit conference expenses")),
    ]


AFTER: dict[tuple[str, str], str | frozenset[str] | None] = {
    **{key: value for key, value in BEFORE.items()
       if key not in {("Call the plumber", "task"), ("Return library books", "task"),
                      ("Submit travel expenses", "task"), ("Renew library card", "task")}},
    ("Call the electrician", "task"): "t-edit",
    ("Renew library card soon", "task"): "t-pct",
    ("Order new glasses", "task"): "t-new",
    ("Return library books", "task"): None,
    ("Submit conference expenses", "task"): "t-conference",
    ("Submit travel expenses", "task"): None,
    ("Call the electrician", "event"): None,
    ("Order new glasses", "event"): None,
}

# Asked first after the changes: events by the titles of a task edited and a task added.
EVENTS_FIRST = {("Call the electrician", "event"): None, ("Order new glasses", "event"): None}

# What each live UID is titled after the changes (candidates must show these, never an old title).
TITLES_AFTER = {
    "t-outline": "Draft portfolio outline", "t-slides": "Prepare quarterly slides", "t-recurring": "Water the plants",
    "t-pct": "Renew library card soon", "t-space": "Book the car service", "t-conference": "Submit conference expenses",
    "t-edit": "Call the electrician", "t-new": "Order new glasses", "t-dup-a": "Team offsite planning",
    "t-dup-b": "Team offsite planning", "e-weekly": "Weekly sync", "e-exdate": "Morning yoga class",
    "e-tzid": "Design review", "e-allday": "Company holiday", "e-ongoing": "Ongoing conference",
    "e-dentist": "Dentist appointment",
}
