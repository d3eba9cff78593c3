"""resolver/registry.py: the one registry convention (built on first use, bounded, thread-safe, closed when let go)."""
from __future__ import annotations

import threading
import time

import pytest

from resolver.registry import Registry


class Built:
    def __init__(self, key: str) -> None:
        self.key = key
        self.closed = False


class Counting(Registry[str, Built]):
    capacity = 2

    def __init__(self, capacity: int | None = None) -> None:
        super().__init__(capacity)
        self.built: list[str] = []

    def create(self, key: str) -> Built:
        self.built.append(key)
        time.sleep(0.01)  # widen the window two threads would both build in
        return Built(key)

    def close(self, value: Built) -> None:
        value.closed = True


def test_get__builds_once_and_keeps_it():
    registry = Counting()
    first = registry.get("a")
    assert registry.get("a") is first
    assert registry["a"] is first
    assert registry.built == ["a"]


def test_get__beyond_capacity_the_least_recently_used_is_closed():
    registry = Counting()
    a, b = registry.get("a"), registry.get("b")
    registry.get("a")  # a is now the most recent
    registry.get("c")
    assert b.closed and not a.closed
    assert "b" not in registry and len(registry) == 2


def test_get__threads_asking_for_one_new_key_build_it_once():
    registry = Counting(capacity=8)
    got: list[Built] = []
    threads = [threading.Thread(target=lambda: got.append(registry.get("k"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert registry.built == ["k"]
    assert all(value is got[0] for value in got)


def test_drop_and_drop_where__close_what_they_let_go():
    registry = Counting(capacity=8)
    values = {key: registry.get(key) for key in ("x1", "x2", "y1")}
    registry.drop("y1")
    registry.drop("absent")
    registry.drop_where(lambda key: key.startswith("x"))
    assert all(value.closed for value in values.values())
    assert len(registry) == 0


def test_clear_and_resize__close_what_they_let_go():
    registry = Counting(capacity=8)
    kept = [registry.get(key) for key in ("a", "b", "c")]
    registry.resize(1)
    assert [value.closed for value in kept] == [True, True, False]
    registry.clear()
    assert kept[2].closed and len(registry) == 0


def test_an_empty_registry_is_still_truthy():
    assert bool(Counting())


def test_create__must_be_defined():
    with pytest.raises(NotImplementedError, match=r"create\(key\)"):
        Registry().get("a")
