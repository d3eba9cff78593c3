"""The etag listing and calendar-multiget: for servers without WebDAV sync, and for data a sync did not send."""
from __future__ import annotations

from typing import Iterator

from resolver.domain.ports import SkippedResource
from resolver.calendars.caldav.http import Transport
from resolver.calendars.caldav.members import member_path
from resolver.calendars.caldav.stamps import settled
from resolver.calendars.caldav.multistatus import (
    CALENDAR_DATA, GETETAG, GETLASTMODIFIED, multiget_body, propfind_body, query_body, report, required,
)
from resolver.calendars.ical import Window
from resolver.domain.items import Kind

# hrefs per calendar-multiget: bounds the request body (about 100 bytes an href).
MULTIGET_BATCH = 2000


def listing(transport: Transport, path: str, *, kind: Kind, window: Window,
            skipped: list[SkippedResource], stamps: dict[str, str] | None = None) -> dict[str, str]:
    """Every member of the kind, href -> ETag, without data; each one's getlastmodified into `stamps`."""
    body = query_body(kind, window, time_range=False, data=False, stamp=stamps is not None)
    found = report(transport, path, body, depth=1)
    members: dict[str, str] = {}
    for response in found.responses:
        etag = response.text(GETETAG)
        if response.status != 200 or not etag:
            continue
        href = member_path(transport.origin, response.href, collection=path, skipped=skipped)
        if href is not None:
            members[href] = etag
            stamp = settled(response.text(GETLASTMODIFIED), found.served)
            if stamps is not None and stamp is not None:
                stamps[href] = stamp
    return members


def members(transport: Transport, path: str, skipped: list[SkippedResource] | None = None,
            stamps: dict[str, str] | None = None) -> dict[str, str]:
    """Every member of the collection, href -> ETag, as its Depth 1 PROPFIND lists them (any kind).

    With `stamps`, each member's DAV:getlastmodified goes there: every server
    tested answers it to a PROPFIND, where SOGo leaves it out of a calendar-query.
    """
    body = propfind_body(GETETAG, *([GETLASTMODIFIED] if stamps is not None else []))
    listed: dict[str, str] = {}
    found = required(transport.propfind(path, body, depth=1))
    for response in found.responses:
        etag = response.text(GETETAG)
        href = member_path(transport.origin, response.href, collection=path,
                           skipped=skipped if skipped is not None else [])
        if href is None or href.rstrip("/") == path.rstrip("/") or response.status != 200 or not etag:
            continue
        listed[href] = etag
        stamp = settled(response.text(GETLASTMODIFIED), found.served)
        if stamps is not None and stamp is not None:
            stamps[href] = stamp
    return listed


def multiget(transport: Transport, path: str, hrefs: list[str],
             skipped: list[SkippedResource]) -> Iterator[tuple[str, str | None, str | None, int | None]]:
    """(href, etag, data, status) for each href asked, in batches."""
    for start in range(0, len(hrefs), MULTIGET_BATCH):
        found = report(transport, path, multiget_body(hrefs[start:start + MULTIGET_BATCH]), depth=None)
        for response in found.responses:
            for raw in response.hrefs or ("",):
                href = member_path(transport.origin, raw, collection=path, skipped=skipped)
                if href is None:
                    continue
                ok = response.status == 200
                yield (href, response.text(GETETAG) if ok else None,
                       (response.text(CALENDAR_DATA) or None) if ok else None, response.status)
