"""The same calendar on two independent CalDAV servers gives the same answers.

Radicale and Xandikos are seeded with the same `scenario_collections()`.
Item IDs derive from each server's collection URL path, and ETags are each
server's own, so answers are compared by UID, collection, title, status and
dates. A second part seeds both servers with events whose liveness a server's
time-range filter can get wrong, and checks the resolver is right on both.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import caldav
import pytest

from lifeproject import embedded_radicale
from lifeproject.seeding import client
from resolver import services
from resolver.calendars.caldav import CalDAVCalendar
from resolver.domain.errors import ResolverError
from resolver.domain.items import Item, Kind
from resolver.domain.pipeline import Outcome
from resolver.domain.ports import NoThresholds
from resolver.judges.disabled import DisabledJudge
from tests.conftest import RunningRadicale
from tests.support.xandikos import RunningXandikos, start_xandikos
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.slow

Server = RunningRadicale | RunningXandikos

# References over the core scenarios: exact titles, UIDs, case and NFKC
# folding, duplicates, closed and past items, partial and typo references,
# narrowing, scoping to a collection, and an unknown collection.
REFERENCES: list[tuple[str, str, list[str] | None]] = [
    ("Draft portfolio outline", "task", None),
    ("t-slides", "task", None),
    ("   dRAFT PORTFOLIO outline \t", "task", None),
    ("STRASSE REPARIEREN", "task", None),
    ("Straße reparieren", "task", None),
    ("padded   title", "task", None),
    ("Weekly report", "task", None),
    ("Team offsite planning", "task", None),
    ("Team offsite planning", "task", ["personal"]),
    ("Pay invoice", "task", None),
    ("Cancelled errand", "task", None),
    ("File taxes", "task", None),
    ("Call the plumber", "task", None),
    ("t-untitled", "task", None),
    ("portfolio", "task", None),
    ("portfolo outlin", "task", None),
    ("bulk chore", "task", None),
    ("bulk chore", "task", ["bulk"]),
    ("groceries", "task", ["personal", "work"]),
    ("zebra xylophone", "task", None),
    ("the of and", "task", None),
    ("Weekly sync", "event", None),
    ("weekly", "event", None),
    ("Past retro", "event", None),
    ("Cancelled launch", "event", None),
    ("Design review", "event", None),
    ("Ongoing conference", "event", None),
    ("Far future gala", "event", None),
    ("Dentist appointment", "event", ["personal"]),
    ("dentist", "event", None),
    ("Draft portfolio outline", "event", None),
    ("Design review", "task", None),
    ("anything", "task", ["no-such-collection"]),
]


def calendar_for(server: Server, **overrides: Any) -> CalDAVCalendar:
    values = server.settings()
    options: dict[str, Any] = {
        "url": str(values["CALDAV_URL"]),
        "username": str(values["CALDAV_USERNAME"]),
        "password": str(values["CALDAV_PASSWORD"]),
        "timeout": float(values["CALDAV_TIMEOUT"]),  # type: ignore[arg-type]
        "horizon_days": int(values["EVENT_HORIZON_DAYS"]),  # type: ignore[call-overload]
        "event_time_range": bool(values.get("EVENT_TIME_RANGE_FILTER", True)),
    }
    options.update(overrides)
    return CalDAVCalendar(**options)


def facts(item: Item) -> tuple[str | None, ...]:
    """What an item is, without what depends on the server (item ID, ETag)."""
    return (item.uid, item.collection_id, item.title, item.kind.value, item.status, item.due, item.start)


def server_free(details: dict[str, Any]) -> dict[str, Any]:
    """A warning's details without item IDs (`closed_item_matched` names the closed items by theirs)."""
    if "items" not in details:
        return details
    return {**details, "items": [{k: v for k, v in shown.items() if k != "item_id"} for shown in details["items"]]}


