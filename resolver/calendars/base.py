"""What the pipeline needs from a calendar: collections and live items."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, Sequence

from resolver.domain.items import Collection, Item, Kind


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
    seconds: float = 0.0
    collections_searched: tuple[str, ...] = field(default=())
    # When this fetch read the calendar (aware, UTC): the envelope's `read_at`.
    read_at: datetime | None = None
    # Collections read without the server's time-range filter because the
    # server failed on it (now or recently): the `server_filter_skipped` warning.
    server_filter_skipped: tuple[str, ...] = ()


class CalendarSource(Protocol):
    def collections(self) -> Sequence[Collection]: ...

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: str | None = None) -> FetchResult:
        """Live items of `kind`, from the given collections or all of them.

        `time_zone` (an IANA name; None means UTC) is the zone floating times
        in the calendar data are read in.

        Raises CollectionNotFound for an unknown ID and CalendarUnavailable
        when the server cannot be read.
        """
        ...
