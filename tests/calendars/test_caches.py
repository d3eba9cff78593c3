"""What a reader remembers: bounded (one budget across readers), thread-safe, per account."""
from __future__ import annotations

import threading

from resolver.calendars.caldav import CalDAVAccount, ReaderRegistry
from resolver.calendars.caldav.caches import (
    Budget, FilterMemory, ParseMemo, SyncState, SyncStates, Unreadable, components_named,
)


def key(n: int) -> tuple[str, str]:
    return (f"/alice/c/{n}.ics", f'"{n}"')


ALICE = CalDAVAccount(url="http://dav.example/", username="alice", password="a-secret", label="alice")
BOB = CalDAVAccount(url="http://dav.example/", username="bob", password="b-secret")


def test_memo__least_recently_used_goes_first():
    cache = ParseMemo(3)
    for n in range(3):
        cache.put(key(n), n)
    assert cache.get(key(0)) == 0  # now the most recent
    cache.put(key(3), 3)
    assert cache.get(key(1)) is None
    assert [cache.get(key(n)) for n in (0, 2, 3)] == [0, 2, 3]
    assert len(cache) == 3


def test_memo__zero_is_off():
    cache = ParseMemo(0)
    cache.put(key(1), 1)
    assert not cache.enabled and cache.get(key(1)) is None and len(cache) == 0


def test_budget__one_bound_across_memos_oldest_first_whoever_holds_it():
    budget = Budget(4)
    alice, bob = ParseMemo(budget), ParseMemo(budget)
    alice.put(key(1), "a1")
    alice.put(key(2), "a2")
    bob.put(key(1), "b1")
    bob.put(key(2), "b2")
    assert alice.get(key(1)) == "a1"  # alice's first is now the most recent
    bob.put(key(3), "b3")  # over the bound: alice's key 2 was the least recently used
    assert alice.get(key(2)) is None and len(alice) == 1 and len(bob) == 3 and len(budget) == 4
    budget.resize(2)
    assert len(alice) + len(bob) == 2 and bob.get(key(3)) == "b3"
    bob.clear()
    assert len(budget) == len(alice) == 1


def test_registry__one_reader_per_account_sharing_the_bound():
    registry = ReaderRegistry(capacity=3)
    alice = registry.get(ALICE)
    assert registry.get(CalDAVAccount(url=ALICE.url, username="alice", password="a-secret", label="other")) is alice
    bob = registry.get(BOB)
    assert bob is not alice
    for n in range(3):
        alice.facts.put(key(n), f"a{n}")
    bob.facts.put(key(0), "b0")
    # Same href and ETag, other account: never alice's entry.
    assert bob.facts.get(key(1)) is None and bob.facts.get(key(0)) == "b0"
    assert len(alice.facts) + len(bob.facts) == 3
    registry.configure(0)
    assert not alice.facts.enabled and len(alice.facts) == 0 and len(bob.facts) == 0
    registry.configure(10)
    registry.drop(ALICE)
    assert registry.get(ALICE) is not alice and len(registry) == 2


def test_registry__the_password_never_shows():
    registry = ReaderRegistry()
    reader = registry.get(ALICE)
    assert "a-secret" not in repr(ALICE) and "a-secret" not in repr(reader)


def test_registry__bounded_in_accounts():
    registry = ReaderRegistry(max_readers=2)
    first = registry.get(ALICE)
    first.facts.put(key(1), "x")
    registry.get(BOB)
    registry.get(CalDAVAccount(url="http://dav.example/", username="carol"))
    assert len(registry) == 2 and len(first.facts) == 0 and registry.get(ALICE) is not first


def test_memo__threads_keep_it_bounded_and_consistent():
    budget = Budget(500)
    caches = [ParseMemo(budget) for _ in range(4)]
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        cache = caches[offset % 4]
        try:
            for n in range(2000):
                cache.put(key(offset * 10_000 + n), n)
                value = cache.get(key(offset * 10_000 + n))
                assert value is None or value == n
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(budget) == 500 and sum(len(c) for c in caches) == 500


def test_states__bounded_and_read_only():
    states = SyncStates(capacity=2)
    for n in range(3):
        states.put((f"c{n}", "task"), SyncState.of(f"t{n}", {f"/h{n}": '"e"'}))
    assert states.get(("c0", "task")) is None and len(states) == 2
    state = states.get(("c2", "task"))
    assert state is not None and dict(state.members) == {"/h2": '"e"'}
    try:
        state.members["/x"] = "y"  # type: ignore[index]
    except TypeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("members must be read-only")


def test_unreadable__knows_which_components_it_began():
    text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    assert components_named(text) == frozenset({"VEVENT"})
    assert Unreadable("not iCalendar", components_named("garbage")).components == frozenset()


def test_filter_memory__a_collection_is_remembered_for_its_time_then_asked_again():
    memory = FilterMemory()
    key = "/alice/work/"
    assert not memory.unsafe(key)
    memory.remember(key, 3600)
    assert memory.unsafe(key)
    assert not memory.unsafe("/alice/home/")  # another collection is not affected
    memory.remember(key, 0)  # expired at once: the filter is tried again
    assert not memory.unsafe(key)
    memory.remember(key, 3600)
    memory.clear()
    assert not memory.unsafe(key)


def test_filter_memory__belongs_to_the_account():
    registry = ReaderRegistry()
    registry.get(ALICE).filter_memory.remember("/shared/work/", 3600)
    assert not registry.get(BOB).filter_memory.unsafe("/shared/work/")
