"""The real calendar: any RFC 4791 server, read live through the caldav package.

Discovery uses the library's principal and calendar-home calls. Items are
read with one calendar-query REPORT per collection through the library's own
`report()` and parsed with `icalendar`: the library's high-level `search()`
builds an object per resource, which costs about three times the floor on
large collections.
"""
from __future__ import annotations

import logging
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from typing import Any, Callable, Iterator, Sequence
from urllib.parse import urljoin
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import caldav
from caldav.elements import cdav, dav
from caldav.lib import error as caldav_error
from lxml import etree

from resolver import deadline
from resolver.calendars.base import FetchResult, SkippedResource
from resolver.calendars.ical import Limits, UnparseableResource, Window, live_items, window_from
from resolver.domain.errors import CalendarUnavailable, CollectionNotFound
from resolver.domain.items import Collection, Item, Kind, collection_id_from_path

logger = logging.getLogger("resolver.calendars")


class _FilterMemory:
    """Process memory of the collections whose server failed on its own time-range filter."""

    def __init__(self) -> None:
        self._until: dict[tuple[str, str, str], float] = {}
        self._lock = threading.Lock()

    def remember(self, key: tuple[str, str, str], seconds: float) -> None:
        with self._lock:
            self._until[key] = time.monotonic() + seconds

    def unsafe(self, key: tuple[str, str, str]) -> bool:
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


_FILTER_MEMORY = _FilterMemory()

_local = threading.local()


def query_body(kind: Kind, window: Window, *, time_range: bool = True) -> bytes:
    """calendar-query asking for etag and data, filtered as far as is safe.

    A filter may only ever return too much, never too little: the client
    re-checks every resource, but cannot see what the server left out.

    Tasks: only those without a COMPLETED date. Never "STATUS is not
    COMPLETED": servers drop tasks that have no STATUS at all, which are open.
    Events: those with an occurrence in the window, so years of past events
    stay on the server. `time_range=False` asks for every VEVENT instead, for
    servers whose time-range leaves out live events: Xandikos 0.4 misses a
    series whose only upcoming occurrence is an RDATE, or an override moved
    into the window from a series that has ended. Either way the window is
    applied again on the client (`ical.live_items`).
    """
    if kind is Kind.TASK:
        inner = cdav.CompFilter("VTODO") + (cdav.PropFilter("COMPLETED") + cdav.NotDefined())
    elif time_range:
        inner = cdav.CompFilter("VEVENT") + cdav.TimeRange(window.start, window.end)
    else:
        inner = cdav.CompFilter("VEVENT")
    query = cdav.CalendarQuery() + [
        dav.Prop() + [dav.GetEtag(), cdav.CalendarData()],
        cdav.Filter() + (cdav.CompFilter("VCALENDAR") + inner),
    ]
    return etree.tostring(query.xmlelement(), encoding="utf-8", xml_declaration=True)


@contextmanager
def _guard(action: str) -> Iterator[None]:
    """Every way the server can fail becomes calendar_unavailable, with a reason."""
    try:
        yield
    except (CalendarUnavailable, CollectionNotFound):
        raise
    except caldav_error.AuthorizationError as err:
        logger.warning("caldav %s refused: %s", action, type(err).__name__)
        raise CalendarUnavailable(
            "The calendar server refused our credentials.", details={"reason": "unauthorized"}
        ) from err
    except Exception as err:  # niquests, lxml and caldav errors alike
        reason = _reason(err)
        logger.warning("caldav %s failed: %s (%s)", action, reason, type(err).__name__)
        raise CalendarUnavailable(details={"reason": reason}) from err


def _reason(err: Exception) -> str:
    name = type(err).__name__.lower()
    if "timeout" in name or "timedout" in name:
        return "timeout"
    if "connection" in name:
        return "unreachable"
    if isinstance(err, etree.LxmlError):
        return "bad_response"
    return "server_error"


class _CountingClient(caldav.DAVClient):
    """The library's client, counting its HTTP round trips for FetchResult.requests."""

    round_trips = 0
    # The calendar listing without getctag and calendar-color, which nothing
    # here reads: Radicale derives a collection's ctag from every item in it,
    # which made each listing cost 0.36 s at 1,000 items, against 17 ms without.
    CALENDAR_LIST_PROPS = [
        prop for prop in caldav.DAVClient.CALENDAR_LIST_PROPS
        if prop not in ("{http://calendarserver.org/ns/}getctag", "{http://apple.com/ns/ical/}calendar-color")
    ]

    def request(self, *args: Any, **kwargs: Any) -> Any:
        # No request may outlive the resolution's deadline: none starts after
        # it, and each waits at most what is left of it.
        left = deadline.remaining()
        base = getattr(self, "_base_timeout", None)
        if base is None:
            base = self._base_timeout = self.timeout
        if left is not None:
            if left <= 0:
                raise deadline.ResolutionTimeout()
            self.timeout = min(base, left)
        else:
            self.timeout = base
        self.round_trips += 1
        return super().request(*args, **kwargs)


