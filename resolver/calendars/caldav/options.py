"""How the reader reads: every option, spelled once here, built once from the settings.

`ReadOptions.from_settings(settings)` is the one place a setting becomes an
option (the settings are resolver_settings, or a person's account's, which
names its own URL and credentials and nothing else). The calendar
(calendar.CalDAVCalendar) holds one and hands it to its reader with every
call; the reader keeps none of it. A test or a benchmark that wants another
option names it as a keyword of the calendar, by the field's name here:

    CalDAVCalendar(url=..., username=..., password=..., sync="off", parse_cache_items=0)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from resolver.calendars.ical import Limits

SYNC_MODES = ("auto", "off")


@dataclass(frozen=True)
class ReadOptions:
    """How one fetch reads. Built from the settings (`from_settings`); no option has a default of its own."""

    # Seconds one CalDAV request may take (RESOLVER_CALDAV_TIMEOUT), within the request's deadline.
    timeout: float
    # Bytes one CalDAV answer may have (RESOLVER_MAX_RESPONSE_BYTES; docs/security.md sizes it).
    max_response_bytes: int
    # Events are live from now to now + horizon (RESOLVER_EVENT_HORIZON_DAYS).
    horizon_days: int
    # Ask the server for events in the window only (multistatus.query_body).
    event_time_range: bool
    # Incremental reads: "auto" uses WebDAV sync where the server offers it, "off" an
    # etag-only listing plus calendar-multiget (RESOLVER_CALDAV_SYNC).
    sync: str
    # Concurrent fetches of the same collections share one read (flight.py).
    shared_reads: bool
    # An unchanged, settled CS:getctag may stand for the collection (ctags.py).
    ctag: bool
    # Resources all readers' memos hold together (caches.Budget); 0 turns the memo, and
    # with it every incremental read, off: each request is then a full read.
    parse_cache_items: int
    # Bounds on the work one resource may cost (RESOLVER_MAX_RESOURCE_BYTES and the rest).
    limits: Limits
    # How long a collection whose server failed on its own time-range is read without it.
    filter_retry_seconds: float

    def __post_init__(self) -> None:
        if self.sync not in SYNC_MODES:
            raise ValueError(f"RESOLVER_CALDAV_SYNC must be one of {', '.join(SYNC_MODES)}")

    @property
    def incremental(self) -> bool:
        return self.parse_cache_items > 0

    @classmethod
    def from_settings(cls, settings: Any) -> ReadOptions:
        return cls(
            timeout=float(settings.CALDAV_TIMEOUT),
            max_response_bytes=int(settings.MAX_RESPONSE_BYTES),
            horizon_days=int(settings.EVENT_HORIZON_DAYS),
            event_time_range=bool(settings.EVENT_TIME_RANGE_FILTER),
            sync=str(settings.CALDAV_SYNC).strip().lower(),
            shared_reads=bool(settings.CALDAV_SHARED_READS),
            ctag=bool(settings.CALDAV_CTAG),
            parse_cache_items=int(settings.PARSE_CACHE_ITEMS),
            limits=Limits(max_bytes=int(settings.MAX_RESOURCE_BYTES),
                          max_components=int(settings.MAX_RESOURCE_COMPONENTS),
                          max_depth=int(settings.MAX_COMPONENT_DEPTH),
                          max_overrides=int(settings.MAX_RESOURCE_OVERRIDES),
                          max_dates=int(settings.MAX_RECURRENCE_DATES),
                          recurrence_budget=int(settings.RECURRENCE_BUDGET)),
            filter_retry_seconds=float(settings.SERVER_FILTER_RETRY_SECONDS),
        )
