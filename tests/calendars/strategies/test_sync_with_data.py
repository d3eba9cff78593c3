"""Sync with data: the initial sync-collection, its data read where sent, its listing where not."""
from __future__ import annotations

from resolver.calendars.caldav.strategies import SyncWithData
from tests.support.scripted_dav import COLLECTION, ScriptedDAV, vtodo
from tests.support.strategy_context import calendar, context, requests_during

A, B = COLLECTION + "a.ics", COLLECTION + "b.ics"


def test_sync_with_data__one_initial_sync_brings_every_member_with_its_data() -> None:
    server = ScriptedDAV()
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        server.put("b.ics", vtodo("b", "Book the dentist"))
        ctx, keeper = context(calendar(server))
        strategy = SyncWithData()
        found, sent = requests_during(server, lambda: strategy.first(ctx, data=True))
        assert sent == [("REPORT", "sync-collection")] and keeper.agreed == 1
        assert found is not None and strategy.usable(found)
        read = strategy.read_from(ctx, found)
        assert read.token == found.token and set(read.members) == set(read.fetched) == {A, B}
        assert "Water the plants" in (read.fetched[A] or "")
    finally:
        server.stop()


def test_sync_with_data__a_listing_without_data_is_read_with_one_multiget_later() -> None:
    """DAViCal and Xandikos send no data: the members are listed, the reader's multiget brings them."""
    server = ScriptedDAV(sync_data=False)
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        ctx, _ = context(calendar(server))
        strategy = SyncWithData()
        found, _ = requests_during(server, lambda: strategy.first(ctx, data=True))
        assert found is not None and found.updates and not found.data
        assert strategy.usable(found)  # one multiget's worth
        read = strategy.read_from(ctx, found)
        assert set(read.members) == {A} and not read.fetched and read.unsorted == {A}
    finally:
        server.stop()
