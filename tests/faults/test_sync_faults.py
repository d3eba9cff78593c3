"""Incremental reads against a real Radicale: only changes are read, and nothing goes stale.

The second request of a collection sends one sync-collection REPORT (or, with
sync off, an etag-only calendar-query) and parses only resources whose ETag
it has not parsed before; a refused token, a broken answer or a dropped
connection never leaves a stale answer behind.
"""
from __future__ import annotations

import itertools
from collections import Counter
from typing import Iterator

import pytest

from lifeproject.seeding import Spec
from resolver import services
from resolver.calendars.caldav import ReaderRegistry
from resolver.calendars.caldav import building
from resolver.calendars.caldav.caches import SyncState
from resolver.domain.matching import MatchingMemo
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind
from tests.faults.conftest import HEALTHY_TIMEOUT, TIMEOUT
from tests.faults.test_changing_calendar import DAY, NOW, Other
from tests.support.fault_proxy import Fault, FaultyRadicale

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

_numbers = itertools.count(1)


@pytest.fixture
def other(faulty_live: FaultyRadicale) -> Iterator[Other]:
    yield Other(faulty_live, f"faults-sync-{next(_numbers)}")


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """How many resources were parsed (read_resource calls), by request."""
    counts: Counter = Counter()
    original = building.read_resource

    def counting(text: str, **kwargs):
        counts["parsed"] += 1
        return original(text, **kwargs)

    monkeypatch.setattr(building, "read_resource", counting)
    return counts


def the_reader(registry: ReaderRegistry):
    """The one account's reader these tests read through."""
    [reader] = registry.readers()
    return reader


def fetch(other: Other, kind: Kind = Kind.TASK):
    return services.calendar_from_settings().fetch(kind=kind, collection_ids=[other.collection_id])


def reports(server: FaultyRadicale) -> list[tuple[str, str]]:
    return [(method, path) for method, path in server.requests if method in ("REPORT", "PROPFIND")]


def assert_current(other: Other, result) -> None:
    """Every item's ETag is the server's now, and no live item is missing."""
    server = other.propfind_etags()
    assert {item.href for item in result.items} <= set(server)
    for item in result.items:
        assert item.etag == server[item.href]


def test_sync__unchanged_collection_parses_nothing(other: Other, parses: Counter) -> None:
    for n in range(5):
        other.put(Spec(f"s-{n}", f"Sync item {n}"))
    first = fetch(other)
    assert parses["parsed"] == 5
    second = fetch(other)
    assert parses["parsed"] == 5
    assert second.items == first.items
    assert second.requests < first.requests


def test_sync__unchanged_items_and_title_index_are_reused(other: Other) -> None:
    """An unchanged task is the very Item of the last request; the title index survives an ETag-only change."""
    for n in range(4):
        other.put(Spec(f"s-{n}", f"Reuse item {n}"))
    first = fetch(other)
    index = first.memo.index(first.items)  # the reader's memo (matching.MatchingMemo)
    other.put(Spec("s-2", "Reuse item 2", status="IN-PROCESS"))  # a new ETag, the same title
    second = fetch(other)
    assert_current(other, second)
    by_href = {item.href: item for item in first.items}
    for item in second.items:
        assert (item is by_href[item.href]) == (item.href != other.href("s-2"))
    assert second.items is not first.items
    assert second.memo is first.memo and second.memo.index(second.items) is index
    other.put(Spec("s-2", "Reuse item two"))  # a title changed: a new index
    third = fetch(other)
    assert third.memo.index(third.items) is not index
    assert isinstance(third.memo, MatchingMemo)
    assert "Reuse item two" in {item.title for item in third.items}


def test_sync__one_edit_parses_one(readers: ReaderRegistry, other: Other, parses: Counter) -> None:
    for n in range(5):
        other.put(Spec(f"s-{n}", f"Sync item {n}"))
    fetch(other)
    other.put(Spec("s-3", "Sync item three"))
    other.delete("s-4")
    other.put(Spec("s-5", "Sync item 5", status="COMPLETED", completed=NOW))
    other.put(Spec("s-6", "Sync item 6"))
    result = fetch(other)
    # The edit and the two new ones; the deleted one is forgotten.
    assert parses["parsed"] == 5 + 3
    assert sorted(item.title for item in result.items) == ["Sync item 0", "Sync item 1", "Sync item 2",
                                                          "Sync item 6", "Sync item three"]
    assert_current(other, result)
    hrefs = {href for href, _etag in the_reader(readers).facts.keys()}
    assert other.href("s-4") not in hrefs


def test_sync__refused_token_falls_back_to_a_full_read(readers: ReaderRegistry, other: Other,
                                                      faulty_live: FaultyRadicale, parses: Counter) -> None:
    """Radicale answers an unknown token with 403 DAV:valid-sync-token: full read, fresh token, same request."""
    other.put(Spec("s-a", "Alpha sync"))
    fetch(other)
    states = the_reader(readers).states
    [(key, state)] = [(k, s) for k, s in states.items() if k[0].endswith(f"/{other.collection_id}/")]
    states.put(key, SyncState.of("http://radicale.org/ns/sync/" + "0" * 64, state.members))
    other.put(Spec("s-a", "Alpha sync edited"))
    result = fetch(other)
    assert [item.title for item in result.items] == ["Alpha sync edited"]
    assert_current(other, result)
    fresh = states.get(key)
    assert fresh is not None and fresh.token is not None and not fresh.token.endswith("0" * 64)
    # And the next request uses the fresh token: no full read.
    faulty_live.forget_requests()
    fetch(other)
    assert sum(1 for method, _ in reports(faulty_live) if method == "REPORT") == 1


