"""Listing then multiget: one Depth 1 PROPFIND of ETags and times; changes against the state, no data."""
from __future__ import annotations

from resolver.calendars.caldav.strategies import ListingThenMultiget
from tests.support.scripted_dav import COLLECTION, ScriptedDAV, vtodo
from tests.support.strategy_context import calendar, context, requests_during, state_after_read


def test_listing_then_multiget__one_propfind_lists_members_and_marks_the_changes() -> None:
    server = ScriptedDAV()
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        server.put("b.ics", vtodo("b", "Book the dentist"))
        cal = calendar(server, sync="off")
        state = state_after_read(cal)
        assert state.token is None
        server.put("a.ics", vtodo("a", "Water the plants today"))
        server.delete("b.ics")
        ctx, keeper = context(cal)
        read, sent = requests_during(server, lambda: ListingThenMultiget().read(ctx, state))
        assert sent == [("PROPFIND", None)]
        assert set(read.members) == {COLLECTION + "a.ics"} and read.unsorted == {COLLECTION + "a.ics"}
        assert read.token is None and set(read.stamps) == {COLLECTION + "a.ics"}
        assert read.changes == {"update", "delete"}
        assert keeper.buried == [(COLLECTION + "b.ics", state.members[COLLECTION + "b.ics"])]
        assert keeper.discarded == [(COLLECTION + "a.ics", state.members[COLLECTION + "a.ics"])]
    finally:
        server.stop()
