"""One convention for the process's registries: a value per key, built on first use, bounded, thread-safe.

Django's `BaseConnectionHandler` (django.db.connections, django.core.cache.caches)
is the model: a registry maps a key to the one object the process keeps for
it, builds that object the first time the key is asked for (`create`), and
closes it when it is let go (`close`). Unlike Django's, which holds one
connection per alias a settings file names, our keys come from data (an
account, a judge's configuration, an encoder's dotted path), so every registry
is bounded: beyond `capacity` the least recently used value is dropped and
closed.

    class Encoders(Registry[str, Encoder]):
        def create(self, key: str) -> Encoder:
            return build(key)

    encoder = encoders.get("resolver.encoders.MultilingualUSE")

The process's registries are attributes of the app's config
(resolver.apps.ResolverConfig.registries): one place holds the process's state, and
tests put a fresh registry in place rather than resetting a module's.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from resolver.lru import LRU

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Registry(Generic[K, V]):
    """A bounded, thread-safe map from a key to the one value the process keeps for it."""

    #: Values kept at once unless the constructor says otherwise.
    capacity = 64

    def __init__(self, capacity: int | None = None) -> None:
        self._values: LRU[K, V] = LRU(self.capacity if capacity is None else capacity)
        # Held while a value is built, so two threads asking for a new key build it once.
        self._lock = threading.RLock()

    def create(self, key: K) -> V:
        """Build the value for `key` (called once per key while it is kept)."""
        raise NotImplementedError(f"{type(self).__name__} must define create(key)")

    def close(self, value: V) -> None:
        """Release what a dropped value holds (connections, threads); nothing by default."""

    def get(self, key: K) -> V:
        """The value kept for `key`, built now if there is none."""
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                return value
            value = self.create(key)
            dropped = self._values.put(key, value)
        self._close_all(dropped)
        return value

    __getitem__ = get

    def drop(self, key: K) -> None:
        """Let the value for `key` go (closed); nothing if there is none."""
        value = self._values.pop(key)
        if value is not None:
            self.close(value)

    def drop_where(self, predicate: Callable[[K], bool]) -> None:
        """Let go every value whose key satisfies `predicate` (an account removed, say)."""
        with self._lock:
            keys = [key for key, _ in self._values.items() if predicate(key)]
            dropped = [(key, self._values.pop(key)) for key in keys]
        self._close_all(dropped)

    def values(self) -> list[V]:
        return self._values.values()

    def resize(self, capacity: int) -> None:
        self._close_all(self._values.resize(capacity))

    def clear(self) -> None:
        """Let every value go (what a new process starts with)."""
        self._close_all(self._values.clear())

    def _close_all(self, dropped: list[tuple[K, V | None]]) -> None:
        for _, value in dropped:
            if value is not None:
                self.close(value)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def __bool__(self) -> bool:
        # An empty registry is still a registry (`registry or default` must not replace it).
        return True


R = TypeVar("R")


def held(name: str) -> Any:
    """The process's registry called `name`: an attribute of the app's config, created on first use."""
    from django.apps import apps

    return getattr(apps.get_app_config("resolver"), name)


def swap(name: str, registry: R) -> R:
    """Make `registry` the process's registry called `name`; return the one it replaces (tests, benchmarks)."""
    from django.apps import apps

    config = apps.get_app_config("resolver")
    previous = getattr(config, name)
    setattr(config, name, registry)
    return previous  # type: ignore[no-any-return]
