"""One reader per CalDAV account: its client, its caches, its remembered home.

A `CalDAVReader` owns everything a process remembers about one account:
the HTTP client (one session per thread), the calendar home, the parsed
facts and built items per (href, ETag), the sync state per collection and
kind, and the collections whose server failed on its own time-range filter.
The process keeps one per account in its `ReaderRegistry` (registry.py).

Reading (every request is answered from a read of the server made after it
arrived, but only what changed is downloaded and parsed, with the memo on):
how a collection is read is one strategy each (strategies/), picked by the
server's profile (profiles.py), which is learnt from what the server answers:

- the first request for a collection and kind asks for its DAV:sync-token
  property, then sends the kind's calendar-query with the data (full query);
  a server whose property is missing or not a URI gets an initial
  sync-collection instead (sync with data), and one without sync the query;
- later requests send one sync-collection from the token (sync then
  multiget); resources whose (href, ETag) is not in the memo come with one
  calendar-multiget (etags.py); before it, an unchanged, settled CS:getctag
  that has proved a witness answers from the memo with no sync (ctags.py);
- a token the server refuses, or any other unexpected sync answer, falls back
  to a fresh first read within the same request; a server without sync gets
  its listing plus a multiget for the new ETags (listing then multiget);
- with the memo off, every request is a full read (full.py).

A sync from a token lists the changes of both kinds, and the reader downloads
each changed member to learn its kind: where the other kind's state was read
at the same token, it takes the same changes (`_carry`), and an unchanged
ctag that witnesses both kinds confirms both. The same request's read of the
other kind (`fetch`'s `fresh_since`, the first read's `read_at`) is then
answered from that state with no round trip; anywhere else it reads as above.

Concurrent fetches of the same collections share one read (flight.py): the
server's side runs once on a read thread (`_shared_read`), and each request
builds its own window's items from it in its own thread.

Liveness is decided from the facts for this request's window every time.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Mapping, Sequence

from resolver.domain.ports import FetchResult, SkippedResource
from resolver.calendars.caldav import discovery, etags, full, hrefs, sync
from resolver.calendars.caldav.account import CalDAVAccount
from resolver.calendars.caldav.caches import Budget, FilterMemory, ParseMemo, SyncState, SyncStates, Tombstones
from resolver.calendars.caldav.building import Building, holds
from resolver.calendars.caldav.ctags import Ctags
from resolver.calendars.caldav.flight import Flights, ReadPool
from resolver.calendars.caldav.http import DAVClient, Transport
from resolver.calendars.caldav.members import Resource
from resolver.calendars.caldav.options import ReadOptions
from resolver.calendars.caldav import profiles
from resolver.calendars.caldav.profiles import Profile, ServerFacts, first_read
from resolver.calendars.caldav.strategies import Context, Pass, multiget
from resolver.calendars.ical import Limits, Window
from resolver.domain.errors import CollectionNotFound
from resolver.domain.items import Collection, Item, Kind
from resolver.domain.matching import MatchingMemo
from resolver.lru import LRU

logger = logging.getLogger("resolver.calendars")

# Sync-report hrefs per reader whose listing form is remembered (hrefs.agree).
MAX_ALIASES = 10_000


@dataclass(frozen=True)
class _Read:
    """The server's side of one fetch, shared by the requests that waited for it (flight.py)."""

    read_at: datetime
    by_id: Mapping[str, Collection]
    wanted: tuple[str, ...]
    resources: Mapping[str, tuple[Resource, ...]]
    skipped: tuple[SkippedResource, ...]
    trips: int


