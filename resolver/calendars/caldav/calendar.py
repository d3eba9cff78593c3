"""The CalendarSource port over a CalDAV account: settings in, the account's reader does the reading."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone, tzinfo
from typing import Any, Callable, Sequence

from resolver.domain.ports import FetchResult
from resolver.calendars.caldav.account import CalDAVAccount
from resolver.calendars.caldav.http import unavailable
from resolver.calendars.caldav.options import ReadOptions
from resolver.calendars.caldav.reader import CalDAVReader
from resolver.calendars.caldav.registry import ReaderRegistry, readers
from resolver.domain.items import Collection, Kind

class CalDAVCalendar:
    """One CalDAV account as a CalendarSource: its URL and credentials, and how it is read (`options`).

    The options are the settings' (ReadOptions.from_settings), built once when
    the calendar is; a keyword naming a ReadOptions field changes that one
    (tests and benchmarks: `sync="off"`, `parse_cache_items=0`, `timeout=5.0`).
    """

    def __init__(self, url: str, username: str, password: str, *, options: ReadOptions | None = None,
                 now: Callable[[], datetime] | None = None, registry: ReaderRegistry | None = None,
                 label: str = "", check_addresses: bool = False, **changes: Any) -> None:
        self.url = url
        self.username = username
        self.password = password
        base = options if options is not None else ReadOptions.from_settings(_settings())
        self.options = replace(base, **changes) if changes else base
        self.now = now or (lambda: datetime.now(timezone.utc))
        # The readers to use; None: the process's (registry.readers()).
        self.registry = registry
        self.label = label
        # Connect only to public addresses, checked on every connection (a person's account).
        self.check_addresses = check_addresses

    def __repr__(self) -> str:
        # Never the password (a repr reaches logs and error pages).
        return f"CalDAVCalendar(url={self.url!r}, username={self.username!r}, options={self.options!r})"

    @classmethod
    def from_settings(cls, settings: Any) -> CalDAVCalendar:
        """The CalDAV backend, configured from the resolver settings (the default CALENDAR_BACKEND)."""
        return cls(
            url=settings.CALDAV_URL,
            username=settings.CALDAV_USERNAME,
            password=settings.CALDAV_PASSWORD,
            options=ReadOptions.from_settings(settings),
            # Only a person's account says so (resolver.accounts); the settings' own may be private.
            check_addresses=bool(getattr(settings, "CALDAV_CHECK_ADDRESSES", False)),
        )

    @property
    def account(self) -> CalDAVAccount:
        return CalDAVAccount(url=self.url, username=self.username, password=self.password, label=self.label,
                             check_addresses=self.check_addresses)

    def reader(self) -> CalDAVReader:
        # `is None`, not `or`: an empty registry is falsy (it has a length).
        registry = self.registry if self.registry is not None else readers()
        if self.options.parse_cache_items > 0:
            # Off (0) leaves the shared budget alone: another calendar may use it.
            registry.configure(self.options.parse_cache_items)
        try:
            return registry.get(self.account)
        except ValueError as err:  # not an http(s) URL
            raise unavailable("unreachable") from err

    def collections(self) -> list[Collection]:
        reader = self.reader()
        return reader.collections(reader.transport(self.options))

    def says_calendar_access(self) -> bool:
        """Whether the account's URL answers OPTIONS with DAV: calendar-access (RFC 4791, 5.1)."""
        reader = self.reader()
        return reader.transport(self.options).says_calendar_access(self.url)

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: tzinfo = timezone.utc) -> FetchResult:
        """Live items of `kind`; floating times and all-day dates are read in `time_zone`.

        The zone is a tzinfo parsed once at the request's boundary
        (resolver/domain/requests.py): nothing here re-reads a name.
        """
        return self.reader().fetch(kind=kind, collection_ids=collection_ids, now=self.now(), tz=time_zone,
                                   options=self.options)

    def fetch_since(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo,
                    since: datetime) -> FetchResult:
        """`fetch`, where a read made at or after `since` is fresh enough: the same request's read of the other
        kind, which the reader answers with no round trip when its read of the first kind showed that kind's
        members too (reader.CalDAVReader._carry); else a read like `fetch`'s."""
        return self.reader().fetch(kind=kind, collection_ids=collection_ids, now=self.now(), tz=time_zone,
                                   options=self.options, fresh_since=since)


def _settings() -> Any:
    from resolver.conf import resolver_settings

    return resolver_settings


__all__ = ["CalDAVCalendar"]
