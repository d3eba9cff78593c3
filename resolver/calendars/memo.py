"""What the process remembers between resolutions: parsed resources and sync state.

Parsing is about two thirds of a full read, and most resources do not change
between two requests. So the facts read from a resource (`ical.ResourceFacts`:
window-independent, so liveness is still decided for each request's window)
are kept, keyed by (CalDAV URL, username, href, ETag): an unchanged ETag is
never parsed again, a changed one is, and a href the server no longer lists is
forgotten. A resource that could not be read is remembered as `Unreadable`, so
it is skipped with the same reason on every request until its ETag changes.

Per collection and kind, `SyncState` holds the WebDAV sync token (RFC 6578)
and the hrefs and ETags the server listed with it, so the next request asks
only what changed since.

Both live in this process only: never in Django's cache (which holds
provenance only), never shared between CalDAV accounts (the URL and the
username are part of every key), and bounded (the memo by
`RESOLVER_PARSE_CACHE_ITEMS`, least recently used first). Nothing here is ever
trusted on its own: a memo entry is only used for an href and ETag the server
has just reported.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

# (CalDAV URL, username, href, ETag)
MemoKey = tuple[str, str, str, str]
# (CalDAV URL, username, collection URL, kind)
StateKey = tuple[str, str, str, str]

DEFAULT_CAPACITY = 100_000
# Collections times kinds: far more than one account has; a bound all the same.
MAX_STATES = 10_000


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A resource whose text could not be read: skipped with this reason.

    `components`: the component names its text begins (VTODO, VEVENT), so a
    broken event is not reported as a skipped task; None when unknown.
    """

    reason: str
    components: frozenset[str] | None = None


_BEGIN = re.compile(r"^BEGIN:(VTODO|VEVENT)\b", re.I | re.M)


def components_named(text: str) -> frozenset[str]:
    return frozenset(name.upper() for name in _BEGIN.findall(text))


class ParseMemo:
    """A thread-safe LRU map from MemoKey to ResourceFacts (or Unreadable)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._entries: OrderedDict[MemoKey, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = max(0, int(capacity))

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def enabled(self) -> bool:
        return self._capacity > 0

    def resize(self, capacity: int) -> None:
        with self._lock:
            self._capacity = max(0, int(capacity))
            self._evict()

    def get(self, key: MemoKey) -> Any | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: MemoKey, value: Any) -> None:
        if self._capacity == 0:
            return
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            self._evict()

    def discard(self, key: MemoKey) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _evict(self) -> None:
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)


@dataclass(frozen=True)
class SyncState:
    """One collection's members (href -> ETag) for one kind, as of `token`.

    `token` None: the server offers no WebDAV sync, so the next request lists
    ETags with a calendar-query instead. Frozen, with a read-only mapping: a
    request replaces the state whole, so concurrent requests never see half
    an update.
    """

    token: str | None
    members: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, token: str | None, members: dict[str, str]) -> SyncState:
        return cls(token=token, members=MappingProxyType(dict(members)))


class SyncStates:
    """Thread-safe, bounded map from StateKey to SyncState."""

    def __init__(self, capacity: int = MAX_STATES) -> None:
        self._states: OrderedDict[StateKey, SyncState] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def get(self, key: StateKey) -> SyncState | None:
        with self._lock:
            state = self._states.get(key)
            if state is not None:
                self._states.move_to_end(key)
            return state

    def put(self, key: StateKey, state: SyncState) -> None:
        with self._lock:
            self._states[key] = state
            self._states.move_to_end(key)
            while len(self._states) > self._capacity:
                self._states.popitem(last=False)

    def drop(self, key: StateKey) -> None:
        with self._lock:
            self._states.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()

    def __len__(self) -> int:
        return len(self._states)


# The process-wide instances (one per process, shared by its threads).
MEMO = ParseMemo()
STATES = SyncStates()
# The items built from a memoised resource, by the same key: a mapping from
# (collection path, kind, zone, horizon) to (window start, valid until,
# items), so an unchanged task or single event is not built again while the
# window slides (ical.items_until). Bounded like the memo, forgotten with it.
BUILT = ParseMemo()


_filled_with: list[Any] = [None]


def configure(capacity: int, limits: Any = None) -> ParseMemo:
    """The process memo, sized to the current setting (0 turns it off and empties it).

    Facts depend on the bounds they were read under (ical.Limits): when the
    bounds change, what was read under the old ones is forgotten.
    """
    if MEMO.capacity != capacity:
        MEMO.resize(capacity)
        BUILT.resize(capacity)
        if capacity == 0:
            STATES.clear()
    if limits is not None and _filled_with[0] != limits:
        if _filled_with[0] is not None:
            MEMO.clear()
            BUILT.clear()
            STATES.clear()
        _filled_with[0] = limits
    return MEMO


def reset() -> None:
    """Forget everything: what a new process starts with (tests, benchmarks)."""
    MEMO.clear()
    BUILT.clear()
    STATES.clear()