def answer(outcome: Outcome) -> dict[str, Any]:
    return {
        "status": outcome.status.value,
        "method": outcome.method.value if outcome.method else None,
        "item": facts(outcome.item) if outcome.item else None,
        "candidates": [facts(item) for item in outcome.candidates],
        "prompt": outcome.prompt,
        "warnings": [(w.code, server_free(w.details)) for w in outcome.warnings],
        "collections": outcome.collection_ids,
    }


def resolve_on(server: Server, text: str, kind: str, collection_ids: list[str] | None) -> dict[str, Any]:
    try:
        outcome = resolve_outcome(
            text=text, kind=kind, collection_ids=collection_ids, door="test",
            calendar=calendar_for(server), judge=DisabledJudge(), policy=NoThresholds(),
        )
    except ResolverError as err:
        return {"error": err.code, "details": err.details}
    return answer(outcome)


def live_facts(server: Server, kind: Kind, collection_ids: list[str] | None = None) -> set[tuple[str | None, ...]]:
    fetched = calendar_for(server).fetch(kind=kind, collection_ids=collection_ids)
    assert fetched.skipped == ()
    return {facts(item) for item in fetched.items}


def test_cross_server__live_items_identical(radicale: RunningRadicale, xandikos: RunningXandikos) -> None:
    """Both servers hold the same live tasks and events, by every server-independent fact."""
    for kind in Kind:
        on_radicale = live_facts(radicale, kind)
        assert on_radicale, kind
        assert on_radicale == live_facts(xandikos, kind), kind


def test_cross_server__collections_identical(radicale: RunningRadicale, xandikos: RunningXandikos) -> None:
    def listing(server: Server) -> list[tuple[str, str]]:
        return [(c.collection_id, c.display_name) for c in calendar_for(server).collections()]

    assert listing(radicale) == listing(xandikos)


def test_cross_server__scenario_answers_identical(radicale: RunningRadicale, xandikos: RunningXandikos) -> None:
    """Every core scenario reference gets the same answer from both servers."""
    differences = {}
    for text, kind, collection_ids in REFERENCES:
        left = resolve_on(radicale, text, kind, collection_ids)
        right = resolve_on(xandikos, text, kind, collection_ids)
        if left != right:
            differences[(text, kind, tuple(collection_ids or ()))] = (left, right)
    assert differences == {}


def test_cross_server__answers_are_the_expected_ones(xandikos: RunningXandikos) -> None:
    """The shared answers are right, not merely equal (spot checks on Xandikos)."""
    def get(text: str, kind: str = "task", cids: list[str] | None = None) -> dict[str, Any]:
        return resolve_on(xandikos, text, kind, cids)

    assert get("STRASSE REPARIEREN")["item"][0] == "t-strasse"  # full Unicode folding, client side
    assert get("Call the plumber")["item"][0] == "t-nostatus"  # no STATUS: open
    for closed in ("Pay invoice", "Cancelled errand", "File taxes"):
        result = get(closed)
        assert result["item"] is None and all(c[0] not in ("t-paid", "t-cancelled", "t-completed-date")
                                              for c in result["candidates"])
    assert get("Weekly sync", "event")["item"][0] == "e-weekly"  # a series begun a year ago
    assert get("Ongoing conference", "event")["item"][0] == "e-ongoing"
    for gone in ("Past retro", "Cancelled launch", "Far future gala"):
        assert get(gone, "event")["item"] is None
    duplicate = get("Team offsite planning")
    assert duplicate["status"] == "needs_clarification"
    assert sorted(c[0] for c in duplicate["candidates"]) == ["t-offsite-personal", "t-offsite-work"]
    assert get("anything", "task", ["no-such-collection"])["error"] == "collection_not_found"


# --- Events a server's time-range filter can get wrong -----------------------