def test_sync__broken_sync_answer_falls_back(other: Other, faulty_live: FaultyRadicale) -> None:
    """A sync answer that does not parse is not trusted; the full read that follows is broken too: unavailable."""
    other.put(Spec("s-a", "Alpha sync"))
    fetch(other)
    with faulty_live.inject(Fault.broken_xml(methods={"REPORT"})), pytest.raises(CalendarUnavailable) as caught:
        fetch(other)
    assert caught.value.details["reason"] == "bad_response"
    # Both the sync REPORT and the fallback calendar-query were sent.
    assert sum(1 for method, _ in reports(faulty_live) if method == "REPORT") >= 3


@pytest.mark.parametrize("fault", [Fault.reset(methods={"REPORT"}), Fault.slow(2.0, methods={"REPORT"})],
                         ids=["reset", "slow"])
def test_sync__dropped_mid_sync_then_recovers(other: Other, faulty_live: FaultyRadicale, fault: Fault,
                                              settings) -> None:
    other.put(Spec("s-a", "Alpha sync"))
    fetch(other)
    other.put(Spec("s-a", "Alpha sync edited"))
    healthy = settings.RESOLVER
    settings.RESOLVER = faulty_live.settings(CALDAV_TIMEOUT=TIMEOUT)
    assert TIMEOUT < 2.0  # the slow answer is cut
    with faulty_live.inject(fault), pytest.raises(CalendarUnavailable):
        fetch(other)
    settings.RESOLVER = healthy
    other.put(Spec("s-b", "Beta sync"))
    result = fetch(other)
    assert sorted(item.title for item in result.items) == ["Alpha sync edited", "Beta sync"]
    assert_current(other, result)


def test_sync__off_uses_an_etag_listing(other: Other, faulty_live: FaultyRadicale, settings,
                                        parses: Counter) -> None:
    settings.RESOLVER = faulty_live.settings(CALDAV_TIMEOUT=HEALTHY_TIMEOUT, CALDAV_SYNC="off")
    for n in range(4):
        other.put(Spec(f"s-{n}", f"Listed item {n}"))
    fetch(other)
    other.put(Spec("s-1", "Listed item one"))
    other.delete("s-2")
    faulty_live.forget_requests()
    result = fetch(other)
    assert parses["parsed"] == 4 + 1
    assert sorted(item.title for item in result.items) == ["Listed item 0", "Listed item 3", "Listed item one"]
    asked = [method for method, path in reports(faulty_live) if path.rstrip("/").endswith(other.collection_id)]
    # its CS:getctag (a Depth 0 PROPFIND, first asked on this read: not yet a witness), the
    # collection's listing (a Depth 1 PROPFIND: ETags and modification times) and one multiget
    assert asked == ["PROPFIND", "PROPFIND", "REPORT"]
    assert_current(other, result)


def test_sync__memo_off_reads_everything_every_time(readers: ReaderRegistry, other: Other,
                                                    faulty_live: FaultyRadicale, settings, parses: Counter) -> None:
    settings.RESOLVER = faulty_live.settings(CALDAV_TIMEOUT=HEALTHY_TIMEOUT, PARSE_CACHE_ITEMS=0)
    for n in range(3):
        other.put(Spec(f"s-{n}", f"Plain item {n}"))
    first = fetch(other)
    second = fetch(other)
    assert first.items == second.items and len(first.items) == 3
    reader = the_reader(readers)
    assert len(reader.facts) == 0 and len(reader.states) == 0 and len(readers.facts_budget) == 0


def test_sync__tasks_and_events_in_one_collection(other: Other) -> None:
    """A collection holding both kinds: each kind's state keeps only its own resources."""
    other.put(Spec("s-task", "Mixed task"))
    other.put(Spec("s-event", "Mixed event", kind="event", when=NOW + 2 * DAY))
    assert [i.title for i in fetch(other, Kind.TASK).items] == ["Mixed task"]
    assert [i.title for i in fetch(other, Kind.EVENT).items] == ["Mixed event"]
    other.put(Spec("s-event", "Mixed event moved", kind="event", when=NOW + 3 * DAY))
    other.put(Spec("s-task-2", "Second task"))
    assert sorted(i.title for i in fetch(other, Kind.TASK).items) == ["Mixed task", "Second task"]
    assert [i.title for i in fetch(other, Kind.EVENT).items] == ["Mixed event moved"]


def test_sync__memo_keys_carry_the_account(readers: ReaderRegistry, other: Other, faulty_live: FaultyRadicale) -> None:
    other.put(Spec("s-a", "Alpha sync"))
    fetch(other)
    [reader] = readers.readers()
    assert len(reader.facts) > 0
    assert (reader.account.url, reader.account.username) == (faulty_live.url, faulty_live.username)
