"""What a reader remembers between resolutions: parsed resources, built items, sync state, filter failures.

Parsing is about two thirds of a full read, and most resources do not change
between two requests. So the facts read from a resource (`ical.ResourceFacts`:
window-independent, so liveness is still decided for each request's window)
are kept, keyed by (href, ETag): an unchanged ETag is never parsed again, a
changed one is, and a href the server no longer lists is forgotten. A
resource that could not be read is remembered as `Unreadable`, so it is
skipped with the same reason on every request until its ETag changes.

Per collection and kind, `SyncState` holds the WebDAV sync token (RFC 6578)
and the hrefs and ETags the server listed with it, so the next request asks
only what changed since.

Every map here belongs to one reader, that is to one account
(reader.CalDAVReader): two accounts never share an entry, and dropping a
reader drops what it remembered. The number of memoised resources is bounded
across all readers of a process by one `Budget` (RESOLVER_PARSE_CACHE_ITEMS),
least recently used first, whichever reader holds it. Nothing here is ever
trusted on its own: an entry is only used for an href and ETag the server has
just reported. Never in Django's cache (which holds provenance only).
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Hashable, Mapping

from resolver.lru import LRU

# (href, ETag): the reader is the account.
MemoKey = tuple[str, str]
# (collection path, kind)
StateKey = tuple[str, str]

DEFAULT_CAPACITY = 100_000
# Collections times kinds: far more than one account has; a bound all the same.
MAX_STATES = 10_000
# Deleted hrefs remembered per reader (Tombstones); beyond, the oldest are forgotten.
MAX_TOMBSTONES = 10_000


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A resource whose text could not be read: skipped with this reason.

    `components`: the component names its text begins (VTODO, VEVENT), so a
    broken event is not reported as a skipped task; None when unknown.
    """

    reason: str
    components: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class Parsed:
    """A memo entry: the facts read from a resource, and a digest of the text they were read from.

    The digest is what lets a memoised (href, ETag) be checked against data
    the server sends again: other text under the same ETag replaces the entry.
    """

    digest: bytes
    facts: Any


