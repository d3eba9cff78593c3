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


# --- the process's registries, held by the app's config (resolver.apps.ResolverConfig.registries) ---


def test_app_config__creates_each_registry_on_its_first_use_and_keeps_it():
    from django.apps import apps

    from resolver.registry import held, swap

    config = apps.get_app_config("resolver")
    created = {name: held(name) for name in config.registries}
    assert all(isinstance(registry, Registry) for registry in created.values())
    assert all(held(name) is registry for name, registry in created.items())
    # A registry swapped in (tests, benchmarks) is the one asked for until swapped back.
    replacement = Counting()
    previous = swap("judges", replacement)
    try:
        assert previous is created["judges"] and held("judges") is replacement
    finally:
        swap("judges", previous)
    with pytest.raises(AttributeError):
        config.not_a_registry  # noqa: B018


def test_app_config__threads_asking_for_a_registry_first_get_one():
    """The first use is under the config's lock: two threads never make two registries of one name."""
    from django.apps import apps

    config = apps.get_app_config("resolver")
    saved = config.__dict__.pop("relevance_models", None)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(config.relevance_models)) for _ in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(got) == 8 and all(registry is got[0] for registry in got)
    finally:
        if saved is not None:
            config.__dict__["relevance_models"] = saved
