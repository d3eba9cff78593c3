"""The readers of a process: one CalDAVReader per account, in the process's registry convention.

`ReaderRegistry.get(account)` creates a reader on first use and returns the
same one after, the way Django's `connections` hands out one connection per
alias (resolver/registry.py: bounded, thread-safe, the least recently used
account's reader dropped beyond `max_readers`); `drop(account)` forgets one,
`clear()` all. The readers of a registry share one `caches.Budget` per cache,
so RESOLVER_PARSE_CACHE_ITEMS bounds the memoised resources of all accounts
together, and one `ReadPool` of read threads (flight.py).

The process's registry is held by the app's config (resolver.apps,
`ResolverConfig.readers`), with the process's other registries: `readers()`
returns it, `use_registry(...)` puts another in place (tests, benchmarks).
"""
from __future__ import annotations

from resolver.calendars.caldav.account import CalDAVAccount
from resolver.calendars.caldav.caches import DEFAULT_CAPACITY, Budget
from resolver.calendars.caldav.flight import ReadPool
from resolver.calendars.caldav.reader import CalDAVReader
from resolver.registry import Registry, held, swap

# Accounts one registry keeps readers for; the least recently used is dropped beyond.
MAX_READERS = 10_000


class ReaderRegistry(Registry[CalDAVAccount, CalDAVReader]):
    """One CalDAVReader per account, created on first use (Django's `connections`, for CalDAV accounts).

        reader = registry.get(CalDAVAccount(url=..., username=..., password=...))

    The readers share one budget per cache: `configure(capacity)` sets
    RESOLVER_PARSE_CACHE_ITEMS for all of them (0 turns every memo off).
    """

    capacity = MAX_READERS

    def __init__(self, capacity: int = DEFAULT_CAPACITY, *, max_readers: int = MAX_READERS) -> None:
        super().__init__(max_readers)
        self.facts_budget = Budget(capacity)
        self.built_budget = Budget(capacity)
        # The threads every reader's shared reads run on (flight.py).
        self.pool = ReadPool()

    def create(self, key: CalDAVAccount) -> CalDAVReader:
        return CalDAVReader(key, facts_budget=self.facts_budget, built_budget=self.built_budget, pool=self.pool)

    def close(self, value: CalDAVReader) -> None:
        value.forget()

    def configure(self, capacity: int) -> None:
        if self.facts_budget.capacity != capacity:
            self.facts_budget.resize(capacity)
            self.built_budget.resize(capacity)
            if capacity == 0:
                for reader in self.readers():
                    reader.states.clear()

    def readers(self) -> list[CalDAVReader]:
        return self.values()

    def clear(self) -> None:
        """Forget every reader (what a new process starts with), and let the read threads go.

        A read in flight finishes on its thread; a later one starts a new pool.
        """
        super().clear()
        self.pool.shutdown()


def readers() -> ReaderRegistry:
    """The process's registry: owned by the app's config (ResolverConfig.readers), not by this module."""
    return held("readers")  # type: ignore[no-any-return]


def use_registry(registry: ReaderRegistry) -> ReaderRegistry:
    """Make `registry` the process's, and return the one it replaces (tests, benchmarks)."""
    return swap("readers", registry)