NOW = datetime.now(timezone.utc).replace(microsecond=0)
DAY = timedelta(days=1)
HOUR = timedelta(hours=1)


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def _resource(*components: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject//edge//EN\r\n" + "".join(components) + "END:VCALENDAR\r\n"


def _component(name: str, uid: str, title: str, *lines: str) -> str:
    body = "".join(line + "\r\n" for line in lines)
    return f"BEGIN:{name}\r\nUID:{uid}\r\nDTSTAMP:{_utc(NOW)}\r\nSUMMARY:{title}\r\n{body}END:{name}\r\n"


def _event(uid: str, title: str, *lines: str) -> str:
    return _component("VEVENT", uid, title, *lines)


def _anniversary_start() -> date:
    """A date ten years ago whose anniversary falls within the next week."""
    soon = (NOW + 5 * DAY).date()
    if (soon.month, soon.day) == (2, 29):
        soon += timedelta(days=1)
    return soon.replace(year=soon.year - 10)


# UID -> (resource text, live?). Titles equal UIDs' meaning; see each comment.
EDGE_EVENTS: dict[str, tuple[str, bool]] = {
    # A weekly series begun a year ago, one occurrence moved and retitled: the series is live.
    "x-series-override": (_resource(
        _event("x-series-override", "Series with moved override",
               f"DTSTART:{_utc(NOW - 364 * DAY)}", "DURATION:PT1H", "RRULE:FREQ=WEEKLY"),
        _event("x-series-override", "Moved instance", f"RECURRENCE-ID:{_utc(NOW + 7 * DAY)}",
               f"DTSTART:{_utc(NOW + 8 * DAY)}", "DURATION:PT1H"),
    ), True),
    # An override without its master, in the window.
    "x-orphan": (_resource(_event("x-orphan", "Orphan override", f"RECURRENCE-ID:{_utc(NOW + 3 * DAY)}",
                                  f"DTSTART:{_utc(NOW + 3 * DAY)}", "DURATION:PT1H")), True),
    # Tomorrow, not today: a run that crosses midnight UTC would see today's end (one day, no DTEND) pass.
    "x-allday": (_resource(_event("x-allday", "All day tomorrow", f"DTSTART;VALUE=DATE:{NOW + DAY:%Y%m%d}")), True),
    "x-duration": (_resource(_event("x-duration", "Duration only", f"DTSTART:{_utc(NOW + DAY)}",
                                    "DURATION:PT1H")), True),
    "x-floating": (_resource(_event("x-floating", "Floating time", f"DTSTART:{NOW + 2 * DAY:%Y%m%dT%H%M%S}",
                                    f"DTEND:{NOW + 2 * DAY + HOUR:%Y%m%dT%H%M%S}")), True),
    "x-berlin": (_resource(_event("x-berlin", "Berlin meeting",
                                  f"DTSTART;TZID=Europe/Berlin:{NOW + DAY:%Y%m%dT%H%M%S}", "DURATION:PT1H")), True),
    "x-instant": (_resource(_event("x-instant", "Instant reminder", f"DTSTART:{_utc(NOW + DAY)}",
                                   f"DTEND:{_utc(NOW + DAY)}")), True),
    # Its only upcoming occurrence is an RDATE (Xandikos 0.4 misses it in a time-range).
    "x-rdate": (_resource(_event("x-rdate", "Rdate only", f"DTSTART:{_utc(NOW - 10 * DAY)}", "DURATION:PT1H",
                                 f"RDATE:{_utc(NOW + 5 * DAY)}")), True),
    # A rule that has ended plus a later RDATE (missed once Xandikos indexes the collection).
    "x-rdate-rrule": (_resource(_event("x-rdate-rrule", "Ended rule plus rdate", f"DTSTART:{_utc(NOW - 30 * DAY)}",
                                       "DURATION:PT1H", "RRULE:FREQ=WEEKLY;COUNT=2",
                                       f"RDATE:{_utc(NOW + 3 * DAY)}")), True),
    # An ended series whose last occurrence was moved into the window (same).
    "x-moved-in": (_resource(
        _event("x-moved-in", "Moved into window", f"DTSTART:{_utc(NOW - 14 * DAY)}", "DURATION:PT1H",
               "RRULE:FREQ=WEEKLY;COUNT=2"),
        _event("x-moved-in", "Moved into window", f"RECURRENCE-ID:{_utc(NOW - 7 * DAY)}",
               f"DTSTART:{_utc(NOW + 2 * DAY)}", "DURATION:PT1H"),
    ), True),
    "x-daily-10y": (_resource(_event("x-daily-10y", "Daily for ten years",
                                     f"DTSTART:{_utc(NOW - 3650 * DAY + 3 * HOUR)}", "DURATION:PT1H",
                                     "RRULE:FREQ=DAILY")), True),
    "x-birthday": (_resource(_event("x-birthday", "Yearly birthday",
                                    f"DTSTART;VALUE=DATE:{_anniversary_start():%Y%m%d}", "RRULE:FREQ=YEARLY")), True),
    "x-ended": (_resource(_event("x-ended", "Ended series", f"DTSTART:{_utc(NOW - 30 * DAY)}", "DURATION:PT1H",
                                 "RRULE:FREQ=WEEKLY;COUNT=3")), False),
    # The one upcoming occurrence is cancelled by an override.
    "x-cancelled-next": (_resource(
        _event("x-cancelled-next", "Only upcoming cancelled", f"DTSTART:{_utc(NOW - 7 * DAY + 2 * HOUR)}",
               "DURATION:PT1H", "RRULE:FREQ=WEEKLY;COUNT=2"),
        _event("x-cancelled-next", "Only upcoming cancelled", f"RECURRENCE-ID:{_utc(NOW + 2 * HOUR)}",
               f"DTSTART:{_utc(NOW + 2 * HOUR)}", "DURATION:PT1H", "STATUS:CANCELLED"),
    ), False),
    # The one upcoming occurrence is excluded (Xandikos returns it once indexed; the client drops it).
    "x-exdate": (_resource(_event("x-exdate", "Excluded upcoming", f"DTSTART:{_utc(NOW - 7 * DAY + 2 * HOUR)}",
                                  "DURATION:PT1H", "RRULE:FREQ=WEEKLY;COUNT=2",
                                  f"EXDATE:{_utc(NOW + 2 * HOUR)}")), False),
    "x-beyond": (_resource(_event("x-beyond", "Beyond horizon", f"DTSTART:{_utc(NOW + 91 * DAY)}",
                                  "DURATION:PT1H")), False),
    "x-past": (_resource(_event("x-past", "Long past", f"DTSTART:{_utc(NOW - 400 * DAY)}",
                                f"DTEND:{_utc(NOW - 400 * DAY + HOUR)}")), False),
}

EDGE_TASKS: dict[str, tuple[str, bool]] = {
    # STATUS says done but no COMPLETED date: the server filter lets it through.
    "x-task-status-completed": (_resource(_component("VTODO", "x-task-status-completed", "Status completed no date",
                                                     "STATUS:COMPLETED")), False),
    "x-task-completed-date": (_resource(_component("VTODO", "x-task-completed-date", "Completed date only",
                                                   f"COMPLETED:{_utc(NOW - DAY)}")), False),
    "x-task-lower": (_resource(_component("VTODO", "x-task-lower", "Lowercase cancelled", "STATUS:cancelled")), False),
    # Only STATUS and COMPLETED close a task; PERCENT-COMPLETE alone does not.
    "x-task-percent": (_resource(_component("VTODO", "x-task-percent", "Percent complete hundred",
                                            "PERCENT-COMPLETE:100")), True),
    "x-task-in-process": (_resource(_component("VTODO", "x-task-in-process", "Task in process",
                                               "STATUS:IN-PROCESS")), True),
}

EDGE_COLLECTION = "edge"
# Xandikos answers from a full scan until a query has been seen five times,
# then from its index: both paths must be checked.
XANDIKOS_INDEX_THRESHOLD = 5


@dataclass
class EdgeServers:
    radicale: RunningRadicale
    xandikos: RunningXandikos


def _seed_edge(url: str, username: str, password: str) -> None:
    principal = client(url, username, password).principal()
    calendar = principal.make_calendar(name="Edge", cal_id=EDGE_COLLECTION)
    for text, _live in EDGE_EVENTS.values():
        calendar.save_object(caldav.Event, text)
    for text, _live in EDGE_TASKS.values():
        calendar.save_object(caldav.Todo, text)


@pytest.fixture(scope="module")
def edge_servers() -> Iterator[EdgeServers]:
    """A fresh Radicale and Xandikos of this module's own, so the session's stay untouched."""
    root = Path(tempfile.mkdtemp(prefix="edge-"))
    instance, process = embedded_radicale.launch(root / "radicale")
    radicale = RunningRadicale(instance=instance, process=process)
    xandikos = None
    try:
        xandikos = start_xandikos(root / "xandikos")
        _seed_edge(radicale.url, instance.username, instance.password)
        _seed_edge(xandikos.url, "", "")
        yield EdgeServers(radicale=radicale, xandikos=xandikos)
    finally:
        radicale.stop()
        if xandikos is not None:
            xandikos.stop()
        shutil.rmtree(root, ignore_errors=True)


def _expected(table: dict[str, tuple[str, bool]]) -> set[str]:
    return {uid for uid, (_text, live) in table.items() if live}


@pytest.mark.parametrize("server_name", ["radicale", "xandikos"])
@pytest.mark.parametrize("kind,table", [(Kind.EVENT, EDGE_EVENTS), (Kind.TASK, EDGE_TASKS)], ids=["event", "task"])
def test_edge__liveness_is_right_on_every_query(edge_servers: EdgeServers, server_name: str, kind: Kind,
                                               table: dict[str, tuple[str, bool]]) -> None:
    """Right on the first query and still right once Xandikos answers from its index."""
    server = getattr(edge_servers, server_name)
    calendar = calendar_for(server)
    for attempt in range(XANDIKOS_INDEX_THRESHOLD + 3):
        fetched = calendar.fetch(kind=kind, collection_ids=[EDGE_COLLECTION])
        assert fetched.skipped == ()
        assert {item.uid for item in fetched.items} == _expected(table), f"query {attempt + 1}"


def test_edge__series_resolves_once_by_its_own_title(edge_servers: EdgeServers) -> None:
    """A series with a moved, retitled occurrence is one item, found by the series' title."""
    for server in (edge_servers.radicale, edge_servers.xandikos):
        calendar = calendar_for(server)
        fetched = calendar.fetch(kind=Kind.EVENT, collection_ids=[EDGE_COLLECTION])
        assert [i.title for i in fetched.items if i.uid == "x-series-override"] == ["Series with moved override"]
        outcome = resolve_outcome(
            text="Series with moved override", kind="event", collection_ids=[EDGE_COLLECTION], door="test",
            calendar=calendar, judge=DisabledJudge(), policy=NoThresholds(),
        )
        assert outcome.item is not None and outcome.item.uid == "x-series-override"


def test_edge__answers_identical(edge_servers: EdgeServers) -> None:
    for kind in Kind:
        assert live_facts(edge_servers.radicale, kind, [EDGE_COLLECTION]) == live_facts(
            edge_servers.xandikos, kind, [EDGE_COLLECTION]
        )


def test_edge__xandikos_time_range_misses_live_events(edge_servers: EdgeServers) -> None:
    """Why Xandikos runs with EVENT_TIME_RANGE_FILTER off: its time-range drops a live RDATE-only series.

    The full read (memo off) is the path that sends the time-range:
    incremental reads list every event.
    """
    calendar = calendar_for(edge_servers.xandikos, event_time_range=True, parse_cache_items=0)
    fetched = calendar.fetch(kind=Kind.EVENT, collection_ids=[EDGE_COLLECTION])
    assert "x-rdate" not in {item.uid for item in fetched.items}
    assert "x-rdate" in _expected(EDGE_EVENTS)
