"""The labelled retrieval set (bench/data/retrieval/): loading it as items and as iCalendar.

Two calendars of two people, each in its own folder (CALENDARS):

    a: bench/data/retrieval/      b: bench/data/retrieval/b/
    meta.json          the reference clock (`now`), its time zone and the event horizon
    items.jsonl        one task or event per line (uid, collection, kind, title, due | start/end,
                       rrule, exdate, overrides, status)
    references*.jsonl  one labelled reference per line (id, text, kind, category, expected,
                       expected_occurrence_start, split, note, calendar, absent_type)

A reference's `calendar` ("a" when missing) names the calendar it is resolved
against; every `references*.jsonl` of both folders is read (`load_references`).
`split` is train | calibrate | test: train for choosing rules and features,
calibrate for fitting a relevance model's probabilities, test read once.
An `absent` reference (nothing expected) says why in `absent_type`:
unrelated, similar (shares words, means something else), other_kind (exists
only as the other kind) or completed (names a COMPLETED task or CANCELLED event).

An item whose `status` is COMPLETED (task) or CANCELLED (event) is not live:
the memory calendar leaves it out, and the iCalendar keeps it with its STATUS,
so that a real server holds it and the reader must drop it itself.

The same items feed the memory calendar (`memory_items`, occurrences computed
here with dateutil over [now, now + horizon]) and a real CalDAV server
(`ics_calendars`, one VCALENDAR per collection, series as RRULE/EXDATE plus
RECURRENCE-ID overrides, so the server and our reader expand them themselves).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from resolver.evaluation.cases import ABSENT_TYPES


DATA = Path(__file__).resolve().parent / "data" / "retrieval"
# Each calendar's folder: its meta.json, items.jsonl and references*.jsonl.
CALENDARS = {"a": DATA, "b": DATA / "b"}
DEFAULT_CALENDAR = "a"

CATEGORIES = ("partial", "reordered", "typo", "compound", "initialism", "word_form", "prefix",
              "time_expression", "synonym_paraphrase", "exact", "duplicates",
              # Issue 21: written as people and agents write.
              "date_alone", "clitic", "diacritic", "time_form", "sentence", "foreign_title", "disambiguation",
              "absent",
              # Issue 29: the reference in another language than the title (bench/data/retrieval/issue29.py).
              "cross_language")
# Categories whose references name several items, all expected first in any order.
LISTS = ("duplicates", "date_alone")
# References to nothing in the calendar: no expected item, the right outcome is a clarification.
ABSENT = "absent"
# Categories whose event references name the occurrence they mean.
TIMED = ("time_expression", "time_form", "sentence")
# train: rules and features are chosen here; calibrate: a model's probabilities are fitted here;
# test: read once, for the figures reported.
SPLITS = ("train", "calibrate", "test")
# A set written later, blind (holdout/README.md): never among the files above, so no training, tuning or
# default run reads it; `bench/recall.py --holdout` reads it alone, once per closing measurement.
HOLDOUT = "holdout"
HOLDOUT_FILE = DATA / "holdout" / "references.jsonl"
# Why an `absent` reference names nothing live: ABSENT_TYPES, the case format's (resolver/evaluation/cases.py).
# Statuses of an item that is not live: a done task, a called-off event.
CLOSED_STATUSES = frozenset({"COMPLETED", "CANCELLED"})
COLLECTION_NAMES = {"work": "Work", "personal": "Personal", "home": "Home",
                    # calendar b's
                    "studio": "Studio", "admin": "Admin", "family": "Family", "garden": "Garden", "choir": "Choir"}


@dataclass(frozen=True)
class Meta:
    now: datetime
    time_zone: str
    horizon_days: int

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)


def load_meta(root: Path = DATA) -> Meta:
    raw = json.loads((root / "meta.json").read_text(encoding="utf-8"))
    return Meta(now=datetime.fromisoformat(raw["now"]), time_zone=raw["time_zone"],
                horizon_days=int(raw["horizon_days"]))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def load_items(root: Path = DATA) -> list[dict[str, Any]]:
    return _jsonl(root / "items.jsonl")


def is_live(item: dict[str, Any]) -> bool:
    """Not a COMPLETED task nor a CANCELLED event."""
    return str(item.get("status", "")).upper() not in CLOSED_STATUSES


def calendar_of(ref: dict[str, Any]) -> str:
    return ref.get("calendar", DEFAULT_CALENDAR)


def reference_files() -> list[Path]:
    """Every references*.jsonl of every calendar's folder, in a fixed order."""
    return [path for root in CALENDARS.values() for path in sorted(root.glob("references*.jsonl"))]


def load_references(calendar: str | None = None, *, files: list[Path] | None = None) -> list[dict[str, Any]]:
    """The references of every file (or of `files`), each with its `calendar`; only `calendar`'s if given."""
    refs = []
    for path in reference_files() if files is None else files:
        for ref in _jsonl(path):
            ref.setdefault("calendar", DEFAULT_CALENDAR)
            if calendar is None or ref["calendar"] == calendar:
                refs.append(ref)
    return refs


