"""Listing then multiget: no WebDAV sync here (or sync off): list ETags and modification times, fetch what is new.

The listing is the collection's Depth 1 PROPFIND, both kinds (the reader
sorts them): it carries getlastmodified on every server tested. A member
under the same ETag but written since (or whose time was not known, or too
near the listing to tell: stamps.py) is downloaded again and compared: SOGo
hands an ETag out again after a DELETE + PUT.
"""
from __future__ import annotations

from dataclasses import dataclass

from resolver.calendars.caldav import etags, stamps
from resolver.calendars.caldav.caches import SyncState
from resolver.calendars.caldav.strategies.base import Context, Pass


@dataclass(frozen=True)
class ListingThenMultiget:  # stateless: one shared instance per process (profiles.py)
    name = "listing then multiget"

    def read(self, ctx: Context, state: SyncState) -> Pass:
        read = Pass()
        read.members = etags.members(ctx.transport, ctx.path, ctx.skipped, stamps=read.stamps)
        read.unsorted.update(read.members)
        for href, etag in state.members.items():
            now = read.members.get(href)
            if now is None:
                ctx.keeper.bury(ctx.path, href, etag)
                read.changed("delete")
            elif now != etag:
                ctx.keeper.discard(href, etag)
                read.changed("update")
            elif stamps.doubted(state.stamps.get(href), read.stamps.get(href)):
                read.recheck.add(href)
        return read
