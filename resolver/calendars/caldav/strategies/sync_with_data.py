"""Sync with data: the initial sync-collection lists every member, with its data where the server sends it.

A collection's first read on a server that gives no usable DAV:sync-token
property (profiles.py). Where the listing comes without the data (DAViCal,
Xandikos: the profile then stops asking for it), a collection of at most one
multiget's worth is still read from the listing, its data with one
calendar-multiget of both kinds (the reader's download), so the other
kind's first read needs its sync report only; a larger one is None here and
the kind's calendar-query brings it (full_query.py) after the sync's token.
"""
from __future__ import annotations

from dataclasses import dataclass

from resolver.calendars.caldav import etags, sync
from resolver.calendars.caldav.caches import components_named
from resolver.calendars.caldav.members import Resource
from resolver.calendars.caldav.strategies.base import Context, Pass
from resolver.calendars.ical import COMPONENT


@dataclass(frozen=True)
class SyncWithData:  # stateless: one shared instance per process (profiles.py)
    name = "sync with data"

    def first(self, ctx: Context, *, data: bool) -> sync.Changes | None:
        """The initial sync's answer (hrefs in the listing's form), or None: no usable sync here."""
        found = sync.initial(ctx.transport, ctx.path, ctx.skipped, data=data)
        if found is not None:
            ctx.keeper.agree(ctx.transport, ctx.path, found, known={})
        return found

    def usable(self, found: sync.Changes) -> bool:
        """Whether the answer is the read: it came with the data, or is small enough for one multiget."""
        return bool(found.data) or not found.updates or len(found.updates) <= etags.MULTIGET_BATCH

    def read_from(self, ctx: Context, found: sync.Changes) -> Pass:
        read = Pass(token=found.token, members=dict(found.updates))
        read.unsorted.update(read.members)
        read.odd.extend(Resource(href, None, None) for href in found.odd)
        for href, text in found.data.items():
            # The other kind's resources are not parsed for this one.
            named = components_named(text)
            if named and COMPONENT[ctx.kind] not in named:
                read.members.pop(href, None)
                continue
            read.fetched[href] = text
        return read