class CalDAVReader:
    """Reads one account's calendars; holds what it remembers of them (module docstring)."""

    def __init__(self, account: CalDAVAccount, *, facts_budget: Budget, built_budget: Budget,
                 pool: ReadPool | None = None) -> None:
        self.account = account
        self.client = DAVClient(account)
        self.facts = ParseMemo(facts_budget)
        self.built = ParseMemo(built_budget)
        # Facts parsed once per (href, ETag), items built once per window (building.py).
        self.building = Building(self.facts, self.built)
        self.states = SyncStates()
        self.filter_memory = FilterMemory()
        pool = pool if pool is not None else ReadPool()
        # Title indexes and title vectors of this account's items (matching.MatchingMemo).
        self.matching = MatchingMemo()
        self.tombstones = Tombstones()
        # What this server's answers have shown (profiles.py): they name its profile,
        # the first of `profiles` they fit, which picks how collections are read.
        self.server = ServerFacts()
        self.profiles = profiles.PROFILES
        # (collection path, href as a sync report spelled it) -> the listing's form (hrefs.agree).
        self.aliases: LRU[tuple[str, str], str] = LRU(MAX_ALIASES)
        # What this server's CS:getctag is worth, learnt as it is read (ctags.py).
        self.ctags = Ctags(self.client.origin.base)
        # Concurrent fetches of the same collections share one read (flight.py).
        self.flights = Flights(pool)
        self._home: str | None = None
        # The calendars the last incremental read listed, and its read_at (`_remembered`).
        self._listing: tuple[datetime, Mapping[str, Collection]] | None = None
        self._limits: Limits | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<CalDAVReader {self.account.label or self.account.username or '-'}@{self.client.origin.base}>"

    def transport(self, options: ReadOptions) -> Transport:
        return Transport(self.client, timeout=options.timeout, max_bytes=options.max_response_bytes)

    def forget(self) -> None:
        """Everything this reader remembers, and its connections (what a new process starts with)."""
        self.facts.clear()
        self.built.clear()
        self.states.clear()
        self.filter_memory.clear()
        self.tombstones.clear()
        self.aliases.clear()
        self.ctags.forget()
        self._home = None
        self._listing = None
        self.client.close()

    # -- discovery -----------------------------------------------------------

    def collections(self, transport: Transport) -> list[Collection]:
        """The account's calendars, read live; only where the home is, is remembered.

        A remembered home that is gone (404) or empty is forgotten and
        discovery starts over at once; any other failure forgets it too, for
        the next request.
        """
        home = self._home
        if home is not None:
            try:
                found = discovery.list_calendars(transport, home)
            except Exception:
                self._home = None
                raise
            if found:
                return found
            self._home = None
        home, listed = discovery.find_home(transport, discovery.start_path(self.account.url))
        found = (listed if listed is not None else discovery.list_calendars(transport, home)) or []
        if found:
            self._home = home
        return found

    # -- reading -------------------------------------------------------------

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None, now: datetime,
              tz: tzinfo | None, options: ReadOptions, fresh_since: datetime | None = None) -> FetchResult:
        """The live items of `kind`, read after this call began; concurrent calls share the read (flight.py).

        With the memo on, the server is read once for every request that
        arrives while a read of the same collections is in flight or queued
        (`_shared_read`); each request then builds its own window's items from
        that read, in its own thread. With the memo off, each request reads
        for itself (its window is in the server's filter).

        `fresh_since`: a read made at or after this instant is fresh enough (the same request's read of the
        other kind). With the memo on, states a read of either kind confirmed since then answer with no round
        trip (`_remembered`); otherwise the server is read as without it.
        """
        incremental = options.incremental and self.facts.enabled
        if not incremental:
            return self._fetch_full(kind=kind, collection_ids=collection_ids, now=now, tz=tz, options=options)
        self._limits_are(options.limits)
        wanted_ids = tuple(dict.fromkeys(collection_ids)) if collection_ids else None
        def read() -> _Read:
            return self._shared_read(kind=kind, collection_ids=wanted_ids, options=options)

        shared = self._remembered(kind=kind, collection_ids=wanted_ids, since=fresh_since) \
            if fresh_since is not None else None
        if shared is None:
            shared = self.flights.join((kind.value, wanted_ids, options), read, where=repr(self)) \
                if options.shared_reads else read()
        window = Window(start=now, end=now + timedelta(days=options.horizon_days))
        items: list[Item] = []
        closed: list[Item] = []
        skipped: list[SkippedResource] = list(shared.skipped)
        for cid in shared.wanted:
            got, bad = self.building.items(list(shared.resources[cid]), shared.by_id[cid], kind=kind,
                                           window=window, tz=tz, limits=options.limits, closed=closed)
            items.extend(got)
            skipped.extend(bad)
        return FetchResult(
            items=tuple(items),
            closed=tuple(closed),
            skipped=tuple(skipped),
            # The round trips of the read this answer shares (counted, not assumed).
            requests=shared.trips,
            collections_searched=shared.wanted,
            read_at=shared.read_at,
            server_filter_skipped=(),
            memo=self.matching,
        )

    def _shared_read(self, *, kind: Kind, collection_ids: tuple[str, ...] | None,
                     options: ReadOptions) -> _Read:
        """The server's side of a fetch, on a read thread: discovery and each collection's incremental read."""
        read_at = datetime.now(timezone.utc)
        transport = self.transport(options)
        by_id = {c.collection_id: c for c in self.collections(transport)}
        self._listing = (read_at, by_id)
        wanted = collection_ids or tuple(sorted(by_id))
        unknown = [cid for cid in wanted if cid not in by_id]
        if unknown:
            raise CollectionNotFound("Unknown collection ID.", details={"collection_ids": unknown})
        # Only the kind's filter uses it, without a time range: the members are window-free.
        window = Window(start=read_at, end=read_at + timedelta(days=options.horizon_days))
        skipped: list[SkippedResource] = []
        resources = {}
        for cid in wanted:
            resources[cid] = tuple(self._read_incremental(transport, by_id[cid].url_path, kind=kind, window=window,
                                                          options=options, skipped=skipped, read_at=read_at))
        return _Read(read_at=read_at, by_id=by_id, wanted=tuple(wanted), resources=resources,
                     skipped=tuple(skipped), trips=transport.trips)

    def _fetch_full(self, *, kind: Kind, collection_ids: Sequence[str] | None, now: datetime,
                    tz: tzinfo | None, options: ReadOptions) -> FetchResult:
        """The memo off: every request a full read of its own (full.py)."""
        read_at = datetime.now(timezone.utc)
        transport = self.transport(options)
        by_id = {c.collection_id: c for c in self.collections(transport)}
        wanted = list(dict.fromkeys(collection_ids)) if collection_ids else sorted(by_id)
        unknown = [cid for cid in wanted if cid not in by_id]
        if unknown:
            raise CollectionNotFound("Unknown collection ID.", details={"collection_ids": unknown})
        window = Window(start=now, end=now + timedelta(days=options.horizon_days))
        items: list[Item] = []
        closed: list[Item] = []
        skipped: list[SkippedResource] = []
        filter_skipped: list[str] = []
        for cid in wanted:
            collection = by_id[cid]
            resources, without_filter = full.read_full(
                transport, collection.url_path, kind=kind, window=window, time_range=options.event_time_range,
                memory=self.filter_memory, retry_seconds=options.filter_retry_seconds, skipped=skipped)
            if without_filter:
                filter_skipped.append(cid)
            got, bad = self.building.items(resources, collection, kind=kind, window=window, tz=tz,
                                           limits=options.limits, closed=closed)
            items.extend(got)
            skipped.extend(bad)
        return FetchResult(
            items=tuple(items),
            closed=tuple(closed),
            skipped=tuple(skipped),
            # Counted, not assumed: discovery takes one to three round trips.
            requests=transport.trips,
            collections_searched=tuple(wanted),
            read_at=read_at,
            server_filter_skipped=tuple(filter_skipped),
            memo=self.matching,
        )

    def _limits_are(self, limits: Limits) -> None:
        """Facts depend on the bounds they were read under: new bounds, nothing remembered is kept."""
        with self._lock:
            if self._limits is not None and self._limits != limits:
                self.facts.clear()
                self.built.clear()
                self.states.clear()
                self.tombstones.clear()
            self._limits = limits

    def _read_incremental(self, transport: Transport, path: str, *, kind: Kind, window: Window,
                          options: ReadOptions, skipped: list[SkippedResource],
                          read_at: datetime | None = None) -> list[Resource]:
        """The collection's resources of `kind` as the server holds them now; data only where new or doubted.

        An unchanged ctag answers from the memo (ctags.py); else the server's
        profile picks the strategy (profiles.py): from the remembered state, or
        a first read when there is none or the server refused its token.
        """
        key = (path, kind.value)
        state = self.states.get(key)
        ctx = Context(transport=transport, path=path, kind=kind, window=window, options=options, skipped=skipped,
                      keeper=self)
        read, ctag, served = self.ctags.unchanged(transport, path, state, options)
        by_ctag = read is not None
        if read is None and state is not None:
            read = self.profile.later(state).read(ctx, state)
        if read is None:
            # First read of this collection and kind, or the server refused the token.
            read = first_read(ctx, self.server, self.profiles, state)
            read.moved = False
        for href in read.members:
            if self.tombstones.raised(path, href):
                read.recheck.add(href)  # back after a deletion: its ETag may be an old one reused
        multiget.download(ctx, read, self.facts)
        resources = multiget.of_kind(ctx, read, self.building)
        if state is not None and any(r.href not in state.members for r in resources):
            read.changed("update")  # a new member of the kind (a listing names both kinds: only now known)
        ctag = self.ctags.after(transport, path, state, ctag, read)
        if read.keep:
            kept = {r.href: read.stamps[r.href] for r in resources if r.href in read.stamps}
            self.states.put(key, SyncState.of(read.token, {r.href: r.etag for r in resources if r.etag}, kept,
                                              moved=read.moved, confirmed=read_at,
                                              **self.ctags.fields(state, ctag, served, read)))
            if read_at is not None:
                self._carry(ctx, read, by_ctag=by_ctag, ctag=ctag, served=served, read_at=read_at)
        else:
            self.states.drop(key)
        return resources + read.odd

    def _carry(self, ctx: Context, read: Pass, *, by_ctag: bool, ctag: str | None, served: str | None,
               read_at: datetime) -> None:
        """What this read of one kind shows of the other kind's members in the same collection (module docstring).

        An unchanged ctag that witnesses the other kind's state too confirms it. A sync from the very token
        the other kind's state was read at lists that kind's changes as well, and every member it lists as
        changed was downloaded (`multiget.download`): the state takes them, each by the kind its data holds.
        Anything else leaves that state as it was (a resource the server would have to sort, a sync from
        another token, a first read), and the other kind's next read asks the server.
        """
        key = (ctx.path, ctx.kind.other.value)
        other = self.states.get(key)
        if other is None:
            return
        if by_ctag:
            if ctag is not None and other.ctag == ctag and self.ctags.witness(other):
                self.states.put(key, replace(other, confirmed=read_at))
            return
        if read.since is None or other.token is None or other.token != read.since:
            return
        members = dict(other.members)
        for href in read.deleted:
            members.pop(href, None)
        for href in read.unsorted:
            etag = read.members.get(href)
            if etag is None:
                members.pop(href, None)  # listed as changed, then not found
                continue
            facts = multiget.facts_of(ctx, read, self.building, href, etag)
            if multiget.unsortable(facts):
                return  # only the server's filter would tell its kind (multiget.of_kind)
            if holds(facts, ctx.kind.other):
                members[href] = etag
            else:
                members.pop(href, None)
        self.states.put(key, SyncState.of(read.token, members, moved=read.moved, confirmed=read_at,
                                          **self.ctags.fields(other, ctag, served, read)))

    def _remembered(self, *, kind: Kind, collection_ids: tuple[str, ...] | None, since: datetime) -> _Read | None:
        """What a read of the server would give, from states a read of either kind confirmed at or after `since`
        (no round trip); None when the last listing, a wanted collection's state or a member's facts are older
        or not remembered."""
        listing = self._listing
        if listing is None or listing[0] < since:
            return None
        listed_at, by_id = listing
        wanted = collection_ids or tuple(sorted(by_id))
        if any(cid not in by_id for cid in wanted):
            return None  # the server's listing says so (CollectionNotFound), in the read
        resources: dict[str, tuple[Resource, ...]] = {}
        confirmed = [listed_at]
        for cid in wanted:
            state = self.states.get((by_id[cid].url_path, kind.value))
            if state is None or state.confirmed is None or state.confirmed < since:
                return None
            found = []
            for href, etag in state.members.items():
                parsed = self.facts.get((href, etag))
                if parsed is None:
                    return None
                found.append(Resource(href, etag, None, parsed.facts))
            resources[cid] = tuple(found)
            confirmed.append(state.confirmed)
        return _Read(read_at=min(confirmed), by_id=by_id, wanted=tuple(wanted), resources=resources, skipped=(),
                     trips=0)

    @property
    def profile(self) -> Profile:
        """What this server is taken for, from what it has answered (profiles.py)."""
        return self.server.profile(self.profiles)

    def agree(self, transport: Transport, path: str, changes: sync.Changes, *, known: Mapping[str, str]) -> None:
        """A sync report's hrefs in the collection's own form (hrefs.py), renamed in place.

        An href already met is renamed from memory; a suspect one new to the
        reader costs one Depth 1 PROPFIND of the collection, once. A deleted
        href is matched against the members the reader knows.
        """
        listed = list(changes.updates) + changes.odd
        fresh = [h for h in listed if hrefs.suspect(h) and (path, h) not in self.aliases]
        if fresh:
            found = hrefs.agree(fresh, list(etags.members(transport, path)))
            for href in fresh:
                self.aliases.put((path, href), found.get(href, href))
        doubted = [h for h in changes.deleted if hrefs.suspect(h)]
        # Most reports delete nothing suspect: no map of every known member is built for them.
        gone = hrefs.agree(doubted, list(known)) if doubted else {}

        def form(href: str) -> str:
            return gone.get(href) or self.aliases.get((path, href)) or href

        changes.updates = {form(h): etag for h, etag in changes.updates.items()}
        changes.data = {form(h): text for h, text in changes.data.items()}
        changes.deleted = [form(h) for h in changes.deleted]
        changes.odd = [form(h) for h in changes.odd]

    def discard(self, href: str, etag: str | None) -> None:
        self.building.discard(href, etag)

    def bury(self, path: str, href: str, etag: str | None) -> None:
        """A member the server no longer holds: forgotten, and marked should its href come back."""
        self.discard(href, etag)
        self.tombstones.bury(path, href, etag)