def occurrences(item: dict[str, Any], meta: Meta, *, limit: int) -> list[tuple[datetime, datetime, str | None]]:
    """The event's live occurrences (start, end, recurrence_id) in [now, now + horizon], by start: the
    certificate's own expansion (resolver/evaluation/ranking.py), so the bench and the evaluation agree."""
    from resolver.evaluation.ranking import occurrences as expanded

    return expanded(item, meta, limit=limit)


def memory_items(items: list[dict[str, Any]], meta: Meta) -> list[Any]:
    """`resolver.domain.items.Item`s for a MemoryCalendar (collection paths as it lists them), live ones only:
    the certificate's own (resolver/evaluation/ranking.py `calendar_items`). An open event with no
    occurrence in the horizon is a mistake in the set, not an item to drop."""
    from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM
    from resolver.evaluation.ranking import calendar_items

    for raw in items:
        if raw["kind"] == "event" and is_live(raw) and not occurrences(raw, meta, limit=MAX_OCCURRENCES_PER_ITEM):
            raise ValueError(f"event {raw['uid']} has no occurrence in the horizon")
    return calendar_items(items, meta)


def memory_closed(items: list[dict[str, Any]], meta: Meta) -> list[Any]:
    """The set's completed tasks and cancelled events as the reader keeps them apart (FetchResult.closed)."""
    from resolver.evaluation.ranking import closed_items

    return closed_items(items, meta)


def _when(value: str, zone: ZoneInfo) -> date | datetime:
    if len(value) == 10:
        return date.fromisoformat(value)
    return datetime.fromisoformat(value).astimezone(zone)


def ics_calendars(items: list[dict[str, Any]], meta: Meta) -> dict[str, str]:
    """One iCalendar text per collection, every time with TZID and its VTIMEZONE; closed items with their STATUS."""
    from icalendar import Calendar, Event, Todo, vRecur

    zone = meta.zone
    stamp = datetime(2026, 12, 1, tzinfo=ZoneInfo("UTC"))
    calendars: dict[str, Calendar] = {}
    for raw in items:
        cal = calendars.get(raw["collection"])
        if cal is None:
            cal = calendars[raw["collection"]] = Calendar()
            cal.add("prodid", "-//lifeproject//retrieval bench//EN")
            cal.add("version", "2.0")
        if raw["kind"] == "task":
            todo = Todo()
            todo.add("uid", raw["uid"])
            todo.add("dtstamp", stamp)
            todo.add("summary", raw["title"])
            todo.add("status", raw.get("status", "NEEDS-ACTION"))
            if raw.get("due"):
                todo.add("due", _when(raw["due"], zone))
            cal.add_component(todo)
            continue
        master = Event()
        master.add("uid", raw["uid"])
        master.add("dtstamp", stamp)
        master.add("summary", raw["title"])
        master.add("dtstart", _when(raw["start"], zone))
        master.add("dtend", _when(raw["end"], zone))
        if raw.get("status"):
            master.add("status", raw["status"])
        if raw.get("rrule"):
            master.add("rrule", vRecur.from_ical(raw["rrule"]))
        for value in raw.get("exdate", ()):
            master.add("exdate", _when(value, zone))
        cal.add_component(master)
        for override in raw.get("overrides", ()):
            moved = Event()
            moved.add("uid", raw["uid"])
            moved.add("dtstamp", stamp)
            moved.add("summary", raw["title"])
            moved.add("recurrence-id", _when(override["recurrence_id"], zone))
            moved.add("dtstart", _when(override["start"], zone))
            moved.add("dtend", _when(override["end"], zone))
            cal.add_component(moved)
    texts = {}
    for cid, cal in sorted(calendars.items()):
        cal.add_missing_timezones()
        texts[cid] = cal.to_ical().decode("utf-8")
    return texts


def upload(base_url: str, username: str, password: str, calendars: dict[str, str], *,
           timeout: float = 120.0) -> None:
    """One PUT per collection (Radicale creates it and splits it by UID), then its display name."""
    import requests

    session = requests.Session()
    session.auth = (username, password)
    for cid, text in calendars.items():
        url = f"{base_url.rstrip('/')}/{username}/{cid}/"
        session.put(url, data=text.encode("utf-8"), headers={"Content-Type": "text/calendar; charset=utf-8"},
                    timeout=timeout).raise_for_status()
        body = ('<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>'
                f"<D:displayname>{COLLECTION_NAMES.get(cid, cid)}</D:displayname></D:prop></D:set></D:propertyupdate>")
        session.request("PROPPATCH", url, data=body.encode("utf-8"), headers={"Content-Type": "application/xml"},
                        timeout=timeout).raise_for_status()
