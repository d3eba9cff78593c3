"""The same 20 items on Radicale, Xandikos, DAViCal, Cyrus and SOGo give the same answers (issue 27).

For each server and read mode (sync, sync off, memo off): a fresh
collection is seeded (seed.py), every reference is resolved cold and warm,
then an edit, an add, a delete and a DELETE + PUT on the same href are made
(to tasks: events asked by those tasks' titles read first, so that the
events' sync is what shows the tasks' changes) and every reference is resolved again warm (the same process: where a reused
ETag or a bad href did harm) and cold. Each answer must be the expected one
(not merely equal across servers); a resolved item's href must GET that item
from the server and its ETag must be the one the server lists; a
clarification shows each candidate under its current title.
"""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.errors import ResolverError
from resolver.domain.ports import NoThresholds
from resolver.judges.disabled import DisabledJudge
from tests.compat import seed
from tests.compat.peers import Peer
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.slow

MODES = {"sync": dict(sync="auto"), "sync_off": dict(sync="off"), "memo_off": dict(parse_cache_items=0)}


@pytest.fixture
def collection(peer: Peer) -> Iterator[str]:
    cid = peer.new_collection()
    for name, text in seed.items().items():
        peer.put(cid, name, text)
    try:
        yield cid
    finally:
        peer.drop_collection(cid)


def calendar(peer: Peer, registry: ReaderRegistry, mode: str) -> CalDAVCalendar:
    return CalDAVCalendar(url=peer.url, username=peer.username, password=peer.password, timeout=20.0,
                          horizon_days=90, event_time_range=peer.event_time_range, registry=registry,
                          **MODES[mode])


def resolve(cal: CalDAVCalendar, cid: str, text: str, kind: str) -> Any:
    try:
        return resolve_outcome(text=text, kind=kind, collection_ids=[cid], door="test", calendar=cal,
                               judge=DisabledJudge(), policy=NoThresholds())
    except ResolverError as err:
        return f"{err.code}: {err.details}"


def problems(peer: Peer, cid: str, cal: CalDAVCalendar, expected: dict[tuple[str, str], Any],
             titles: dict[str, str] | None, when: str) -> list[str]:
    """Every way the answers differ from `expected` (empty: all right)."""
    found = []
    listing = peer.listing(cid)
    for (text, kind), want in expected.items():
        outcome = resolve(cal, cid, text, kind)
        where = f"{when}: {text!r}"
        if isinstance(outcome, str):
            found.append(f"{where}: {outcome}")
            continue
        got = outcome.item.uid if outcome.item else None
        offered = frozenset(item.uid for item in outcome.candidates)
        named = [w for w in outcome.warnings if w.code == "closed_item_matched"]
        if ((text, kind) in seed.CLOSED) != bool(named):
            found.append(f"{where}: closed_item_matched {'missing' if not named else 'unexpected'}")
        other = [w for w in outcome.warnings if w.code == "other_kind_matched"]
        if ((text, kind) in seed.OTHER_KIND) != bool(other):
            found.append(f"{where}: other_kind_matched {'missing' if not other else 'unexpected'}")
        if isinstance(want, frozenset):
            if got is not None or offered != want:
                found.append(f"{where}: resolved {got}, offered {sorted(offered)}; expected a choice of {sorted(want)}")
        elif got != want:
            found.append(f"{where}: resolved {got} ({outcome.status.value}, {sorted(offered)}); expected {want}")
        if titles is not None:
            for item in (*outcome.candidates, *([outcome.item] if outcome.item else [])):
                if titles.get(item.uid) != item.title:
                    found.append(f"{where}: {item.uid} shown as {item.title!r}, now {titles.get(item.uid)!r}")
        if outcome.item is not None:
            found.extend(f"{where}: {p}" for p in item_problems(peer, listing, outcome.item))
    return found


def item_problems(peer: Peer, listing: dict[str, str], item: Any) -> list[str]:
    """The href GETs this very item, and the ETag is the server's for that href."""
    found = []
    if item.href not in listing:
        found.append(f"href {item.href} is not in the server's listing {sorted(listing)}")
    elif listing[item.href] != item.etag:
        found.append(f"ETag {item.etag} for {item.href}, the server lists {listing[item.href]}")
    answer = peer.get(item.href)
    if answer.status_code != 200 or f"UID:{item.uid}" not in answer.text:
        found.append(f"GET {item.href} gave {answer.status_code} without UID {item.uid}")
    return found


def change(peer: Peer, cid: str) -> None:
    for action, name, text in seed.changes():
        if action == "put":
            peer.put(cid, name, text or "")
        else:
            peer.delete(cid, name)


@pytest.mark.parametrize("mode", list(MODES))
def test_compat__same_answers_cold_warm_and_after_every_kind_of_change(peer: Peer, collection: str,
                                                                       mode: str) -> None:
    registry = ReaderRegistry()
    cal = calendar(peer, registry, mode)
    found = problems(peer, collection, cal, seed.BEFORE, None, "cold")
    found += problems(peer, collection, cal, seed.BEFORE, None, "warm")
    change(peer, collection)
    # Events first: their sync lists the tasks' changes, which the tasks' state must take (reader._carry).
    found += problems(peer, collection, cal, seed.EVENTS_FIRST, seed.TITLES_AFTER, "warm after changes, events first")
    found += problems(peer, collection, cal, seed.AFTER, seed.TITLES_AFTER, "warm after changes")
    found += problems(peer, collection, calendar(peer, ReaderRegistry(), mode), seed.AFTER, seed.TITLES_AFTER,
                      "cold after changes")
    assert found == [], f"{peer.version}, {mode}:\n" + "\n".join(found)
