"""The calendar layer's result types. The port itself is resolver.domain.ports.CalendarSource."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from resolver.domain.items import Item


@dataclass(frozen=True)
class SkippedResource:
    href: str
    reason: str


@dataclass(frozen=True)
class FetchResult:
    items: tuple[Item, ...]
    skipped: tuple[SkippedResource, ...] = ()
    # Round trips to the server, for the benchmarks and the request log.
    requests: int = 0
    collections_searched: tuple[str, ...] = field(default=())
    # When this fetch read the calendar (aware, UTC): the envelope's `read_at`.
    read_at: datetime | None = None
    # Collections read without the server's time-range filter because the
    # server failed on it (now or recently): the `server_filter_skipped` warning.
    server_filter_skipped: tuple[str, ...] = ()
    # What matching remembers for the reader that read these items
    # (matching.MatchingMemo): its title indexes and title vectors, dropped with
    # the reader. None: the reader keeps nothing, matching starts afresh.
    memo: Any = field(default=None, compare=False, repr=False)


# Declared with the other ports; kept importable from here for the backends.
from resolver.domain.ports import CalendarSource  # noqa: E402,F401
