"""Discovery (RFC 4791 section 7, RFC 5397): from the account's URL to its calendar collections.

The first PROPFIND on the account's URL asks for `current-user-principal` and
`calendar-home-set` together: where the URL is the principal (or the server
answers both there), the home comes in one round trip, else one more
PROPFIND on the principal. The home's Depth 1 listing then names the
calendars; the reader remembers the home, so a later request lists it with
one PROPFIND. Every href on the way must be on the account's origin: a
principal, home set or collection elsewhere ends the read with reason
`foreign_origin` before any request goes there.
"""
from __future__ import annotations

import logging
from urllib.parse import urlsplit

from resolver.calendars.caldav.http import Transport, unavailable
from resolver.calendars.caldav.multistatus import (
    CALENDAR, DISPLAYNAME, HOME_SET, PRINCIPAL, RESOURCETYPE, Multistatus, propfind_body, required,
)
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Collection, collection_id_from_path

logger = logging.getLogger("resolver.calendars")


WELL_KNOWN = "/.well-known/caldav"


def _pinned(transport: Transport, href: str, *, base: str, step: str) -> str:
    path = transport.origin.path_of(href, base=base)
    if path is None:
        logger.warning("caldav discovery: %s on another origin refused", step)
        raise unavailable("foreign_origin", "The calendar server pointed to another origin.", step=step)
    return path


def _first(found: Multistatus, tag: str) -> str | None:
    for response in found.responses:
        prop = response.props.get(tag)
        if prop is not None and prop.hrefs and prop.hrefs[0]:
            return prop.hrefs[0]
    return None


def start_path(url: str) -> str:
    """The account URL's path, as written."""
    parts = urlsplit(url)
    return parts.path or "/"


def find_home(transport: Transport, start: str) -> tuple[str, list[Collection] | None]:
    """The calendar home's path (the home set, else the principal, else the account's URL), and its
    calendars when they came along.

    Where the principal is not the account's URL, it is asked with Depth 1 for
    its home set and its children's types at once: where the home is the
    principal (Radicale), that answer is already the home's listing, and
    discovery takes two round trips instead of three.
    """
    found = _first_answer(transport, start)
    home = _first(found, HOME_SET)
    if home is not None:
        return _pinned(transport, home, base=start, step="home_set"), None
    principal_href = _first(found, PRINCIPAL)
    if principal_href is None:
        return start, None
    principal = _pinned(transport, principal_href, base=start, step="principal")
    if principal == start:
        return start, None
    found = required(transport.propfind(principal, propfind_body(HOME_SET, RESOURCETYPE, DISPLAYNAME), depth=1))
    own = [r for r in found.responses if _same(transport.origin.path_of(r.href, base=principal) or "", principal)]
    home = _first(Multistatus(responses=own), HOME_SET)
    path = _pinned(transport, home, base=principal, step="home_set") if home is not None else principal
    if _same(path, principal):
        return path, _calendars(transport, found, path)
    return path, None


def _first_answer(transport: Transport, start: str) -> Multistatus:
    """The PROPFIND on the account's URL; at `/.well-known/caldav`, anything but a multistatus or a
    refusal (SOGo without its Apache front answers an HTML page there) falls back to the root (RFC 6764 6)."""
    body = propfind_body(PRINCIPAL, HOME_SET)
    if start.rstrip("/") != WELL_KNOWN:
        return required(transport.propfind(start, body, depth=0))
    try:
        answer = transport.propfind(start, body, depth=0)
        if answer.multistatus is not None or answer.status in (401, 403):
            return required(answer)
    except CalendarUnavailable as err:
        if err.details.get("reason") != "bad_response":
            raise
    logger.info("caldav discovery: no multistatus at %s: asking the root", WELL_KNOWN)
    return required(transport.propfind("/", body, depth=0))


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def list_calendars(transport: Transport, home: str) -> list[Collection] | None:
    """The home's calendar collections (read live), or None when the home is gone (404)."""
    answer = transport.propfind(home, propfind_body(RESOURCETYPE, DISPLAYNAME), depth=1)
    if answer.status == 404:
        return None
    return _calendars(transport, required(answer), home)


def _calendars(transport: Transport, found: Multistatus, home: str) -> list[Collection]:
    collections = []
    for response in found.responses:
        kinds = response.props.get(RESOURCETYPE)
        if kinds is None or CALENDAR not in kinds.children:
            continue
        path = _pinned(transport, response.href, base=home, step="collection")
        if _same(path, home):
            continue
        cid = collection_id_from_path(path)
        name = (response.text(DISPLAYNAME) or "").strip()
        collections.append(Collection(collection_id=cid, url_path=path, display_name=name or cid))
    return sorted(collections, key=lambda c: c.collection_id)
