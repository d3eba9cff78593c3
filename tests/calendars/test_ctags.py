"""CS:getctag as a witness that nothing changed (ctags.py), at a scripted server.

The server's clock is frozen (tests/support/scripted_dav.py): every answer's
Date is that clock, and `advance` moves it, so the 2 s racy rule is tested
without waiting.
"""
from __future__ import annotations

import logging
from datetime import timezone
from typing import Iterator

import pytest

from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain import deadline
from resolver.domain.items import Kind
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV, vevent, vtodo

TITLES = {"a.ics": "Water the plants", "b.ics": "Book the dentist", "c.ics": "Renew library card"}


def scripted(ctag: str) -> Iterator[ScriptedDAV]:
    server = ScriptedDAV(token_property="uri", ctag=ctag, frozen_clock=True)
    for n, (name, title) in enumerate(TITLES.items()):
        server.put(name, vtodo(f"uid-{n}", title))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def counter() -> Iterator[ScriptedDAV]:
    yield from scripted("counter")


@pytest.fixture
def puts_only() -> Iterator[ScriptedDAV]:
    yield from scripted("puts")


@pytest.fixture
def stuck() -> Iterator[ScriptedDAV]:
    yield from scripted("stuck")


class Client:
    def __init__(self, server: ScriptedDAV) -> None:
        self.server = server
        self.registry = ReaderRegistry()
        self.cal = CalDAVCalendar(url=server.url, username=USER, password=PASSWORD, timeout=5.0,
                                  registry=self.registry)

    @property
    def reader(self):
        reader = self.registry.get(self.cal.account)
        reader.ctags.ask_seconds = 0.0  # asked on every read: the steps below are the reads
        return reader

    def read(self) -> tuple[set[str], int]:
        """The titles read, and how many sync-collection reports this read sent."""
        self.reader  # noqa: B018 - made, and set to ask the ctag every time
        before = len(self.server.reports("sync-collection"))
        result = deadline.bounded_by_default(lambda: self.cal.fetch(kind=Kind.TASK, collection_ids=None))()
        return {item.title for item in result.items}, len(self.server.reports("sync-collection")) - before

    def trusted_warm(self) -> None:
        """Read until an unchanged, settled ctag answers: seen moving with a PUT and a DELETE, then settled."""
        self.read()  # cold
        self.read()  # the ctag first seen
        self.server.put("d.ics", vtodo("uid-d", "Call the plumber"))
        assert self.read()[1] == 1  # moved with the change: the sync reads it
        self.read()  # right after a change: straight to the sync
        self.read()  # the ctag first seen again (racy: same second)
        self.server.delete("c.ics")
        assert self.read()[1] == 1
        self.read()
        self.read()
        self.server.advance(3)
        assert self.read()[1] == 1  # not yet settled when this state was read
        assert self.reader.ctags.moved == {"update", "delete"}


WARM_TITLES = {"Water the plants", "Book the dentist", "Call the plumber"}


def test_ctag__unchanged_and_settled_answers_from_the_memo(counter: ScriptedDAV) -> None:
    client = Client(counter)
    client.trusted_warm()
    titles, sent = client.read()
    assert sent == 0  # the ctag alone: no sync
    assert titles == WARM_TITLES
    counter.put("e.ics", vtodo("uid-e", "Pay the rent"))
    titles, sent = client.read()
    assert sent == 1 and "Pay the rent" in titles  # the ctag moved: the sync reads the change


def test_ctag__a_racy_ctag_is_not_believed(counter: ScriptedDAV) -> None:
    client = Client(counter)
    client.read()
    client.read()
    counter.put("d.ics", vtodo("uid-d", "Call the plumber"))
    client.read()
    client.read()
    # The clock frozen: every ctag is listed in the second it first showed in.
    for _ in range(3):
        assert client.read()[1] == 1
    assert client.reader.ctags.moved == {"update"} and client.reader.ctags.trusted


def test_ctag__one_never_seen_moving_is_never_a_witness(stuck: ScriptedDAV) -> None:
    client = Client(stuck)
    client.read()
    client.read()
    stuck.advance(3)
    client.read()
    stuck.advance(3)
    assert client.read()[1] == 1
    stuck.put("d.ics", vtodo("uid-d", "Call the plumber"))
    titles, sent = client.read()
    assert sent == 1 and "Call the plumber" in titles


