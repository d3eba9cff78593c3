"""One reader per CalDAV account: its client, its caches, its remembered home.

A `CalDAVReader` owns everything a process remembers about one account:
the HTTP client (one session per thread), the calendar home, the parsed
facts and built items per (href, ETag), the sync state per collection and
kind, and the collections whose server failed on its own time-range filter.
The process keeps one per account in its `ReaderRegistry` (registry.py).

Reading (every request is answered from a read of the server made after it
arrived, but only what changed is downloaded and parsed, with the memo on):

- the first request for a collection and kind asks for its DAV:sync-token
  property, then sends the kind's calendar-query with the data (sync.py,
  `_from_first`); a server whose property is missing or not a URI gets an
  initial sync-collection instead, and one without sync a calendar-query;
- later requests send one sync-collection from the token; resources whose
  (href, ETag) is not in the memo come with one calendar-multiget (etags.py);
  before it, the collection's CS:getctag: unchanged and settled (2 s after
  it first showed, by the answers' Date), on a server whose ctag has been
  seen moving with a PUT and a DELETE and never stayed while a change was
  read, it answers from the memo with no sync (`_read_incremental`);
- a token the server refuses, or any other unexpected sync answer, falls back
  to a fresh initial read within the same request; a server without sync gets
  an etag-only calendar-query plus a multiget for the new ETags;
- with the memo off, every request is a full read (full.py).

Concurrent fetches of the same collections share one read (flight.py): the
server's side runs once on a read thread (`_shared_read`), and each request
builds its own window's items from it in its own thread.

Liveness is decided from the facts for this request's window every time.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Mapping, Sequence

from resolver import deadline
from resolver.domain.ports import FetchResult, SkippedResource
from resolver.calendars.caldav import discovery, etags, full, hrefs, stamps, sync
from resolver.calendars.caldav.account import CalDAVAccount
from resolver.calendars.caldav.caches import (
    Budget, FilterMemory, ParseMemo, Parsed, SyncState, SyncStates, Tombstones, Unreadable,
    components_named, digest_of,
)
from resolver.calendars.caldav.flight import Flights, ReadPool
from resolver.calendars.caldav.http import DAVClient, Transport, unavailable
from resolver.calendars.caldav.members import Resource
from resolver.calendars.caldav.multistatus import GETCTAG, answered, propfind_body, query_body
from resolver.calendars.ical import (
    COMPONENT, Limits, UnparseableResource, Window, items_until, live_items, read_resource,
)
from resolver.domain.errors import CalendarUnavailable, CollectionNotFound
from resolver.domain.items import Collection, Item, Kind
from resolver.domain.matching import MatchingMemo
from resolver.lru import LRU

logger = logging.getLogger("resolver.calendars")

SYNC_MODES = ("auto", "off")
# Sync-report hrefs per reader whose listing form is remembered (hrefs.agree).
MAX_ALIASES = 10_000
# A ctag is a short tag (a number, a hash, a URI); longer text is not one.
MAX_CTAG_CHARS = 1024
# Seconds between two asks of a ctag that is not yet a witness (CalDAVReader._asks_ctag).
CTAG_ASK_SECONDS = 10.0
# The kinds of change a server's ctag must have been seen moving with before it is a witness.
CTAG_EVIDENCE = frozenset({"update", "delete"})


@dataclass(frozen=True)
class ReadOptions:
    """How one fetch reads: from the settings (calendar.CalDAVCalendar), not the reader's to keep."""

    timeout: float
    max_bytes: int
    horizon_days: int = 90
    event_time_range: bool = True
    sync: str = "auto"
    incremental: bool = True
    # Concurrent fetches share one read (flight.py); False: each reads for itself.
    shared: bool = True
    # An unchanged, settled CS:getctag may stand for the collection (_read_incremental).
    ctag: bool = True
    limits: Limits = Limits()
    filter_retry_seconds: float = 3600.0


