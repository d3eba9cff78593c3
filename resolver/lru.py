"""One bounded, thread-safe least-recently-used map, for every cache of the process that needs a bound.

The reader's sync states, its tombstones and href aliases, and the registry of
readers all keep at most `capacity` entries and drop the least recently used
beyond. `put` returns what it dropped, so an owner can release it (a dropped
reader closes its connections).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A map of at most `capacity` entries; `get` and `put` make an entry the most recent."""

    def __init__(self, capacity: int) -> None:
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = max(0, int(capacity))

    @property
    def capacity(self) -> int:
        return self._capacity

    def get(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def put(self, key: K, value: V) -> list[tuple[K, V]]:
        """Store `value`; return the entries dropped to stay within the bound (oldest first)."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            dropped = []
            while len(self._entries) > self._capacity:
                dropped.append(self._entries.popitem(last=False))
            return dropped

    def pop(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            return self._entries.pop(key, default)

    def resize(self, capacity: int) -> list[tuple[K, V]]:
        with self._lock:
            self._capacity = max(0, int(capacity))
            dropped = []
            while len(self._entries) > self._capacity:
                dropped.append(self._entries.popitem(last=False))
            return dropped

    def clear(self) -> list[tuple[K, V]]:
        """Empty the map; return what it held."""
        with self._lock:
            held, self._entries = list(self._entries.items()), OrderedDict()
            return held

    def items(self) -> list[tuple[K, V]]:
        with self._lock:
            return list(self._entries.items())

    def values(self) -> list[V]:
        with self._lock:
            return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)