def test_ctag__a_change_under_an_unmoved_ctag_ends_the_trust(puts_only: ScriptedDAV,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    client = Client(puts_only)
    client.read()
    client.read()  # the ctag first seen
    puts_only.put("d.ics", vtodo("uid-d", "Call the plumber"))
    client.read()  # it moved with the PUT
    client.read()
    client.read()  # first seen again
    assert client.reader.ctags.moved == {"update"} and client.reader.ctags.trusted
    puts_only.delete("c.ics")  # the ctag does not move on a DELETE here
    with caplog.at_level(logging.WARNING, logger="resolver.calendars"):
        titles, sent = client.read()  # not a witness yet: the sync runs and lists the deletion
    assert sent == 1 and titles == WARM_TITLES
    assert not client.reader.ctags.trusted
    assert any("unchanged CS:getctag" in r.getMessage() for r in caplog.records)
    puts_only.advance(3)
    for _ in range(3):
        assert client.read()[1] == 1  # never trusted again on this server


def test_ctag__moving_with_one_kind_of_change_only_is_not_enough(counter: ScriptedDAV) -> None:
    client = Client(counter)
    client.read()
    client.read()
    counter.put("d.ics", vtodo("uid-d", "Call the plumber"))
    client.read()
    client.read()
    client.read()
    counter.advance(3)
    client.read()
    assert client.reader.ctags.moved == {"update"}
    assert client.read()[1] == 1  # settled, unchanged, but no DELETE seen moving it yet


def test_ctag__a_server_without_one_is_not_asked_again(counter: ScriptedDAV) -> None:
    counter.ctag = None
    client = Client(counter)
    client.read()
    client.read()
    asked = len([r for r in counter.seen if r.method == "PROPFIND" and r.depth == "0"])
    client.read()
    assert len([r for r in counter.seen if r.method == "PROPFIND" and r.depth == "0"]) == asked
    assert not client.reader.ctags.given


def test_ctag__not_yet_a_witness_it_is_asked_now_and_then_only(counter: ScriptedDAV) -> None:
    """Before it can answer, a ctag is only paid for: asked once, then not for ctag_ask_seconds."""
    registry = ReaderRegistry()
    cal = CalDAVCalendar(url=counter.url, username=USER, password=PASSWORD, timeout=5.0, registry=registry)
    for _ in range(4):
        deadline.bounded_by_default(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    asked = [r for r in counter.seen if r.method == "PROPFIND" and r.depth == "0" and r.path.endswith("/work/")]
    # The cold read's token property, then one ctag in the three warm reads.
    assert len(asked) == 2
    state = registry.get(cal.account).states.items()[0][1]
    assert state.ctag is not None  # kept across the reads that did not ask it (nothing changed)


def test_ctag__a_witness_for_one_kind_confirms_the_other_kind_it_was_carried_with(counter: ScriptedDAV) -> None:
    """The ctag stands for the whole collection: where it witnesses the events' state too (carried along with
    every task sync, reader._carry), the same request's read of the events sends nothing."""
    counter.put("e.ics", vevent("uid-e", "Design review"))
    client = Client(counter)
    client.cal = CalDAVCalendar(url=counter.url, username=USER, password=PASSWORD, timeout=5.0,
                                registry=client.registry, horizon_days=365 * 80)
    deadline.bounded_by_default(lambda: client.cal.fetch(kind=Kind.EVENT, collection_ids=None))()
    client.trusted_warm()
    before = len(counter.seen)
    tasks = deadline.bounded_by_default(lambda: client.cal.fetch(kind=Kind.TASK, collection_ids=None))()
    assert len(counter.reports("sync-collection")) and not [r for r in counter.seen[before:] if r.report]
    sent = len(counter.seen)
    events = deadline.bounded_by_default(lambda: client.cal.fetch_since(
        kind=Kind.EVENT, collection_ids=None, time_zone=timezone.utc, since=tasks.read_at))()
    assert {i.title for i in events.items} == {"Design review"} and events.requests == 0
    assert len(counter.seen) == sent
