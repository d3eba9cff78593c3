"""What follows every strategy: one calendar-multiget for what the memo lacks, then the members of the kind.

A strategy lists the members (href -> ETag) and brings what data its answer
carried; `download` fetches the rest that the memo does not hold, or holds
but doubts, with one calendar-multiget (etags.py, in batches); `of_kind`
gives the members holding the request's kind, each with its facts.
"""
from __future__ import annotations

from typing import Any

from resolver.calendars.caldav import etags
from resolver.calendars.caldav.building import Building, check_deadline, holds
from resolver.calendars.caldav.caches import ParseMemo, Unreadable
from resolver.calendars.caldav.members import Resource
from resolver.calendars.caldav.strategies.base import Context, Pass


def download(ctx: Context, read: Pass, facts: ParseMemo) -> None:
    """One calendar-multiget for what the memo does not hold, or holds but is doubted."""
    wanted = []
    for href, etag in read.members.items():
        if href in read.fetched:
            continue
        known = None if href in read.recheck else facts.get((href, etag))
        if known is None:
            wanted.append(href)
        else:
            read.known[href] = known
    for href, etag, data, status in etags.multiget(ctx.transport, ctx.path, wanted, ctx.skipped):
        if status == 404:
            ctx.keeper.bury(ctx.path, href, read.members.pop(href, None))
            # Listed as there, yet not found: the next request reads the collection afresh.
            read.keep = read.token is None
            continue
        if etag and etag != read.members.get(href):
            ctx.keeper.discard(href, read.members.get(href))
            read.members[href] = etag
        read.fetched[href] = data


def facts_of(ctx: Context, read: Pass, building: Building, href: str, etag: str) -> Any:
    """A listed member's facts: the memo's entry the download found, else parsed from what it downloaded."""
    known = read.known.get(href) if href not in read.fetched else None
    return known.facts if known is not None else building.facts_of(href, etag, read.fetched.get(href),
                                                                    ctx.options.limits)


def unsortable(facts: Any) -> bool:
    """No data to tell the member's kind by, or none we can read: only the server's filter says which it holds."""
    return isinstance(facts, Unreadable) and not facts.components


def of_kind(ctx: Context, read: Pass, building: Building) -> list[Resource]:
    """The members holding the kind, with their facts."""
    resources = []
    doubtful: list[Resource] = []
    for n, (href, etag) in enumerate(read.members.items()):
        if n % 64 == 0:
            check_deadline(ctx.path)
        facts = facts_of(ctx, read, building, href, etag)
        resource = Resource(href, etag, read.fetched.get(href), facts)
        if href in read.unsorted:
            # Listed without the server filtering on the kind: it may hold the other kind only.
            if unsortable(facts):
                doubtful.append(resource)  # no data, or none we can read: the server decides
                continue
            if not holds(facts, ctx.kind):
                continue
        resources.append(resource)
    if doubtful:
        # Rare (a damaged or empty resource): one etag listing for the kind says which are ours.
        listed = etags.listing(ctx.transport, ctx.path, kind=ctx.kind, window=ctx.window, skipped=[])
        resources.extend(r for r in doubtful if r.href in listed)
    return resources
