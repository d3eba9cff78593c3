"""Full query: the kind's calendar-query, every member of the kind with its data, in one REPORT.

A collection's first read after the token came alone (the DAV:sync-token
property: Radicale, DAViCal, Cyrus), without sync, or after a sync listing
without the data that is too large for one multiget. After the token, so that
a change made between the two is listed by the next sync. Without a token,
each member's getlastmodified comes along (the listing strategy compares it).
The memo off, full.py reads each request this way with the window's time-range.
"""
from __future__ import annotations

from dataclasses import dataclass

from resolver.calendars.caldav import full
from resolver.calendars.caldav.members import Resource
from resolver.calendars.caldav.multistatus import query_body
from resolver.calendars.caldav.strategies.base import Context, Pass


@dataclass(frozen=True)
class FullQuery:  # stateless: one shared instance per process (profiles.py)
    name = "full query"

    def read_with(self, ctx: Context, token: str | None) -> Pass:
        read = Pass(token=token)
        body = query_body(ctx.kind, ctx.window, time_range=False, stamp=token is None)
        for resource in full.read(ctx.transport, ctx.path, body, ctx.skipped):
            if not resource.etag:
                read.odd.append(Resource(resource.href, None, None))
                continue
            read.members[resource.href] = resource.etag
            read.fetched[resource.href] = resource.data
            if resource.stamp is not None:
                read.stamps[resource.href] = resource.stamp
        return read
