"""Concurrent requests on one account share the server's read (flight.py), counted at a scripted server."""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import pytest

from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain import deadline
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV, vtodo

TITLES = {"a.ics": "Water the plants", "b.ics": "Book the dentist", "c.ics": "Renew library card"}
# Each answer of the scripted server waits this long: a read spans several requests' arrivals.
DELAY = 0.15


@pytest.fixture
def server() -> Iterator[ScriptedDAV]:
    server = ScriptedDAV(token_property="uri")
    for n, (name, title) in enumerate(TITLES.items()):
        server.put(name, vtodo(f"uid-{n}", title))
    try:
        yield server
    finally:
        server.stop()


def calendar(server: ScriptedDAV, registry: ReaderRegistry) -> CalDAVCalendar:
    return CalDAVCalendar(url=server.url, username=USER, password=PASSWORD, timeout=5.0, registry=registry)


def syncs(server: ScriptedDAV) -> int:
    """Collection reads the server answered (each read of the collection is one sync-collection)."""
    return len(server.reports("sync-collection"))


def in_threads(n: int, work: Callable[[int], Any], *, stagger: float = 0.0) -> list[Any]:
    """`work(i)` in n threads started together (or `stagger` apart); each result, or the exception raised."""
    results: list[Any] = [None] * n
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        time.sleep(stagger * i)
        try:
            results[i] = work(i)
        except Exception as err:  # the test looks at it
            results[i] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def warmed(server: ScriptedDAV) -> tuple[CalDAVCalendar, ReaderRegistry]:
    """A calendar whose reader has read the collection once (later reads are one sync each)."""
    registry = ReaderRegistry()
    cal = calendar(server, registry)
    deadline.bounded_by_default(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    server.seen.clear()
    server.delay = DELAY
    return cal, registry


def timed_fetch(cal: CalDAVCalendar, seconds: float = 20.0) -> tuple[datetime, Any]:
    arrived = datetime.now(timezone.utc)
    with deadline.running(seconds):
        return arrived, cal.fetch(kind=Kind.TASK, collection_ids=None)


def test_flight__n_threads_on_one_account_share_one_or_two_reads(server: ScriptedDAV) -> None:
    cal, registry = warmed(server)
    results = in_threads(8, lambda i: timed_fetch(cal))
    assert not any(isinstance(r, Exception) for r in results), results
    assert 1 <= syncs(server) <= 2
    for arrived, result in results:
        # Read after it arrived: never an answer read before the request came.
        assert result.read_at >= arrived
        assert {item.title for item in result.items} == set(TITLES.values())
    reader = registry.get(cal.account)
    assert reader.flights.busy() == 0  # nothing left behind


def test_flight__alone_each_request_reads_for_itself(server: ScriptedDAV) -> None:
    cal, _ = warmed(server)
    for _ in range(3):
        timed_fetch(cal)
    assert syncs(server) == 3


def test_flight__a_change_during_a_read_is_seen_by_requests_that_arrived_after_it(server: ScriptedDAV) -> None:
    cal, _ = warmed(server)
    first: list[Any] = []
    reading = threading.Thread(target=lambda: first.append(timed_fetch(cal)))
    reading.start()
    time.sleep(DELAY / 2)  # the first read is in flight
    server.put("d.ics", vtodo("uid-d", "Call the plumber"))
    changed_at = datetime.now(timezone.utc)
    arrived, later = timed_fetch(cal)
    reading.join(10)
    assert later.read_at >= arrived >= changed_at
    assert "Call the plumber" in {item.title for item in later.items}
    assert first and first[0][1].read_at < later.read_at


def test_flight__a_waiter_whose_deadline_passes_gets_a_timeout_and_the_read_goes_on(server: ScriptedDAV) -> None:
    cal, _ = warmed(server)
    server.delay = 0.6  # the listing and the sync: about 1.2 s

    def work(i: int) -> Any:
        return timed_fetch(cal, 0.3 if i == 0 else 20.0)

    results = in_threads(3, work)
    impatient, *patient = results
    assert isinstance(impatient, CalendarUnavailable) and impatient.details["reason"] == "timeout"
    for outcome in patient:
        assert not isinstance(outcome, Exception), outcome
        assert {item.title for item in outcome[1].items} == set(TITLES.values())
    # The read the others waited on was not abandoned for the one who left.
    assert 1 <= syncs(server) <= 2


def test_flight__a_failure_reaches_every_waiter_as_its_own_error(server: ScriptedDAV) -> None:
    cal, _ = warmed(server)
    server.forbidden.add(f"/dav/{USER}/")  # the home's listing refused: no read can succeed
    results = in_threads(4, lambda i: timed_fetch(cal))
    assert all(isinstance(r, CalendarUnavailable) for r in results), results
    assert {r.details["reason"] for r in results} == {"forbidden"}
    # One error object per waiter: none raised in two threads at once.
    assert len({id(r) for r in results}) == len(results)
    # Shared: fewer listings than requests.
    assert len([r for r in server.seen if r.method == "PROPFIND"]) < len(results) * 2


def test_flight__different_kinds_and_accounts_do_not_share(server: ScriptedDAV) -> None:
    cal, registry = warmed(server)
    other = ScriptedDAV(token_property="uri")
    try:
        other.put("x.ics", vtodo("uid-x", "Other account's task"))
        other_cal = calendar(other, registry)

        def work(i: int) -> Any:
            return timed_fetch(cal if i % 2 == 0 else other_cal)[1]

        results = in_threads(4, work)
        assert {item.title for item in results[0].items} == set(TITLES.values())
        assert {item.title for item in results[1].items} == {"Other account's task"}
    finally:
        other.stop()
