"""Writing iCalendar items to a CalDAV server through the caldav package.

Used to seed the demo calendar and the test calendars; the resolver itself
never writes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Iterable

import caldav
from icalendar import Calendar, Event, Todo


@dataclass(frozen=True)
class Spec:
    """One task or event to create. `when` is DUE for tasks, DTSTART for events."""

    uid: str
    title: str | None
    kind: str = "task"
    status: str | None = None
    when: datetime | date | None = None
    end: datetime | date | None = None
    completed: datetime | None = None
    rrule: dict | None = None
    extra: dict = field(default_factory=dict)


def to_ical(spec: Spec) -> str:
    calendar = Calendar()
    calendar.add("prodid", "-//lifeproject//seed//EN")
    calendar.add("version", "2.0")
    component = Todo() if spec.kind == "task" else Event()
    component.add("uid", spec.uid)
    component.add("dtstamp", datetime(2026, 1, 1, tzinfo=timezone.utc))
    if spec.title is not None:
        component.add("summary", spec.title)
    if spec.status:
        component.add("status", spec.status)
    if spec.kind == "task":
        if spec.when is not None:
            component.add("due", spec.when)
        if spec.completed is not None:
            component.add("completed", spec.completed)
    else:
        start = spec.when or datetime.now(timezone.utc)
        component.add("dtstart", start)
        component.add("dtend", spec.end or (start + timedelta(hours=1)))
        if spec.rrule:
            component.add("rrule", spec.rrule)
    for name, value in spec.extra.items():
        component.add(name, value)
    calendar.add_component(component)
    return calendar.to_ical().decode("utf-8")


def client(url: str, username: str, password: str) -> caldav.DAVClient:
    return caldav.DAVClient(url=url, username=username, password=password, timeout=30, enable_rfc6764=False)


def ensure_calendar(principal: caldav.Principal, cal_id: str, name: str) -> caldav.Calendar:
    for calendar in principal.calendars():
        if calendar.url.path.rstrip("/").endswith("/" + cal_id):
            return calendar
    return principal.make_calendar(name=name, cal_id=cal_id)


def seed(url: str, username: str, password: str, collections: dict[str, tuple[str, Iterable[Spec]]]) -> None:
    """Create each collection `{id: (display name, specs)}` and PUT every item."""
    principal = client(url, username, password).principal()
    for cal_id, (name, specs) in collections.items():
        calendar = ensure_calendar(principal, cal_id, name)
        for spec in specs:
            calendar.save_object(
                caldav.Todo if spec.kind == "task" else caldav.Event, to_ical(spec)
            )


def demo_collections(now: datetime) -> dict[str, tuple[str, list[Spec]]]:
    """The demo calendar: a dozen tasks and events, two with similar titles."""
    today = now.replace(hour=9, minute=0, second=0, microsecond=0)
    return {
        "work": ("Work", [
            Spec("demo-portfolio-outline", "Draft portfolio outline", when=today + timedelta(days=3)),
            Spec("demo-portfolio-slides", "Review portfolio slides", when=today + timedelta(days=5)),
            Spec("demo-quarterly-report", "Quarterly report", status="IN-PROCESS", when=today + timedelta(days=10)),
            Spec("demo-expenses", "Submit travel expenses", status="NEEDS-ACTION"),
            Spec("demo-old-invoice", "Pay old invoice", status="COMPLETED", completed=today - timedelta(days=2)),
            Spec("demo-weekly-sync", "Weekly sync", kind="event", when=today - timedelta(days=365),
                 rrule={"freq": "weekly"}),
            Spec("demo-design-review", "Design review", kind="event", when=today + timedelta(days=2)),
            Spec("demo-design-retro", "Design retro", kind="event", when=today + timedelta(days=4)),
        ]),
        "personal": ("Personal", [
            Spec("demo-groceries", "Buy groceries", when=today + timedelta(days=1)),
            Spec("demo-dentist", "Dentist appointment", kind="event", when=today + timedelta(days=6)),
            Spec("demo-plumber", "Call the plumber"),
            Spec("demo-birthday", "Mum's birthday dinner", kind="event", when=today + timedelta(days=12)),
        ]),
    }
