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

from typing import Any, Iterator

import pytest

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind
from tests.support.scripted_dav import COLLECTION, USER, ScriptedDAV, vtodo
from tests.support.strategy_context import calendar

HOME = f"/dav/{USER}/"


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
