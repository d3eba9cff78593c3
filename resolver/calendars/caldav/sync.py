"""WebDAV sync (RFC 6578): the first token, then reads from the last token.

The first token is the collection's DAV:sync-token property where the server
gives one that is a URI (`current_token`; the reader then takes the kind's
calendar-query for the data). Elsewhere the initial sync-collection (an empty
`DAV:sync-token`) lists every member with its ETag, and the data too where
the server sends it. A later sync lists what changed or vanished since the
token.

None from either means: this server or token gives no usable sync answer, and
the caller reads another way. That is the answer to a refused token (403 or
409 with DAV:valid-sync-token) and to anything unexpected (another status, no
new token, a truncated answer, a change without an ETag). A timeout, a
dropped connection or refused credentials is not an answer: it fails the request.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from resolver.domain.ports import SkippedResource
from resolver.calendars.caldav.http import Answer, Transport
from resolver.calendars.caldav.members import member_path
from resolver.calendars.caldav.multistatus import (
    CALENDAR_DATA, GETETAG, SYNC_TOKEN, answered, propfind_body, sync_body,
)
from resolver.domain.errors import CalendarUnavailable

logger = logging.getLogger("resolver.calendars")

INSUFFICIENT_STORAGE = 507  # RFC 6578 3.6: the answer was truncated
# A URI's scheme and colon (RFC 3986 3.1): what every sync-token must start with.
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# Failures that end the request: no other way of reading would fare better.
FATAL = ("timeout", "unreachable", "unauthorized", "forbidden", "response_too_large", "foreign_origin")


@dataclass
class Changes:
    token: str
    # href -> ETag, for every member listed (all of them for the initial sync).
    updates: dict[str, str] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    # href -> text, where the answer carried the data (initial sync only).
    data: dict[str, str] = field(default_factory=dict)
    # Members listed without a usable status or ETag (initial sync): skipped, never remembered.
    odd: list[str] = field(default_factory=list)


def _send(transport: Transport, path: str, token: str, *, data: bool) -> Answer | None:
    try:
        answer = transport.report(path, sync_body(token, data=data), depth=0)
    except CalendarUnavailable as err:
        if err.details.get("reason") in FATAL:
            raise
        logger.info("sync failed for %s (%s): read another way", path, err.details.get("reason"))
        return None
    if answered(answer, required=False) is None:
        logger.info("sync answered %s for %s: read another way", answer.status, path)
        return None
    return answer


def changes(transport: Transport, path: str, token: str, skipped: list[SkippedResource]) -> Changes | None:
    """What changed since `token` (ETags only), or None."""
    answer = _send(transport, path, token, data=False)
    if answer is None:
        return None
    return _read(transport, path, answer, skipped, initial=False)


def initial(transport: Transport, path: str, skipped: list[SkippedResource], *, data: bool = True) -> Changes | None:
    """Every member, its ETag and (where sent, if asked) its data, with the first token; or None."""
    answer = _send(transport, path, "", data=data)
    if answer is None:
        return None
    return _read(transport, path, answer, skipped, initial=True)


def current_token(transport: Transport, path: str) -> str | None:
    """The collection's DAV:sync-token property (a Depth 0 PROPFIND), or None.

    RFC 6578 4: the property is the token a sync-collection would return
    now. With it, a cold read takes the kind's calendar-query for the data:
    the server filters on the kind, where an initial sync sends every member
    of both kinds (Radicale also walks its whole history for it: 924 ms
    against 586 ms for both requests at N = 1,000, docs/performance.md).
    """
    try:
        answer = transport.propfind(path, propfind_body(SYNC_TOKEN), depth=0)
    except CalendarUnavailable as err:
        if err.details.get("reason") in FATAL:
            raise
        logger.info("sync-token of %s not read (%s): an initial sync instead", path, err.details.get("reason"))
        return None
    found = answered(answer, required=False)
    if found is None:
        return None
    # Depth 0: the one response is the collection's, however the server spells its href.
    for response in found.responses:
        token = (response.text(SYNC_TOKEN) or "").strip()
        if token and _URI.match(token):
            return token
        if token:
            # RFC 6578 3.2: a token is a URI. SOGo 5.8 answers the current second
            # ("1796336872"), and a sync from it never lists a change written in
            # that second: the initial sync's token (its last change) is safe there.
            logger.info("sync-token of %s is not a URI: an initial sync instead", path)
    return None


def _read(transport: Transport, path: str, answer: Answer, skipped: list[SkippedResource], *,
          initial: bool) -> Changes | None:
    found = answer.multistatus
    assert found is not None
    if not found.sync_token:
        return None
    result = Changes(token=found.sync_token)
    for response in found.responses:
        if response.status == INSUFFICIENT_STORAGE:
            return None
        href = member_path(transport.origin, response.href, collection=path, skipped=skipped)
        if href is None or href == path:
            continue
        if response.status == 404 and not response.props:
            if not initial:
                result.deleted.append(href)
            continue
        etag = response.text(GETETAG)
        if response.status != 200 or not etag:
            if initial:
                result.odd.append(href)
                continue
            return None
        result.updates[href] = etag
        text = response.text(CALENDAR_DATA)
        if text:
            result.data[href] = text
    return result
