"""resolver/calendars/caldav/reader.py: what one account's reader remembers of its home, and what forgetting does.

Called on the reader itself (`collections`, `forget`), at the scripted server
(tests/support/scripted_dav.py), whose principal is its calendar home: the
first discovery is a Depth 0 PROPFIND of the account's URL, then the home's
Depth 1 listing. How the reader reads a collection is tested per strategy
(tests/calendars/strategies/), per cache (test_caches.py, test_ctags.py,
test_flight.py) and end to end against real servers (test_cold_read.py,
test_exact_hrefs.py, tests/test_sync_equivalence.py, tests/faults/).
"""
from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any, Iterator

import pytest

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind
from tests.support.scripted_dav import COLLECTION, USER, ScriptedDAV, vevent, vtodo
from tests.support.strategy_context import calendar

HOME = f"/dav/{USER}/"
UTC = timezone.utc


@pytest.fixture
def server() -> Iterator[ScriptedDAV]:
    dav = ScriptedDAV()
    dav.put("a.ics", vtodo("a", "Water the plants"))
    try:
        yield dav
    finally:
        dav.stop()


def read_once(server: ScriptedDAV) -> CalDAVCalendar:
    cal = calendar(server)
    deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    return cal


def listed(server: ScriptedDAV, cal: CalDAVCalendar) -> tuple[list[str], list[tuple[str, str, str | None]]]:
    """The reader's collections, and the (method, path, depth) of each request it sent for them."""
    reader, before = cal.reader(), len(server.seen)
    found: Any = deadline.bounded(lambda: reader.collections(reader.transport(cal.options)))()
    return [c.url_path for c in found], [(r.method, r.path, r.depth) for r in server.seen[before:]]


def test_reader__a_cold_reader_discovers_the_home_from_the_accounts_url(server: ScriptedDAV) -> None:
    paths, sent = listed(server, calendar(server))
    assert paths == [COLLECTION]
    assert sent == [("PROPFIND", HOME, "0"), ("PROPFIND", HOME, "1")]


def test_reader__the_home_is_remembered_and_its_calendars_listed_live(server: ScriptedDAV) -> None:
    cal = read_once(server)
    paths, sent = listed(server, cal)
    assert paths == [COLLECTION] and sent == [("PROPFIND", HOME, "1")]


def test_reader__forget_starts_discovery_over(server: ScriptedDAV) -> None:
    cal = read_once(server)
    cal.reader().forget()
    paths, sent = listed(server, cal)
    assert paths == [COLLECTION] and sent == [("PROPFIND", HOME, "0"), ("PROPFIND", HOME, "1")]


def test_reader__a_failure_at_the_remembered_home_forgets_it_for_the_next_request(server: ScriptedDAV) -> None:
    cal = read_once(server)
    server.forbidden = {HOME}
    with pytest.raises(CalendarUnavailable):
        listed(server, cal)
    server.forbidden = set()
    paths, sent = listed(server, cal)
    assert paths == [COLLECTION] and sent == [("PROPFIND", HOME, "0"), ("PROPFIND", HOME, "1")]


# -- the other kind, from the same request's read (reader._carry, _remembered) ---------------------------


@pytest.fixture
def both(server: ScriptedDAV) -> ScriptedDAV:
    """A task and an event, each kind read once (cold) by the calendar the tests get from `warm`."""
    server.put("e.ics", vevent("e", "Design review"))
    return server


def warm(server: ScriptedDAV) -> CalDAVCalendar:
    cal = calendar(server, horizon_days=365 * 80)
    for kind in (Kind.TASK, Kind.EVENT):
        deadline.bounded(lambda: cal.fetch(kind=kind, collection_ids=None))()
    return cal


def read(cal: CalDAVCalendar, kind: Kind, since: Any = None) -> Any:
    if since is None:
        return deadline.bounded(lambda: cal.fetch(kind=kind, collection_ids=None))()
    return deadline.bounded(lambda: cal.fetch_since(kind=kind, collection_ids=None, time_zone=UTC, since=since))()