@dataclass
class _Pass:
    """One collection's incremental read while it is made (CalDAVReader._read_incremental)."""

    members: dict[str, str] = field(default_factory=dict)  # href -> ETag
    token: str | None = None
    fetched: dict[str, str | None] = field(default_factory=dict)  # href -> text downloaded now
    # hrefs whose kind the server did not choose (a sync lists both kinds).
    unsorted: set[str] = field(default_factory=set)
    # hrefs whose memo entry is not believed: downloaded and compared (_facts).
    recheck: set[str] = field(default_factory=set)
    stamps: dict[str, str] = field(default_factory=dict)  # href -> getlastmodified (no sync)
    # href -> the memo entry _download found for a member it did not download
    # (its ETag unchanged since): _sorted reads it from here, not the memo again.
    known: dict[str, Parsed] = field(default_factory=dict)
    # Answers without a usable status or ETag: skipped, never remembered.
    odd: list[Resource] = field(default_factory=list)
    # False when the sync state may have lost a member (a listed href the
    # server did not find): not kept, the next request reads afresh.
    keep: bool = True
    # The server showed a change since the last state (a new, changed or deleted member),
    # and of which kinds: "update" (a new or changed member), "delete".
    moved: bool = False
    changes: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Read:
    """The server's side of one fetch, shared by the requests that waited for it (flight.py)."""

    read_at: datetime
    by_id: Mapping[str, Collection]
    wanted: tuple[str, ...]
    resources: Mapping[str, tuple[Resource, ...]]
    skipped: tuple[SkippedResource, ...]
    trips: int


def _check_deadline(where: str) -> None:
    if deadline.expired():
        logger.warning("caldav read of %s: resolution deadline passed while reading", where)
        raise unavailable("timeout")


