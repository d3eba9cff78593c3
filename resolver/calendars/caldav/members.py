"""A collection member as one read saw it, and the rule that keeps members on the server's origin."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from resolver.domain.ports import SkippedResource
from resolver.calendars.caldav.account import Origin
from resolver.calendars.caldav.hrefs import usable

logger = logging.getLogger("resolver.calendars")

FOREIGN_ORIGIN = "foreign_origin"


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource as this request saw it: its href (the server's, byte for byte), ETag, text or facts."""

    href: str
    etag: str | None
    data: str | None
    facts: Any = None
    # DAV:getlastmodified where it was asked (the etag-listing path), else None.
    stamp: str | None = None


def member_path(origin: Origin, raw: str, *, collection: str, skipped: list[SkippedResource]) -> str | None:
    """The member's href as a path on our origin, or None (and a `foreign_origin` skip) for another origin.

    An item elsewhere is never read: its href would send the caller, and any
    write it makes with its own credentials, to a host the account never named.
    A path that is not a valid URI reference (a raw space, a lone `%`) gets
    only its forbidden characters escaped (hrefs.usable); a valid one is kept
    byte for byte.
    """
    path = origin.path_of(raw, base=collection)
    if path is None:
        logger.warning("skipped resource %s: %s", raw, FOREIGN_ORIGIN)
        skipped.append(SkippedResource(raw, FOREIGN_ORIGIN))
        return None
    return usable(path)