@dataclass
class CalDAVCalendar:
    url: str
    username: str
    password: str = field(repr=False)
    timeout: float = 10.0
    horizon_days: int = 90
    # Ask the server for events in the window only (see query_body).
    event_time_range: bool = True
    now: Callable[[], datetime] = field(default=lambda: datetime.now(timezone.utc), repr=False)
    # How long a collection whose server failed on its own time-range is read
    # without it; None: RESOLVER_SERVER_FILTER_RETRY_SECONDS.
    filter_retry_seconds: float | None = None
    # Bounds on the work one resource may cost; None: from the settings (limits_from_settings).
    limits: Limits | None = None

    def _key(self) -> tuple[str, str, str, float]:
        return (self.url, self.username, self.password, self.timeout)

    def _client(self) -> _CountingClient:
        # One client per thread and server: the library's session is reused
        # across requests, and sessions are not shared between threads.
        key = self._key()
        clients: dict[tuple, _CountingClient] = getattr(_local, "clients", None) or {}
        _local.clients = clients
        if key not in clients:
            clients[key] = _CountingClient(
                url=self.url, username=self.username or None, password=self.password or None,
                timeout=self.timeout, enable_rfc6764=False,
            )
        return clients[key]

    def _calendars(self, client: _CountingClient) -> list[caldav.Calendar]:
        """The principal's calendars, read live.

        The first time (per thread and server) the library walks the whole
        discovery: principal, calendar-home-set, then the home's children. The
        home is then remembered, so later requests list its children with one
        PROPFIND instead of three: the list itself is always read live, only
        where it lives is kept. A remembered home that is gone (404) or empty
        is forgotten and discovery starts over at once; any other failure
        forgets it too, for the next request.
        """
        homes: dict[tuple, str] = getattr(_local, "homes", None) or {}
        _local.homes = homes
        key = self._key()
        home = homes.get(key)
        if home is not None:
            try:
                calendars = caldav.CalendarSet(client=client, url=home).calendars()
            except (caldav_error.NotFoundError, caldav_error.PropfindError):
                calendars = []
            except Exception:
                homes.pop(key, None)
                raise
            if calendars:
                return calendars
            homes.pop(key, None)
        calendars = client.principal().calendars()
        parents = {urljoin(str(calendar.url), "..") for calendar in calendars}
        # Calendars are the home's children (a Depth 1 listing), so they share
        # one parent; anything else is left to full discovery every time.
        if len(parents) == 1:
            homes[key] = parents.pop()
        return calendars

    def _discover(self) -> list[tuple[Collection, str]]:
        with _guard("discovery"), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            client = self._client()
            calendars = self._calendars(client)
            found = []
            for calendar in calendars:
                path = calendar.url.path
                collection = Collection(
                    collection_id=collection_id_from_path(path),
                    url_path=path,
                    display_name=str(getattr(calendar, "name", None) or collection_id_from_path(path)),
                )
                found.append((collection, str(calendar.url)))
            return sorted(found, key=lambda pair: pair[0].collection_id)

    def collections(self) -> list[Collection]:
        return [collection for collection, _ in self._discover()]

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: str | None = None) -> FetchResult:
        started = time.perf_counter()
        read_at = datetime.now(timezone.utc)
        round_trips = self._client().round_trips
        discovered = self._discover()
        by_id = {collection.collection_id: (collection, url) for collection, url in discovered}
        wanted = list(dict.fromkeys(collection_ids)) if collection_ids else sorted(by_id)
        unknown = [cid for cid in wanted if cid not in by_id]
        if unknown:
            raise CollectionNotFound(
                "Unknown collection ID.", details={"collection_ids": unknown}
            )
        window = window_from(self.now(), self.horizon_days)
        items: list[Item] = []
        skipped: list[SkippedResource] = []
        filter_skipped: list[str] = []
        for cid in wanted:
            collection, url = by_id[cid]
            got, bad, without_filter = self._read_collection(url, collection, kind=kind, window=window,
                                                             tz=_zone(time_zone))
            items.extend(got)
            skipped.extend(bad)
            if without_filter:
                filter_skipped.append(cid)
        return FetchResult(
            items=tuple(items),
            skipped=tuple(skipped),
            # Counted, not assumed: discovery takes one to three round trips.
            requests=self._client().round_trips - round_trips,
            seconds=time.perf_counter() - started,
            collections_searched=tuple(wanted),
            read_at=read_at,
            server_filter_skipped=tuple(filter_skipped),
        )

    def _read_collection(
        self, url: str, collection: Collection, *, kind: Kind, window: Window, tz: tzinfo | None
    ) -> tuple[list[Item], list[SkippedResource], bool]:
        """One collection's live items, and whether the server's time-range filter was left out.

        A server can choke on its own filter: Radicale expands a series for the
        time-range on every request, so one `FREQ=SECONDLY` invitation makes
        every event REPORT of that collection time out. When the filtered
        REPORT times out or fails with a 5xx, it is sent once more without the
        time-range (the client applies the window and its own bounds anyway),
        and the collection is read without it for SERVER_FILTER_RETRY_SECONDS,
        so that the server is not asked again on every request.
        """
        if kind is not Kind.EVENT or not self.event_time_range:
            return (*self._query(url, collection, query_body(kind, window, time_range=self.event_time_range),
                                 kind=kind, window=window, tz=tz), False)
        without = query_body(kind, window, time_range=False)
        key = (self.url, self.username, url)
        if _FILTER_MEMORY.unsafe(key):
            return (*self._query(url, collection, without, kind=kind, window=window, tz=tz), True)
        try:
            return (*self._query(url, collection, query_body(kind, window), kind=kind, window=window, tz=tz), False)
        except CalendarUnavailable as err:
            reason = str(err.details.get("reason", ""))
            if (reason != "timeout" and not reason.startswith("http_5")) or deadline.expired():
                raise  # the resolution's own deadline is no fault of the filter
            seconds = self.filter_retry_seconds if self.filter_retry_seconds is not None else _filter_retry_from_settings()
            _FILTER_MEMORY.remember(key, seconds)
            logger.warning("caldav time-range filter failed on %s (%s): read without it, for %ss",
                           collection.url_path, reason, seconds)
        return (*self._query(url, collection, without, kind=kind, window=window, tz=tz), True)

    def _query(
        self, url: str, collection: Collection, body: bytes, *, kind: Kind, window: Window,
        tz: tzinfo | None = None,
    ) -> tuple[list[Item], list[SkippedResource]]:
        with _guard("report"):
            response = self._client().report(url, body, depth=1)
            if response.status not in (200, 207):
                raise CalendarUnavailable(details={"reason": f"http_{response.status}"})
            results = response.parse_calendar_query()
        items: list[Item] = []
        skipped: list[SkippedResource] = []
        for result in results:
            if deadline.expired():
                logger.warning("caldav read of %s: resolution deadline passed while reading", collection.url_path)
                raise CalendarUnavailable(details={"reason": "timeout"})
            if result.status != 200 or not result.calendar_data or result.etag is None:
                # Logged like any other skip: the README promises every skipped href in the log.
                logger.warning("skipped resource %s: %s", result.href, "no calendar data")
                skipped.append(SkippedResource(result.href, "no calendar data"))
                continue
            try:
                items.extend(
                    live_items(result.calendar_data, kind=kind, collection_path=collection.url_path,
                               etag=result.etag, window=window, href=result.href, tz=tz,
                               limits=self.limits or limits_from_settings())
                )
            except UnparseableResource as err:
                logger.warning("skipped resource %s: %s", result.href, err.reason)
                skipped.append(SkippedResource(result.href, err.reason))
        return items, skipped


def _zone(time_zone: str | None) -> tzinfo | None:
    """The zone floating times are read in; the doors refuse an unknown name before this."""
    if not time_zone:
        return None
    try:
        return ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        logger.warning("unknown time zone %r: floating times read as UTC", time_zone)
        return None


def limits_from_settings() -> Limits:
    from resolver.conf import resolver_settings as s

    return Limits(max_bytes=int(s.MAX_RESOURCE_BYTES), max_components=int(s.MAX_RESOURCE_COMPONENTS),
                  max_depth=int(s.MAX_COMPONENT_DEPTH), max_overrides=int(s.MAX_RESOURCE_OVERRIDES),
                  max_dates=int(s.MAX_RECURRENCE_DATES), recurrence_budget=int(s.RECURRENCE_BUDGET))


def _filter_retry_from_settings() -> float:
    from resolver.conf import resolver_settings

    return float(resolver_settings.SERVER_FILTER_RETRY_SECONDS)