def titles(result: Any) -> set[str]:
    return {item.title for item in result.items}


def test_reader__a_sync_of_one_kind_answers_the_same_requests_read_of_the_other(both: ScriptedDAV) -> None:
    cal = warm(both)
    both.put("f.ics", vevent("f", "Piano concert"))
    both.delete("e.ics")
    tasks = read(cal, Kind.TASK)
    assert titles(tasks) == {"Water the plants"} and tasks.requests > 0
    sent = len(both.seen)
    events = read(cal, Kind.EVENT, since=tasks.read_at)
    # What the task read's sync listed of the events (one new, one deleted): no request of its own.
    assert titles(events) == {"Piano concert"} and events.requests == 0 and len(both.seen) == sent
    assert events.read_at == tasks.read_at and events.collections_searched == tasks.collections_searched
    # The next request reads the server again, from the token both kinds now share.
    again = read(cal, Kind.EVENT)
    assert titles(again) == {"Piano concert"} and again.requests > 0


def test_reader__a_member_that_changed_kind_moves_between_the_kinds(both: ScriptedDAV) -> None:
    cal = warm(both)
    both.put("a.ics", vevent("a", "Water the plants, now an event"))
    tasks = read(cal, Kind.TASK)
    events = read(cal, Kind.EVENT, since=tasks.read_at)
    assert titles(tasks) == set() and events.requests == 0
    assert titles(events) == {"Design review", "Water the plants, now an event"}


def test_reader__an_earlier_read_never_answers_a_later_request(both: ScriptedDAV) -> None:
    cal = warm(both)
    tasks = read(cal, Kind.TASK)
    both.put("f.ics", vevent("f", "Piano concert"))
    later = read(cal, Kind.EVENT, since=tasks.read_at + timedelta(microseconds=1))
    assert later.requests > 0 and titles(later) == {"Design review", "Piano concert"}


def test_reader__each_kinds_sync_carries_the_other_so_their_tokens_stay_together(both: ScriptedDAV) -> None:
    cal = warm(both)
    both.put("f.ics", vevent("f", "Piano concert"))
    read(cal, Kind.EVENT)  # carries the tasks' state to the new token too
    both.put("g.ics", vevent("g", "Team offsite"))
    tasks = read(cal, Kind.TASK)
    events = read(cal, Kind.EVENT, since=tasks.read_at)
    assert events.requests == 0 and titles(events) == {"Design review", "Piano concert", "Team offsite"}


def test_reader__a_sync_from_another_token_leaves_the_other_kind_to_the_server(both: ScriptedDAV) -> None:
    cal = calendar(both, horizon_days=365 * 80)
    read(cal, Kind.TASK)
    both.put("f.ics", vevent("f", "Piano concert"))
    read(cal, Kind.EVENT)  # a first read: the events' token is newer than the tasks', and nothing was carried
    both.put("g.ics", vevent("g", "Team offsite"))
    tasks = read(cal, Kind.TASK)
    events = read(cal, Kind.EVENT, since=tasks.read_at)
    assert events.requests > 0 and titles(events) == {"Design review", "Piano concert", "Team offsite"}


def test_reader__a_member_whose_kind_only_the_server_can_tell_is_not_carried(both: ScriptedDAV) -> None:
    cal = warm(both)
    both.put("x.ics", "not a calendar at all")
    tasks = read(cal, Kind.TASK)
    events = read(cal, Kind.EVENT, since=tasks.read_at)
    assert events.requests > 0 and titles(events) == {"Design review"}


def test_reader__without_the_memo_the_other_kind_is_read_again(both: ScriptedDAV) -> None:
    cal = calendar(both, parse_cache_items=0, horizon_days=365 * 80)
    tasks = read(cal, Kind.TASK)
    events = read(cal, Kind.EVENT, since=tasks.read_at)
    assert events.requests > 0 and titles(events) == {"Design review"}