def digest_of(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_BEGIN = re.compile(r"^BEGIN:(VTODO|VEVENT)\b", re.I | re.M)


def components_named(text: str) -> frozenset[str]:
    return frozenset(name.upper() for name in _BEGIN.findall(text))


class Budget:
    """One bound on the entries of many maps (every reader's memo), least recently used evicted first.

    Thread-safe: the maps that share a budget share its lock.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.lock = threading.RLock()
        self._order: LRU[tuple[int, Hashable], ParseMemo] = LRU(capacity)

    @property
    def capacity(self) -> int:
        return self._order.capacity

    @property
    def enabled(self) -> bool:
        return self._order.capacity > 0

    def resize(self, capacity: int) -> None:
        with self.lock:
            self._evicted(self._order.resize(capacity))

    def __len__(self) -> int:
        return len(self._order)

    # The maps' side (called with the lock held).
    def _admit(self, owner: ParseMemo, key: Hashable) -> None:
        self._evicted(self._order.put((id(owner), key), owner))

    def _touch(self, owner: ParseMemo, key: Hashable) -> None:
        self._order.get((id(owner), key))

    def _forget(self, owner: ParseMemo, key: Hashable) -> None:
        self._order.pop((id(owner), key))

    @staticmethod
    def _evicted(dropped: list[tuple[tuple[int, Hashable], ParseMemo]]) -> None:
        for (_, key), owner in dropped:
            owner._entries.pop(key, None)


class ParseMemo:
    """A thread-safe map from MemoKey to a value, bounded by its (possibly shared) budget."""

    def __init__(self, budget: Budget | int = DEFAULT_CAPACITY) -> None:
        self._budget = budget if isinstance(budget, Budget) else Budget(budget)
        self._entries: dict[Hashable, Any] = {}

    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def enabled(self) -> bool:
        return self._budget.enabled

    def get(self, key: Hashable) -> Any | None:
        with self._budget.lock:
            value = self._entries.get(key)
            if value is not None:
                self._budget._touch(self, key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        with self._budget.lock:
            if not self._budget.enabled:
                return
            self._entries[key] = value
            self._budget._admit(self, key)

    def discard(self, key: Hashable) -> None:
        with self._budget.lock:
            if self._entries.pop(key, None) is not None:
                self._budget._forget(self, key)

    def clear(self) -> None:
        with self._budget.lock:
            for key in self._entries:
                self._budget._forget(self, key)
            self._entries.clear()

    def keys(self) -> list[Hashable]:
        with self._budget.lock:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


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
    # href -> DAV:getlastmodified, without sync only (reader: an ETag is not trusted alone).
    stamps: Mapping[str, str] = field(default_factory=dict)
    # The collection's CS:getctag listed just before these members were read
    # (None: not asked, or not to be believed), the Date of the listing where
    # that value first showed, and whether it had shown MARGIN before this
    # read (stamps.apart): only then does an unchanged ctag stand for these members.
    ctag: str | None = None
    ctag_since: str | None = None
    ctag_settled: bool = False
    # When the ctag was last asked (time.monotonic()): until it is a witness,
    # it is asked at most every ctags.Ctags.ask_seconds.
    ctag_asked: float | None = None
    # The read that made this state found a change: the next one goes straight
    # to the sync (a ctag would only be paid for, ctags.py).
    moved: bool = False
    # When a read last showed these members to be the server's: the `read_at` of the read of either kind
    # that made or carried this state (reader.CalDAVReader._carry). None: not known.
    confirmed: datetime | None = None

    @classmethod
    def of(cls, token: str | None, members: dict[str, str], stamps: dict[str, str] | None = None,
           **fields: Any) -> SyncState:
        return cls(token=token, members=MappingProxyType(dict(members)),
                   stamps=MappingProxyType(dict(stamps or {})), **fields)


class SyncStates:
    """Thread-safe, bounded map from StateKey to SyncState."""

    def __init__(self, capacity: int = MAX_STATES) -> None:
        self._states: LRU[StateKey, SyncState] = LRU(capacity)

    def get(self, key: StateKey) -> SyncState | None:
        return self._states.get(key)

    def put(self, key: StateKey, state: SyncState) -> None:
        self._states.put(key, state)

    def drop(self, key: StateKey) -> None:
        self._states.pop(key)

    def clear(self) -> None:
        self._states.clear()

    def items(self) -> list[tuple[StateKey, SyncState]]:
        return self._states.items()

    def __len__(self) -> int:
        return len(self._states)


class Tombstones:
    """The hrefs a reader saw deleted, per collection, with the ETag they had: bounded, thread-safe.

    An href that comes back is read again and its content compared, whatever
    its ETag: a server may hand out an ETag again after a DELETE (SOGo).
    """

    def __init__(self, capacity: int = MAX_TOMBSTONES) -> None:
        self._marks: LRU[tuple[str, str], str | None] = LRU(capacity)

    def bury(self, collection: str, href: str, etag: str | None) -> None:
        self._marks.put((collection, href), etag)

    def raised(self, collection: str, href: str) -> bool:
        """Whether `href` was deleted since it was last read (and forget that it was)."""
        key = (collection, href)
        if key not in self._marks:
            return False
        self._marks.pop(key)
        return True

    def clear(self) -> None:
        self._marks.clear()

    def __len__(self) -> int:
        return len(self._marks)


class FilterMemory:
    """The collections whose server failed on its own time-range filter, until when to read them without it."""

    def __init__(self) -> None:
        self._until: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def remember(self, key: Hashable, seconds: float) -> None:
        with self._lock:
            self._until[key] = time.monotonic() + seconds

    def unsafe(self, key: Hashable) -> bool:
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return False
            if until <= time.monotonic():
                del self._until[key]  # time to ask the server with the filter again
                return False
            return True

    def clear(self) -> None:
        with self._lock:
            self._until.clear()