class CalDAVReader:
    """Reads one account's calendars; holds what it remembers of them (module docstring)."""

    def __init__(self, account: CalDAVAccount, *, facts_budget: Budget, built_budget: Budget,
                 pool: ReadPool | None = None) -> None:
        self.account = account
        self.client = DAVClient(account)
        self.facts = ParseMemo(facts_budget)
        # The items built from a memoised resource, by the same key: a mapping
        # from (collection path, kind, zone, horizon) to (window start, valid
        # until, items), so an unchanged task or single event is not built
        # again while the window slides (ical.items_until).
        self.built = ParseMemo(built_budget)
        self.states = SyncStates()
        self.filter_memory = FilterMemory()
        pool = pool if pool is not None else ReadPool()
        # Title indexes and title vectors of this account's items (matching.MatchingMemo).
        self.matching = MatchingMemo()
        self.tombstones = Tombstones()
        # False once this server's initial sync-collection came without calendar-data
        # (DAViCal, Xandikos): later ones do not ask for it (_from_first).
        self.sync_sends_data = True
        # False once this server gave no usable DAV:sync-token property (none, or
        # not a URI: SOGo, Xandikos): its first reads take the initial sync (_from_first).
        self.token_property = True
        # (collection path, href as a sync report spelled it) -> the listing's form (hrefs.agree).
        self.aliases: LRU[tuple[str, str], str] = LRU(MAX_ALIASES)
        # Whether an unchanged CS:getctag stands for an unchanged collection on
        # this server: until a change is read under a ctag that did not move.
        self.trusts_ctags = True
        # False once this server answered no getctag: not asked again.
        self.ctag_property = True
        # Until the ctag is a witness, it is asked at most this often per collection and kind.
        self.ctag_ask_seconds = CTAG_ASK_SECONDS
        # The kinds of change ("update", "delete") read under a ctag that moved:
        # until both, nothing says this server's ctag moves with every change
        # (SOGo 5.8's did not move on PUTs in docs/servers.md's probe; one that never moves is never a witness).
        self.ctag_moved: set[str] = set()
        # Concurrent fetches of the same collections share one read (flight.py).
        self.flights = Flights(pool)
        self._home: str | None = None
        self._limits: Limits | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<CalDAVReader {self.account.label or self.account.username or '-'}@{self.client.origin.base}>"

    def transport(self, options: ReadOptions) -> Transport:
        return Transport(self.client, timeout=options.timeout, max_bytes=options.max_bytes)

    def forget(self) -> None:
        """Everything this reader remembers, and its connections (what a new process starts with)."""
        self.facts.clear()
        self.built.clear()
        self.states.clear()
        self.filter_memory.clear()
        self.tombstones.clear()
        self.aliases.clear()
        self.trusts_ctags, self.ctag_property, self.ctag_moved = True, True, set()
        self._home = None
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
              tz: tzinfo | None, options: ReadOptions) -> FetchResult:
        """The live items of `kind`, read after this call began; concurrent calls share the read (flight.py).

        With the memo on, the server is read once for every request that
        arrives while a read of the same collections is in flight or queued
        (`_shared_read`); each request then builds its own window's items from
        that read, in its own thread. With the memo off, each request reads
        for itself (its window is in the server's filter).
        """
        incremental = options.incremental and self.facts.enabled
        if not incremental:
            return self._fetch_full(kind=kind, collection_ids=collection_ids, now=now, tz=tz, options=options)
        self._limits_are(options.limits)
        wanted_ids = tuple(dict.fromkeys(collection_ids)) if collection_ids else None
        def read() -> _Read:
            return self._shared_read(kind=kind, collection_ids=wanted_ids, options=options)

        shared = self.flights.join((kind.value, wanted_ids, options), read, where=repr(self)) \
            if options.shared else read()
        window = Window(start=now, end=now + timedelta(days=options.horizon_days))
        items: list[Item] = []
        skipped: list[SkippedResource] = list(shared.skipped)
        for cid in shared.wanted:
            got, bad = self._items(list(shared.resources[cid]), shared.by_id[cid], kind=kind, window=window, tz=tz,
                                   limits=options.limits)
            items.extend(got)
            skipped.extend(bad)
        return FetchResult(
            items=tuple(items),
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
                                                          options=options, skipped=skipped))
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
        skipped: list[SkippedResource] = []
        filter_skipped: list[str] = []
        for cid in wanted:
            collection = by_id[cid]
            resources, without_filter = full.read_full(
                transport, collection.url_path, kind=kind, window=window, time_range=options.event_time_range,
                memory=self.filter_memory, retry_seconds=options.filter_retry_seconds, skipped=skipped)
            if without_filter:
                filter_skipped.append(cid)
            got, bad = self._items(resources, collection, kind=kind, window=window, tz=tz, limits=options.limits)
            items.extend(got)
            skipped.extend(bad)
        return FetchResult(
            items=tuple(items),
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

    def _facts(self, href: str, etag: str, text: str | None, limits: Limits) -> Any:
        """ResourceFacts or Unreadable for one resource, parsed at most once per ETag and content.

        Text sent again under a memoised ETag is compared with what the memo
        was read from: other content replaces the entry (and its built items),
        so an ETag never vouches for content on its own.
        """
        key = (href, etag)
        known = self.facts.get(key)
        if text is None:
            # Not downloaded: the memo, or nothing (the server may send the data next time).
            return known.facts if known is not None else Unreadable("no calendar data", None)
        digest = digest_of(text)
        if known is not None and known.digest == digest:
            return known.facts
        if known is not None:
            logger.info("resource %s: new content under ETag %s: read again", href, etag)
            self.built.discard(key)
        try:
            facts: Any = read_resource(text, limits=limits)
        except UnparseableResource as err:
            facts = Unreadable(err.reason, components_named(text))
        self.facts.put(key, Parsed(digest, facts))
        return facts

    def _read_incremental(self, transport: Transport, path: str, *, kind: Kind, window: Window,
                          options: ReadOptions, skipped: list[SkippedResource]) -> list[Resource]:
        """The collection's resources of `kind` as the server holds them now; data only where new or doubted."""
        key = (path, kind.value)
        state = self.states.get(key)
        read = None
        ctag = served = None
        if state is not None and self._asks_ctag(state, options):
            ctag, served = self._ctag(transport, path)
            if ctag is not None and ctag == state.ctag and self._witness(state):
                # Unchanged since these members were read, and not racy: the memo answers.
                read = _Pass(members=dict(state.members), token=state.token, stamps=dict(state.stamps))
        if read is not None:
            pass
        elif state is not None and state.token is not None:
            delta = sync.changes(transport, path, state.token, skipped)
            if delta is not None:
                self._agree(transport, path, delta, known=state.members)
                read = self._from_delta(path, state, delta)
        elif state is not None:
            read = self._from_listing(transport, path, state, kind=kind, window=window, skipped=skipped)
        if read is None:
            # First read of this collection and kind, or the server refused the token.
            read = self._from_first(transport, path, state, kind=kind, window=window, options=options,
                                    skipped=skipped)
            read.moved = False
        for href in read.members:
            if self.tombstones.raised(path, href):
                read.recheck.add(href)  # back after a deletion: its ETag may be an old one reused
        self._download(transport, path, read, skipped)
        resources = self._sorted(transport, path, read, kind=kind, window=window, limits=options.limits)
        if state is not None and any(r.href not in state.members for r in resources):
            read.moved = True  # a new member of the kind (a listing names both kinds: only now known)
            read.changes.add("update")
        if ctag is not None and read.moved and state is not None and state.ctag is not None:
            if ctag == state.ctag:
                self._ctag_contradicted(transport, path, ctag)
                ctag = None  # this state is newer than the ctag: not stored with it
            elif len(read.changes) == 1:
                # Moved with one kind of change only: evidence for that kind.
                self.ctag_moved |= read.changes
        if read.keep:
            kept = {r.href: read.stamps[r.href] for r in resources if r.href in read.stamps}
            self.states.put(key, SyncState.of(read.token, {r.href: r.etag for r in resources if r.etag}, kept,
                                              moved=read.moved, **self._ctag_fields(state, ctag, served, read)))
        else:
            self.states.drop(key)
        return resources + read.odd

    # -- the collection's ctag -------------------------------------------------

    def _ctag(self, transport: Transport, path: str) -> tuple[str | None, str | None]:
        """The collection's CS:getctag and the answer's Date (Depth 0 PROPFIND), or (None, None).

        A server that answers none (or not a multistatus) is not asked again.
        A failure that ends the request (a timeout) ends it; any other is only
        the ctag missing: the sync decides.
        """
        try:
            answer = transport.propfind(path, propfind_body(GETCTAG), depth=0)
        except CalendarUnavailable as err:
            if err.details.get("reason") in sync.FATAL:
                raise
            return None, None
        found = answered(answer, required=False)
        for response in (found.responses if found is not None else ()):
            ctag = (response.text(GETCTAG) or "").strip()
            if ctag and len(ctag) <= MAX_CTAG_CHARS:
                return ctag, found.served  # type: ignore[union-attr]
        if self.ctag_property:
            logger.info("caldav %s: no CS:getctag: read by sync or listing only", path)
        self.ctag_property = False
        return None, None

    def _witness(self, state: SyncState) -> bool:
        """Whether an unchanged ctag stands for this state's members (module docstring)."""
        return (state.ctag is not None and state.ctag_settled and self.trusts_ctags
                and self.ctag_moved >= CTAG_EVIDENCE)

    def _asks_ctag(self, state: SyncState, options: ReadOptions) -> bool:
        """Ask the ctag before the sync? Always where it is a witness; else at most every ctag_ask_seconds.

        Until it is a witness the ctag is only paid for (on Radicale it costs
        about what the sync report does), so it is asked now and then: enough
        to see it move with changes and to settle, not on every request.
        """
        if not (options.ctag and self.trusts_ctags and self.ctag_property) or state.moved:
            return False
        if self._witness(state) or state.ctag_asked is None:
            return True
        return time.monotonic() - state.ctag_asked >= self.ctag_ask_seconds

    def _ctag_fields(self, state: SyncState | None, ctag: str | None, served: str | None,
                     read: _Pass) -> dict[str, Any]:
        """What the new state remembers of the ctag (caches.SyncState).

        Asked now: that value, since when it shows, and whether these members
        were read 2 s after. Not asked: what the last state had, while nothing
        changed since (the members it stands for are the same); else nothing.
        """
        if ctag is None or served is None:
            if state is None or read.moved or state.ctag is None:
                return {"ctag_asked": state.ctag_asked if state is not None else None}
            return {"ctag": state.ctag, "ctag_since": state.ctag_since, "ctag_settled": state.ctag_settled,
                    "ctag_asked": state.ctag_asked}
        since = state.ctag_since if state is not None and state.ctag == ctag and state.ctag_since else served
        return {"ctag": ctag, "ctag_since": since, "ctag_settled": stamps.apart(since, served),
                "ctag_asked": time.monotonic()}

    def _ctag_contradicted(self, transport: Transport, path: str, ctag: str) -> None:
        """A change was read under an unchanged ctag: asked once more, and if still unmoved, ctags are not trusted.

        Asked again because the change may have come between the ctag and the
        sync; a ctag still unmoved after the sync listed it does not move with
        every change on this server.
        """
        again, _ = self._ctag(transport, path)
        if again is not None and again == ctag:
            self.trusts_ctags = False
            logger.warning("caldav %s: a change under an unchanged CS:getctag (%s): ctags on %s are not trusted "
                           "from now on", path, ctag, self.client.origin.base)

    def _agree(self, transport: Transport, path: str, changes: sync.Changes, *, known: Mapping[str, str]) -> None:
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

    def _from_delta(self, path: str, state: SyncState, delta: sync.Changes) -> _Pass:
        """A sync report's changes over the remembered members.

        Every href it lists as changed is downloaded again, even under an
        (href, ETag) the memo holds: SOGo gives a resource deleted and put
        again the ETag its first version had.
        """
        read = _Pass(members=dict(state.members), token=delta.token)
        for href in delta.deleted:
            gone = read.members.pop(href, None)
            if gone is not None:
                read.moved = True
                read.changes.add("delete")
            self._bury(path, href, gone)
        for href, etag in delta.updates.items():
            old = read.members.get(href)
            # SOGo lists again what changed in the token's second: only a new href or ETag is a change.
            if old != etag:
                read.moved = True
                read.changes.add("update")
            if old is not None and old != etag:
                self._forget(href, old)
            read.members[href] = etag
            read.unsorted.add(href)
            read.recheck.add(href)
        return read

    def _from_listing(self, transport: Transport, path: str, state: SyncState, *, kind: Kind, window: Window,
                      skipped: list[SkippedResource]) -> _Pass:
        """No WebDAV sync here (or sync off): list ETags and modification times, fetch what is new.

        The listing is the collection's Depth 1 PROPFIND, both kinds (the memo
        sorts them): it carries getlastmodified on every server tested. A
        member under the same ETag but written since (or whose time was not
        known, or too near the listing to tell: stamps.py) is downloaded again
        and compared: SOGo hands an ETag out again after a DELETE + PUT.
        """
        read = _Pass()
        read.members = etags.members(transport, path, skipped, stamps=read.stamps)
        read.unsorted.update(read.members)
        for href, etag in state.members.items():
            now = read.members.get(href)
            if now is None:
                self._bury(path, href, etag)
                read.moved = True
                read.changes.add("delete")
            elif now != etag:
                self._forget(href, etag)
                read.moved = True
                read.changes.add("update")
            elif stamps.doubted(state.stamps.get(href), read.stamps.get(href)):
                read.recheck.add(href)
        return read

    def _from_first(self, transport: Transport, path: str, previous: SyncState | None, *, kind: Kind,
                    window: Window, options: ReadOptions, skipped: list[SkippedResource]) -> _Pass:
        """Every member of the kind with its data, and the token to sync from next time.

        The token comes from the collection's DAV:sync-token property, then the
        kind's calendar-query brings the data: on Radicale an initial sync costs
        the server half as much again as both (it sends both kinds and walks its
        history), and everywhere it would send the other kind's data too.

        A server that gives no sync-token property gets the initial sync: where
        its listing comes without the data (remembered as such), a collection of
        at most one multiget's worth is read from the listing with one
        calendar-multiget of both kinds, so the other kind's first read needs
        its sync report only (the memo holds its data).
        """
        token = None
        if options.sync == "auto" and self.token_property:
            token = sync.current_token(transport, path)
            self.token_property = token is not None
        first = None
        if token is None and options.sync == "auto":
            first = sync.initial(transport, path, skipped, data=self.sync_sends_data)
        if first is not None:
            self._agree(transport, path, first, known={})
            if first.updates and not first.data:
                self.sync_sends_data = False
            token = first.token
        read = _Pass(token=token)
        if first is not None and (first.data or not first.updates or len(first.updates) <= etags.MULTIGET_BATCH):
            read.members = dict(first.updates)
            read.unsorted.update(read.members)
            read.odd.extend(Resource(href, None, None) for href in first.odd)
            for href, text in first.data.items():
                # The other kind's resources are not parsed for this one.
                named = components_named(text)
                if named and COMPONENT[kind] not in named:
                    read.members.pop(href, None)
                    continue
                read.fetched[href] = text
        else:
            # The token came alone (the sync-token property), or no sync, or a
            # sync listing without the data (Xandikos): the kind's calendar-query
            # brings it, for this kind only. After the token, so that a change
            # made between the two is listed by the next sync.
            body = query_body(kind, window, time_range=False, stamp=token is None)
            for resource in full.read(transport, path, body, skipped):
                if not resource.etag:
                    read.odd.append(Resource(resource.href, None, None))
                    continue
                read.members[resource.href] = resource.etag
                read.fetched[resource.href] = resource.data
                if resource.stamp is not None:
                    read.stamps[resource.href] = resource.stamp
        for href, etag in (previous.members.items() if previous is not None else ()):
            if href not in read.members:
                self._bury(path, href, etag)
        return read

    def _download(self, transport: Transport, path: str, read: _Pass, skipped: list[SkippedResource]) -> None:
        """One calendar-multiget for what the memo does not hold, or holds but is doubted."""
        wanted = []
        for href, etag in read.members.items():
            if href in read.fetched:
                continue
            known = None if href in read.recheck else self.facts.get((href, etag))
            if known is None:
                wanted.append(href)
            else:
                read.known[href] = known
        for href, etag, data, status in etags.multiget(transport, path, wanted, skipped):
            if status == 404:
                self._bury(path, href, read.members.pop(href, None))
                # Listed as there, yet not found: the next request reads the collection afresh.
                read.keep = read.token is None
                continue
            if etag and etag != read.members.get(href):
                self._forget(href, read.members.get(href))
                read.members[href] = etag
            read.fetched[href] = data

    def _sorted(self, transport: Transport, path: str, read: _Pass, *, kind: Kind, window: Window,
                limits: Limits) -> list[Resource]:
        """The members holding `kind`, with their facts."""
        resources = []
        doubtful: list[Resource] = []
        for n, (href, etag) in enumerate(read.members.items()):
            if n % 64 == 0:
                _check_deadline(path)
            known = read.known.get(href) if href not in read.fetched else None
            facts = known.facts if known is not None else self._facts(href, etag, read.fetched.get(href), limits)
            resource = Resource(href, etag, read.fetched.get(href), facts)
            if href in read.unsorted:
                # Listed without the server filtering on the kind: it may hold the other kind only.
                if isinstance(facts, Unreadable) and not facts.components:
                    doubtful.append(resource)  # no data, or none we can read: the server decides
                    continue
                if not _holds(facts, kind):
                    continue
            resources.append(resource)
        if doubtful:
            # Rare (a damaged or empty resource): one etag listing for the kind says which are ours.
            listed = etags.listing(transport, path, kind=kind, window=window, skipped=[])
            resources.extend(r for r in doubtful if r.href in listed)
        return resources

    def _forget(self, href: str, etag: str | None) -> None:
        if etag is not None:
            self.facts.discard((href, etag))
            self.built.discard((href, etag))

    def _bury(self, path: str, href: str, etag: str | None) -> None:
        """A member the server no longer holds: forgotten, and marked should its href come back."""
        self._forget(href, etag)
        self.tombstones.bury(path, href, etag)

    def _built(self, href: str, etag: str, facts: Any, *, kind: Kind, collection_path: str,
               window: Window, tz: tzinfo | None, limits: Limits) -> tuple[Item, ...]:
        """The live items of one memoised resource for this window, built again only when they may differ.

        Building 1,333 task items from their facts cost a warm request about a
        fifth of its time at N = 1,000, and expanding the series a third of an
        event request's: an unchanged task, or an event whose live occurrences
        cannot have changed since (ical.items_until), reuses the very Item
        objects of the last request.
        """
        key = (href, etag)
        variant = (collection_path, kind.value, tz, window.end - window.start)
        known = self.built.get(key)
        if known is not None:
            hit = known.get(variant)
            if hit is not None and hit[0] <= window.start < hit[1]:
                return hit[2]
        built, until = items_until(facts, kind=kind, collection_path=collection_path, href=href, etag=etag,
                                   window=window, tz=tz, limits=limits)
        items = tuple(built)
        if until > window.start:
            self.built.put(key, {**(known or {}), variant: (window.start, until, items)})
        return items

    def _items(
        self, resources: list[Resource], collection: Collection, *, kind: Kind, window: Window,
        tz: tzinfo | None, limits: Limits,
    ) -> tuple[list[Item], list[SkippedResource]]:
        items: list[Item] = []
        skipped: list[SkippedResource] = []
        # In href order, whatever path answered: the full read and the sync
        # path give the same items in the same order.
        for resource in sorted(resources, key=lambda r: r.href):
            _check_deadline(collection.url_path)
            if resource.etag is None or (resource.facts is None and not resource.data):
                # Logged like any other skip: the README promises every skipped href in the log.
                logger.warning("skipped resource %s: %s", resource.href, "no calendar data")
                skipped.append(SkippedResource(resource.href, "no calendar data"))
                continue
            facts = resource.facts
            try:
                if facts is None:  # the full read, memo off
                    items.extend(live_items(resource.data or "", kind=kind, collection_path=collection.url_path,
                                            etag=resource.etag, window=window, href=resource.href, tz=tz,
                                            limits=limits))
                    continue
                if isinstance(facts, Unreadable):
                    raise UnparseableResource(facts.reason)
                items.extend(self._built(resource.href, resource.etag, facts, kind=kind,
                                         collection_path=collection.url_path, window=window, tz=tz,
                                         limits=limits))
            except UnparseableResource as err:
                logger.warning("skipped resource %s: %s", resource.href, err.reason)
                skipped.append(SkippedResource(resource.href, err.reason))
        return items, skipped


def _holds(facts: Any, kind: Kind) -> bool:
    """Whether a resource holds a component of `kind`; when in doubt, yes (it is then skipped, not lost)."""
    if isinstance(facts, Unreadable):
        return facts.components is None or COMPONENT[kind] in facts.components
    return any(component.name == COMPONENT[kind] for component in facts.components)
