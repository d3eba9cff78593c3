"""How a collection is read: one small object per way, chosen by the server's profile (profiles.py).

- sync_then_multiget.py  a sync-collection from the remembered token, a multiget for what is new
- listing_then_multiget.py the Depth 1 PROPFIND's ETags and times, a multiget for what is new
- sync_with_data.py      the initial sync-collection, with the data where the server sends it
- full_query.py          the kind's calendar-query, every member with its data

A strategy fills a `Pass` (base.py); the reader downloads what the pass lacks
with one calendar-multiget, sorts the members by kind and keeps the new sync
state. A new way of reading is a new module here, with its own test file
(tests/calendars/strategies/test_<name>.py), and a profile that picks it.
"""
from __future__ import annotations

from resolver.calendars.caldav.strategies.base import Context, Keeper, Pass, Strategy
from resolver.calendars.caldav.strategies.full_query import FullQuery
from resolver.calendars.caldav.strategies.listing_then_multiget import ListingThenMultiget
from resolver.calendars.caldav.strategies.sync_then_multiget import SyncThenMultiget
from resolver.calendars.caldav.strategies.sync_with_data import SyncWithData

__all__ = ["Context", "FullQuery", "Keeper", "ListingThenMultiget", "Pass", "Strategy", "SyncThenMultiget",
           "SyncWithData"]
