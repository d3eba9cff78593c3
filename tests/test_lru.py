"""resolver/lru.py: the one bounded LRU map the caches share."""
from __future__ import annotations

import threading

from resolver.lru import LRU


def test_lru__least_recently_used_is_dropped_and_returned() -> None:
    lru: LRU[str, int] = LRU(2)
    assert lru.put("a", 1) == [] and lru.put("b", 2) == []
    assert lru.get("a") == 1  # now the most recent
    assert lru.put("c", 3) == [("b", 2)]
    assert lru.items() == [("a", 1), ("c", 3)] and "b" not in lru and len(lru) == 2


def test_lru__resize_and_clear_return_what_they_drop() -> None:
    lru: LRU[str, int] = LRU(3)
    for n, key in enumerate("abc"):
        lru.put(key, n)
    assert lru.resize(1) == [("a", 0), ("b", 1)] and lru.capacity == 1
    assert lru.clear() == [("c", 2)] and len(lru) == 0


def test_lru__zero_capacity_keeps_nothing() -> None:
    lru: LRU[str, int] = LRU(0)
    assert lru.put("a", 1) == [("a", 1)] and lru.get("a") is None


def test_lru__pop_and_default() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    assert lru.pop("a") == 1 and lru.pop("a", -1) == -1 and lru.get("a", 7) == 7


def test_lru__bounded_under_concurrent_puts() -> None:
    lru: LRU[int, int] = LRU(50)

    def work(base: int) -> None:
        for n in range(1000):
            lru.put(base * 1000 + n, n)
            lru.get(base * 1000 + n // 2)

    threads = [threading.Thread(target=work, args=(b,)) for b in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(lru) == 50 and len(lru.items()) == 50
