"""What each CalDAV server is learnt to do, named, and the reads that follow from it.

A reader starts knowing nothing of its server (`UNKNOWN`) and learns from
what the server answers (`ServerFacts`): whether the collection's
DAV:sync-token property is a usable URI (asked on a collection's first read),
and whether an initial sync-collection sends the calendar-data it was asked
for. The facts name a profile, the first in `PROFILES` that fits them, and
the profile picks the strategies (strategies/):

| profile  | seen on        | sync-token property | initial sync's data | first read             | later reads |
|----------|----------------|---------------------|---------------------|------------------------|-------------|
| radicale | Radicale, Cyrus| a URI               | sent                | token, then full query | sync then multiget |
| davical  | DAViCal        | a URI               | not sent (404)      | token, then full query | sync then multiget |
| sogo     | SOGo 5.8       | not a URI (a second)| sent                | sync with data         | sync then multiget |
| xandikos | Xandikos       | not a URI           | not sent            | sync, multiget or query| sync then multiget |
| unknown  | (nothing seen) | asked               | asked               | token, then full query | sync then multiget |

Without sync (`RESOLVER_CALDAV_SYNC = "off"`, or a server that answers no
usable sync) the first read is the full query and later reads are the
listing then multiget; a refused token reads the collection afresh, as a
first read. The facts cannot tell Radicale from Cyrus: both read alike.

A new server is a new profile: a `Profile` here, recognised by the facts its
answers give, placed in `PROFILES` before any it would otherwise fit. One
whose sync-collection is unreliable, say, is `Profile("flaky", ...,
syncs=False)`: its collections are read by the full query, then the listing
then multiget (tests/calendars/test_profiles.py shows one). A fact no answer
gives yet is a field of `ServerFacts`, set where the answer is read.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from resolver.calendars.caldav import sync
from resolver.calendars.caldav.caches import SyncState
from resolver.calendars.caldav.strategies import (
    Context, FullQuery, ListingThenMultiget, Pass, Strategy, SyncThenMultiget, SyncWithData,
)

logger = logging.getLogger("resolver.calendars")

SYNC_THEN_MULTIGET = SyncThenMultiget()
LISTING_THEN_MULTIGET = ListingThenMultiget()
SYNC_WITH_DATA = SyncWithData()
FULL_QUERY = FullQuery()


@dataclass
class ServerFacts:
    """What one reader has learnt of its server from its answers; None: not seen yet."""

    # Whether the collection's DAV:sync-token property came as a URI (sync.current_token).
    token_property: bool | None = None
    # False once an initial sync-collection listed members without the calendar-data asked for.
    sync_data: bool | None = None

    def profile(self, profiles: tuple[Profile, ...]) -> Profile:
        return next(p for p in profiles if p.fits(self))


@dataclass(frozen=True)
class Profile:
    """A server as its answers show it: the facts it is recognised by, and how its collections are read.

    `token_property` and `sync_data` are what it is recognised by (None: any
    answer, or none yet) and what a read assumes of it: the property is asked,
    and the data asked for in an initial sync, unless the profile says False.
    """

    name: str
    seen_on: str
    token_property: bool | None = None
    sync_data: bool | None = None
    # False: the server's WebDAV sync is not used (full query, then listing then multiget).
    syncs: bool = True

    def fits(self, facts: ServerFacts) -> bool:
        return ((self.token_property is None or self.token_property == facts.token_property)
                and (self.sync_data is None or self.sync_data == facts.sync_data))

    def later(self, state: SyncState) -> Strategy:
        """The strategy for a collection read before (`state`): from its token, or from its listing."""
        return SYNC_THEN_MULTIGET if state.token is not None and self.syncs else LISTING_THEN_MULTIGET


RADICALE = Profile("radicale", "Radicale, Cyrus", token_property=True)
DAVICAL = Profile("davical", "DAViCal", token_property=True, sync_data=False)
SOGO = Profile("sogo", "SOGo", token_property=False)
XANDIKOS = Profile("xandikos", "Xandikos", token_property=False, sync_data=False)
UNKNOWN = Profile("unknown", "a server not read yet")
# The first that fits a server's facts is its profile: the most specific first, UNKNOWN last.
PROFILES: tuple[Profile, ...] = (DAVICAL, RADICALE, XANDIKOS, SOGO, UNKNOWN)


def first_read(ctx: Context, facts: ServerFacts, profiles: tuple[Profile, ...],
               previous: SyncState | None) -> Pass:
    """Every member of the kind with its data, and the token to sync from next time.

    The token comes from the collection's DAV:sync-token property, then the
    kind's calendar-query brings the data (full query): on Radicale an
    initial sync costs the server half as much again as both (it sends both
    kinds and walks its history), and everywhere it would send the other
    kind's data too. A server whose property is missing or not a URI gets
    the initial sync (sync with data); one without sync the full query.
    """
    profile = facts.profile(profiles)
    syncs = profile.syncs and ctx.options.sync == "auto"
    token = None
    if syncs and profile.token_property is not False:
        token = sync.current_token(ctx.transport, ctx.path)
        profile = _learnt(facts, profiles, profile, token_property=token is not None)
    found = None
    # What the property's answer taught may name a profile that reads without sync.
    if token is None and syncs and profile.syncs:
        found = SYNC_WITH_DATA.first(ctx, data=profile.sync_data is not False)
        if found is not None and found.updates and not found.data:
            _learnt(facts, profiles, profile, sync_data=False)
    if found is not None and SYNC_WITH_DATA.usable(found):
        read = SYNC_WITH_DATA.read_from(ctx, found)
    else:
        read = FULL_QUERY.read_with(ctx, found.token if found is not None else token)
    for href, etag in (previous.members.items() if previous is not None else ()):
        if href not in read.members:
            ctx.keeper.bury(ctx.path, href, etag)
    return read


def _learnt(facts: ServerFacts, profiles: tuple[Profile, ...], was: Profile, **learnt: bool) -> Profile:
    for name, value in learnt.items():
        setattr(facts, name, value)
    now = facts.profile(profiles)
    if now is not was:
        logger.info("caldav server reads as %s (%s)", now.name, ", ".join(f"{k}={v}" for k, v in learnt.items()))
    return now
