"""The real calendar: any RFC 4791 server, read live, one reader object per account.

    from resolver.calendars.caldav import CalDAVAccount, readers

    account = CalDAVAccount(url="https://dav.example/", username="alice", password="...", label="user 42")
    reader = readers().get(account)       # the same reader for the same account, created on first use
    readers().drop(account)               # forget what it remembers (its caches, its connections)

`CalDAVCalendar` is the `CalendarSource` port (`collections()`, `fetch(kind=,
collection_ids=, time_zone=tzinfo)`) configured from the settings; it asks the
registry for its account's reader. A `ReaderRegistry` keeps one `CalDAVReader`
per `CalDAVAccount` (url, username, password; `label` is for logs only and
the password never shows in a repr); all readers of a registry share one
bound on memoised resources, RESOLVER_PARSE_CACHE_ITEMS. Tests and benchmarks
get a fresh registry (`use_registry(ReaderRegistry())`) rather than resetting
anything: no module here holds mutable state of its own (the process's
registry is held by the app's config, resolver.apps).

One concern per module:

- account.py    the account, and the origin every request is pinned to
- addresses.py  the host's one IDNA spelling, and which addresses a person's account may reach
- connections.py the requests adapter: connects to the checked address, watches the header phase
- watchdog.py   shuts down a connection whose header phase outlives the request's deadline
- http.py       our HTTP client: same origin only, redirects followed here,
                bodies streamed under the deadline and RESOLVER_MAX_RESPONSE_BYTES,
                one retry of a dropped idempotent request
- multistatus.py request bodies, the multistatus parsed incrementally (hrefs kept raw),
                and the one rule for what an answer's status means (`answered`)
- discovery.py  principal, home set and calendar listing
- full.py       the full read (calendar-query)
- sync.py       sync-collection: the initial read and later deltas
- etags.py      the etag listing and calendar-multiget
- caches.py     what a reader remembers: parse memo, built items, sync states, filter failures
- building.py   from a resource's text to its live items: facts once per ETag, items once per window
- strategies/   how a collection is read: one small object per way (sync then multiget, listing
                then multiget, sync with data, full query), and the multiget that follows each
- profiles.py   what each server is learnt to do, named (radicale, davical, sogo, xandikos,
                unknown): it picks the strategy
- ctags.py      CS:getctag as a witness that nothing changed
- flight.py     concurrent fetches of the same collections share one read (one in flight, one queued)
- options.py    ReadOptions, every option of a read, built once from the settings; what the
                calendar hands its reader with every call
- reader.py     CalDAVReader, one account's reads and what it remembers
- registry.py   ReaderRegistry, one reader per account; the process's (readers())
- calendar.py   CalDAVCalendar, the port
"""
from __future__ import annotations

from resolver.calendars.caldav.account import CalDAVAccount, Origin
from resolver.calendars.caldav.calendar import CalDAVCalendar
from resolver.calendars.caldav.options import ReadOptions
from resolver.calendars.caldav.multistatus import multiget_body, query_body, sync_body
from resolver.calendars.caldav.reader import CalDAVReader
from resolver.calendars.caldav.registry import ReaderRegistry, readers, use_registry

__all__ = [
    "CalDAVAccount", "CalDAVCalendar", "CalDAVReader", "Origin", "ReadOptions", "ReaderRegistry",
    "multiget_body", "query_body", "readers", "sync_body", "use_registry",
]
