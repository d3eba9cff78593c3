"""Sync then multiget: one sync-collection from the remembered token; what is new comes with one multiget.

Every href the report lists as changed is downloaded again (the reader's
multiget), even under an (href, ETag) the memo holds: SOGo gives a resource
deleted and put again the ETag its first version had. A refused token, or
any other unexpected answer, is None: the reader reads the collection afresh.
"""
from __future__ import annotations

from dataclasses import dataclass

from resolver.calendars.caldav import sync
from resolver.calendars.caldav.caches import SyncState
from resolver.calendars.caldav.strategies.base import Context, Pass


@dataclass(frozen=True)
class SyncThenMultiget:  # stateless: one shared instance per process (profiles.py)
    name = "sync then multiget"

    def read(self, ctx: Context, state: SyncState) -> Pass | None:
        assert state.token is not None
        delta = sync.changes(ctx.transport, ctx.path, state.token, ctx.skipped)
        if delta is None:
            return None
        ctx.keeper.agree(ctx.transport, ctx.path, delta, known=state.members)
        return over(ctx, state, delta)


def over(ctx: Context, state: SyncState, delta: sync.Changes) -> Pass:
    """A sync report's changes over the remembered members."""
    read = Pass(members=dict(state.members), token=delta.token, since=state.token, deleted=list(delta.deleted))
    for href in delta.deleted:
        gone = read.members.pop(href, None)
        if gone is not None:
            read.changed("delete")
        ctx.keeper.bury(ctx.path, href, gone)
    for href, etag in delta.updates.items():
        old = read.members.get(href)
        # SOGo lists again what changed in the token's second: only a new href or ETag is a change.
        if old != etag:
            read.changed("update")
        if old is not None and old != etag:
            ctx.keeper.discard(href, old)
        read.members[href] = etag
        read.unsorted.add(href)
        read.recheck.add(href)
    return read
