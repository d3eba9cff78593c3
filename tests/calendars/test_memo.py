"""The process-wide parse memo and sync state: bounded, thread-safe, per account."""
from __future__ import annotations

import threading

from resolver.calendars import memo
from resolver.calendars.memo import ParseMemo, SyncState, SyncStates, Unreadable, components_named


def key(n: int, user: str = "alice") -> memo.MemoKey:
    return ("http://dav.example/", user, f"/{user}/c/{n}.ics", f'"{n}"')


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


def test_memo__resize_evicts_and_configure_turns_everything_off():
    cache = ParseMemo(10)
    for n in range(10):
        cache.put(key(n), n)
    cache.resize(4)
    assert len(cache) == 4 and cache.get(key(9)) == 9 and cache.get(key(0)) is None
    memo.STATES.put(("u", "n", "c", "task"), SyncState.of("t", {"/h": '"e"'}))
    try:
        memo.configure(0)
        assert not memo.MEMO.enabled and len(memo.STATES) == 0
    finally:
        memo.configure(memo.DEFAULT_CAPACITY)
    assert memo.MEMO.capacity == memo.DEFAULT_CAPACITY


def test_memo__accounts_never_share_an_entry():
    cache = ParseMemo(10)
    cache.put(key(1, "alice"), "alice's facts")
    assert cache.get(key(1, "bob")) is None


def test_memo__threads_keep_it_bounded_and_consistent():
    cache = ParseMemo(500)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
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
    assert errors == [] and len(cache) == 500


def test_states__bounded_and_read_only():
    states = SyncStates(capacity=2)
    for n in range(3):
        states.put(("u", "n", f"c{n}", "task"), SyncState.of(f"t{n}", {f"/h{n}": '"e"'}))
    assert states.get(("u", "n", "c0", "task")) is None and len(states) == 2
    state = states.get(("u", "n", "c2", "task"))
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
