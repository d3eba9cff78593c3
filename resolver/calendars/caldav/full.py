"""The full read: one calendar-query per collection, every resource of the kind with its data.

What a request does with the parse memo off (RESOLVER_PARSE_CACHE_ITEMS = 0),
and the baseline every incremental read must agree with.
"""
from __future__ import annotations

import logging

from resolver import deadline
from resolver.domain.ports import SkippedResource
from resolver.calendars.caldav.caches import FilterMemory
from resolver.calendars.caldav.http import Transport
from resolver.calendars.caldav.members import Resource, member_path
from resolver.calendars.caldav.stamps import settled
from resolver.calendars.caldav.multistatus import CALENDAR_DATA, GETETAG, GETLASTMODIFIED, query_body, report
from resolver.calendars.ical import Window
from resolver.domain.codes import is_transient
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind

logger = logging.getLogger("resolver.calendars")


def read(transport: Transport, path: str, body: bytes, skipped: list[SkippedResource]) -> list[Resource]:
    found = report(transport, path, body, depth=1)
    resources = []
    for response in found.responses:
        href = member_path(transport.origin, response.href, collection=path, skipped=skipped)
        if href is None:
            continue
        ok = response.status == 200
        resources.append(Resource(href, response.text(GETETAG) if ok else None,
                                  (response.text(CALENDAR_DATA) or None) if ok else None,
                                  stamp=settled(response.text(GETLASTMODIFIED), found.served) if ok else None))
    return resources


def read_full(transport: Transport, path: str, *, kind: Kind, window: Window, time_range: bool,
              memory: FilterMemory, retry_seconds: float,
              skipped: list[SkippedResource]) -> tuple[list[Resource], bool]:
    """Every resource of the kind, with its data, and whether the time-range was left out.

    A server can choke on its own filter: Radicale expands a series for the
    time-range on every request, so one `FREQ=SECONDLY` invitation makes
    every event REPORT of that collection time out. When the filtered
    REPORT times out or fails with a 5xx, it is sent once more without the
    time-range (the client applies the window and its own bounds anyway),
    and the collection is read without it for SERVER_FILTER_RETRY_SECONDS
    (the reader's `memory`), so that the server is not asked again on every
    request. Incremental reads never send a time-range (the memo must know
    every event).
    """
    if kind is not Kind.EVENT or not time_range:
        return read(transport, path, query_body(kind, window, time_range=time_range), skipped), False
    without = query_body(kind, window, time_range=False)
    if memory.unsafe(path):
        return read(transport, path, without, skipped), True
    try:
        return read(transport, path, query_body(kind, window), skipped), False
    except CalendarUnavailable as err:
        reason = str(err.details.get("reason", ""))
        if not is_transient(reason) or deadline.expired():
            raise  # the resolution's own deadline is no fault of the filter
        memory.remember(path, retry_seconds)
        logger.warning("caldav time-range filter failed on %s (%s): read without it, for %ss",
                       path, reason, retry_seconds)
    return read(transport, path, without, skipped), True
