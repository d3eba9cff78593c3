"""The CalendarSource port over a CalDAV account: settings in, the account's reader does the reading."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from typing import Any, Callable, Sequence

from resolver.domain.ports import FetchResult
from resolver.calendars.caldav.account import CalDAVAccount
from resolver.calendars.caldav.caches import DEFAULT_CAPACITY
from resolver.calendars.caldav.http import unavailable
from resolver.calendars.caldav.options import SYNC_MODES, ReadOptions
from resolver.calendars.caldav.reader import CalDAVReader
from resolver.calendars.caldav.registry import ReaderRegistry, readers
from resolver.calendars.ical import Limits
from resolver.domain.items import Collection, Kind

# Bytes one CalDAV answer may have (RESOLVER_MAX_RESPONSE_BYTES; docs/performance.md sizes it).
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024


@dataclass
class CalDAVCalendar:
    url: str
    username: str
    password: str = field(repr=False)
    timeout: float = 10.0
    horizon_days: int = 90
    # Ask the server for events in the window only (multistatus.query_body).
    event_time_range: bool = True
    now: Callable[[], datetime] = field(default=lambda: datetime.now(timezone.utc), repr=False)
    # How long a collection whose server failed on its own time-range is read
    # without it; None: RESOLVER_SERVER_FILTER_RETRY_SECONDS.
    filter_retry_seconds: float | None = None
    # Bounds on the work one resource may cost; None: from the settings (limits_from_settings).
    limits: Limits | None = None
    # Incremental reads (reader.py): "auto" uses WebDAV sync where the server
    # offers it, "off" an etag-only listing plus calendar-multiget.
    sync: str = "auto"
    # Concurrent fetches of the same collections share one read (flight.py).
    shared_reads: bool = True
    # An unchanged, settled CS:getctag may answer from the memo (ctags.py).
    ctag: bool = True
    # Resources all readers' memos hold together (caches.Budget); 0 turns the
    # memo, and with it every incremental read, off: each request is then a full read.
    parse_cache_items: int = DEFAULT_CAPACITY
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    # The readers to use; None: the process's (reader.readers()).
    registry: ReaderRegistry | None = field(default=None, repr=False)
    label: str = ""
    # Connect only to public addresses, checked on every connection (a person's account).
    check_addresses: bool = False

    @classmethod
    def from_settings(cls, settings: Any) -> CalDAVCalendar:
        """The CalDAV backend, configured from the resolver settings (the default CALENDAR_BACKEND)."""
        return cls(
            url=settings.CALDAV_URL,
            username=settings.CALDAV_USERNAME,
            password=settings.CALDAV_PASSWORD,
            timeout=float(settings.CALDAV_TIMEOUT),
            horizon_days=int(settings.EVENT_HORIZON_DAYS),
            event_time_range=bool(settings.EVENT_TIME_RANGE_FILTER),
            sync=str(settings.CALDAV_SYNC).strip().lower(),
            shared_reads=bool(getattr(settings, "CALDAV_SHARED_READS", True)),
            ctag=bool(getattr(settings, "CALDAV_CTAG", True)),
            parse_cache_items=int(settings.PARSE_CACHE_ITEMS),
            max_response_bytes=int(settings.MAX_RESPONSE_BYTES),
            # Only a person's account says so (resolver.accounts); the settings' own may be private.
            check_addresses=bool(getattr(settings, "CALDAV_CHECK_ADDRESSES", False)),
        )

    def __post_init__(self) -> None:
        if self.sync not in SYNC_MODES:
            raise ValueError(f"RESOLVER_CALDAV_SYNC must be one of {', '.join(SYNC_MODES)}")

    @property
    def account(self) -> CalDAVAccount:
        return CalDAVAccount(url=self.url, username=self.username, password=self.password, label=self.label,
                             check_addresses=self.check_addresses)

    def reader(self) -> CalDAVReader:
        # `is None`, not `or`: an empty registry is falsy (it has a length).
        registry = self.registry if self.registry is not None else readers()
        if self.parse_cache_items > 0:
            # Off (0) leaves the shared budget alone: another calendar may use it.
            registry.configure(self.parse_cache_items)
        try:
            return registry.get(self.account)
        except ValueError as err:  # not an http(s) URL
            raise unavailable("unreachable") from err

    def _options(self) -> ReadOptions:
        retry = self.filter_retry_seconds if self.filter_retry_seconds is not None else _filter_retry_from_settings()
        return ReadOptions(timeout=self.timeout, max_bytes=self.max_response_bytes, horizon_days=self.horizon_days,
                           event_time_range=self.event_time_range, sync=self.sync,
                           shared=self.shared_reads, ctag=self.ctag,
                           incremental=self.parse_cache_items > 0, limits=self.limits or limits_from_settings(),
                           filter_retry_seconds=retry)

    def collections(self) -> list[Collection]:
        reader = self.reader()
        return reader.collections(reader.transport(self._options()))

    def says_calendar_access(self) -> bool:
        """Whether the account's URL answers OPTIONS with DAV: calendar-access (RFC 4791, 5.1)."""
        reader = self.reader()
        return reader.transport(self._options()).says_calendar_access(self.url)

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: tzinfo = timezone.utc) -> FetchResult:
        """Live items of `kind`; floating times and all-day dates are read in `time_zone`.

        The zone is a tzinfo parsed once at the request's boundary
        (resolver/domain/requests.py): nothing here re-reads a name.
        """
        return self.reader().fetch(kind=kind, collection_ids=collection_ids, now=self.now(), tz=time_zone,
                                   options=self._options())


def limits_from_settings() -> Limits:
    from resolver.conf import resolver_settings as s

    return Limits(max_bytes=int(s.MAX_RESOURCE_BYTES), max_components=int(s.MAX_RESOURCE_COMPONENTS),
                  max_depth=int(s.MAX_COMPONENT_DEPTH), max_overrides=int(s.MAX_RESOURCE_OVERRIDES),
                  max_dates=int(s.MAX_RECURRENCE_DATES), recurrence_budget=int(s.RECURRENCE_BUDGET))


def _filter_retry_from_settings() -> float:
    from resolver.conf import resolver_settings

    return float(resolver_settings.SERVER_FILTER_RETRY_SECONDS)


__all__ = ["CalDAVCalendar", "limits_from_settings"]
