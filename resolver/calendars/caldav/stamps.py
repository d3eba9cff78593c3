"""DAV:getlastmodified as a witness that a resource is unchanged, where there is no WebDAV sync.

A server that hands an ETag out again after a DELETE + PUT (SOGo counts
versions per href) leaves the reader one other witness: the modification
time. It has one-second resolution, so a resource written in the second the
collection was listed, or just before, may be written again within that same
second and keep both its ETag and its time: the "racy" case git knows for
file times. Such a stamp is remembered as RACY, and the reader downloads the
resource again next time (and compares its content) instead of believing it.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

# Not a time: "this resource may change without its stamp changing".
RACY = ""

# How far before the listing a stamp must be to be believed: the second of
# resolution, the time between the listing and its Date header, and the
# server's database and web front disagreeing a little.
MARGIN = timedelta(seconds=2)

# An HTTP date is about 29 characters; longer text is not parsed.
_MAX_CHARS = 64


def _when(text: str | None) -> datetime | None:
    if not text or len(text) > _MAX_CHARS:
        return None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def settled(stamp: str | None, served: str | None) -> str | None:
    """The stamp to remember for a resource listed in an answer dated `served` (None: none given).

    A stamp that cannot be read, or is not at least MARGIN older than the
    answer's Date (our own clock where the server sent none), is RACY.
    """
    if stamp is None:
        return None
    modified = _when(stamp)
    listed = _when(served) or datetime.now(timezone.utc)
    if modified is None or modified > listed - MARGIN:
        return RACY
    return stamp


def doubted(before: str | None, now: str | None) -> bool:
    """Whether a member listed under the ETag it had must be downloaded again and compared.

    `before` is the stamp remembered from the last listing, `now` this
    listing's (both as `settled` gives them; None where the server sent none).
    """
    if now is None:
        return before is not None  # the server stopped sending it: nothing vouches any more
    return before is None or before == RACY or now == RACY or before != now


def apart(earlier: str | None, later: str | None) -> bool:
    """Whether the answer dated `later` came at least MARGIN after the one dated `earlier`.

    The same rule for a collection's CS:getctag (ctags.Ctags.fields): a ctag
    first seen at `earlier` may be a time of one-second resolution, and a
    change written in the second before that listing may have left it
    unmoved; a state read MARGIN after the ctag first showed holds such a change.
    """
    first, then = _when(earlier), _when(later)
    return first is not None and then is not None and then - first >= MARGIN
