"""A realistic benchmark calendar, built on a real Radicale in one PUT per collection.

Seeding item by item costs one HTTP round trip and one storage commit per
item (minutes at 5,000 items). Radicale accepts a PUT of a whole VCALENDAR to
a collection URL and splits it into one item per UID, so each collection is
written with a single request.

The calendar for `n`:
- `n` open tasks, a tenth of them without STATUS; and `n // 3` closed tasks
  (COMPLETED or CANCELLED), so a quarter of all tasks are closed;
- `n` live events (inside the 90-day window), about one in twelve a weekly
  or daily series that began in the past, a few with a moved occurrence;
  and `n // 4` past events the server's time-range filter drops;
- split over two collections, `work` (60 %) and `personal` (40 %);
- titles drawn from a fixed vocabulary with a fixed seed, so reruns build the
  same calendar; plus a few anchor titles the benchmark references use.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import requests

COLLECTIONS = (("work", "Work", 0.6), ("personal", "Personal", 0.4))

# Anchors: titles that occur exactly once (exact references) or twice, in
# both collections (a deterministic ambiguity).
EXACT_TASK = "Renew passport before the Lisbon trip"
EXACT_EVENT = "Quarterly board pack review"
DUPLICATE_TASK = "Weekly report"
DUPLICATE_EVENT = "Team standup"
# Non-exact references: a typo and a partial title of the anchors.
FUZZY_TASK = "renew pasport lisbon"
FUZZY_EVENT = "quartely board review"

_VERBS = (
    "Review", "Draft", "Call", "Email", "Book", "Prepare", "Update", "Finish", "Plan", "Check",
    "Send", "Fix", "Order", "Schedule", "Pay", "Renew", "Clean", "Write", "Submit", "Organise",
)
_OBJECTS = (
    "budget", "slides", "contract", "invoice", "roadmap", "newsletter", "report", "proposal",
    "hiring plan", "release notes", "onboarding doc", "tax return", "insurance claim", "car service",
    "dentist appointment", "flight to Berlin", "hotel in Porto", "birthday present", "garden shed",
    "kitchen tap", "team offsite", "design spec", "pricing page", "customer interview", "API review",
    "security audit", "backup drive", "school forms", "vet visit", "gym membership",
)
_CONTEXTS = (
    "", "", "", "for Q3", "with Anna", "with the landlord", "for the board", "before Friday",
    "for Acme Corp", "with Jonas", "for the Madrid office", "(urgent)", "v2", "for mum",
)
_EVENT_KINDS = (
    "Sync", "1:1", "Workshop", "Review", "Lunch", "Call", "Demo", "Retro", "Planning", "Interview",
    "Dinner", "Appointment", "Training", "Kick-off", "Check-in",
)
_EVENT_TOPICS = (
    "design", "platform", "marketing", "sales pipeline", "hiring", "roadmap", "finance", "support",
    "data team", "mobile app", "partner", "budget", "security", "Anna", "Jonas", "the architect",
    "school", "physio", "book club", "dentist",
)
_OPEN_STATUSES = ("NEEDS-ACTION", "NEEDS-ACTION", "IN-PROCESS")
_STAMP = "20260101T000000Z"


@dataclass(frozen=True)
class Corpus:
    """The iCalendar text of each collection, and how many components of each sort."""

    calendars: dict[str, str]
    counts: dict[str, int]


def _fmt(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")


def _task_title(rng: random.Random) -> str:
    context = rng.choice(_CONTEXTS)
    title = f"{rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
    return f"{title} {context}" if context else title


def _event_title(rng: random.Random) -> str:
    return f"{rng.choice(_EVENT_TOPICS).capitalize()} {rng.choice(_EVENT_KINDS).lower()}"


def _todo(uid: str, title: str, *, status: str | None, due: datetime | None,
          completed: datetime | None = None) -> list[str]:
    lines = ["BEGIN:VTODO", f"UID:{uid}", f"DTSTAMP:{_STAMP}", f"SUMMARY:{_escape(title)}"]
    if status:
        lines.append(f"STATUS:{status}")
    if due is not None:
        lines.append(f"DUE:{_fmt(due)}")
    if completed is not None:
        lines.append(f"COMPLETED:{_fmt(completed)}")
    lines.append("END:VTODO")
    return lines


def _vevent(uid: str, title: str, *, start: datetime, hours: int = 1, rrule: str | None = None,
            recurrence_id: datetime | None = None) -> list[str]:
    lines = ["BEGIN:VEVENT", f"UID:{uid}", f"DTSTAMP:{_STAMP}", f"SUMMARY:{_escape(title)}"]
    if recurrence_id is not None:
        lines.append(f"RECURRENCE-ID:{_fmt(recurrence_id)}")
    lines += [f"DTSTART:{_fmt(start)}", f"DTEND:{_fmt(start + timedelta(hours=hours))}"]
    if rrule:
        lines.append(f"RRULE:{rrule}")
    lines.append("END:VEVENT")
    return lines


def build(n: int, *, now: datetime, seed: int = 5) -> Corpus:
    """The benchmark calendar for `n` (see the module docstring)."""
    rng = random.Random(seed * 1_000_003 + n)
    base = now.replace(minute=0, second=0, microsecond=0)
    parts: dict[str, list[str]] = {cid: [] for cid, _name, _share in COLLECTIONS}
    counts = {"open_tasks": 0, "closed_tasks": 0, "tasks_without_status": 0,
              "live_events": 0, "recurring_events": 0, "past_events": 0}

    def place(index: int, total: int) -> str:
        # The first 60 % of each sort go to work, the rest to personal.
        return COLLECTIONS[0][0] if index < total * COLLECTIONS[0][2] else COLLECTIONS[1][0]

    anchors_task = {0: EXACT_TASK, 1: DUPLICATE_TASK, n - 1: DUPLICATE_TASK}
    for i in range(n):
        title = anchors_task.get(i) or _task_title(rng)
        no_status = i % 10 == 9
        status = None if no_status else rng.choice(_OPEN_STATUSES)
        due = base + timedelta(days=rng.randint(1, 120)) if rng.random() < 0.6 else None
        parts[place(i, n)] += _todo(f"bench-task-{n}-{i}", title, status=status, due=due)
        counts["open_tasks"] += 1
        counts["tasks_without_status"] += no_status
    closed = n // 3
    for i in range(closed):
        done = base - timedelta(days=rng.randint(1, 200))
        if i % 4 == 0:
            lines = _todo(f"bench-closed-{n}-{i}", _task_title(rng), status="CANCELLED", due=None)
        else:
            lines = _todo(f"bench-closed-{n}-{i}", _task_title(rng), status="COMPLETED", due=None,
                          completed=done)
        parts[place(i, closed)] += lines
        counts["closed_tasks"] += 1

    anchors_event = {0: EXACT_EVENT, 1: DUPLICATE_EVENT, n - 1: DUPLICATE_EVENT}
    for i in range(n):
        title = anchors_event.get(i) or _event_title(rng)
        uid = f"bench-event-{n}-{i}"
        target = place(i, n)
        if i % 12 == 5:
            # A series that began months ago and is still running.
            first = base - timedelta(days=rng.randint(30, 400), hours=rng.randint(0, 8))
            parts[target] += _vevent(uid, title, start=first, rrule=rng.choice(("FREQ=WEEKLY", "FREQ=DAILY")))
            if i % 48 == 5:
                # One occurrence moved by an hour: an override in the same resource.
                parts[target] += _vevent(uid, title, start=first + timedelta(days=7, hours=1),
                                         recurrence_id=first + timedelta(days=7))
            counts["recurring_events"] += 1
        else:
            start = base + timedelta(days=rng.randint(0, 85), hours=rng.randint(1, 10))
            parts[target] += _vevent(uid, title, start=start, hours=rng.randint(1, 3))
        counts["live_events"] += 1
    past = n // 4
    for i in range(past):
        start = base - timedelta(days=rng.randint(2, 300))
        parts[place(i, past)] += _vevent(f"bench-past-{n}-{i}", _event_title(rng), start=start)
        counts["past_events"] += 1

    calendars = {
        cid: "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//lifeproject//bench//EN",
                          *lines, "END:VCALENDAR", ""])
        for cid, lines in parts.items()
    }
    return Corpus(calendars=calendars, counts=counts)


def upload(base_url: str, username: str, password: str, corpus: Corpus, *, timeout: float = 600.0) -> None:
    """One PUT per collection: Radicale creates the calendar and splits it into items."""
    session = requests.Session()
    session.auth = (username, password)
    names = {cid: name for cid, name, _share in COLLECTIONS}
    for cid, text in corpus.calendars.items():
        url = f"{base_url.rstrip('/')}/{username}/{cid}/"
        response = session.put(url, data=text.encode("utf-8"),
                               headers={"Content-Type": "text/calendar; charset=utf-8"}, timeout=timeout)
        response.raise_for_status()
        body = (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>'
            f"<D:displayname>{names[cid]}</D:displayname>"
            "</D:prop></D:set></D:propertyupdate>"
        )
        session.request("PROPPATCH", url, data=body.encode("utf-8"),
                        headers={"Content-Type": "application/xml"}, timeout=timeout).raise_for_status()
