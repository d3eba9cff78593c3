"""Sync then multiget: one sync-collection from the token; what changed is listed for download."""
from __future__ import annotations

from resolver.calendars.caldav.strategies import SyncThenMultiget
from tests.support.scripted_dav import COLLECTION, ScriptedDAV, vtodo
from tests.support.strategy_context import calendar, context, requests_during, state_after_read


def test_sync_then_multiget__one_sync_report_lists_the_changes_over_the_state() -> None:
    server = ScriptedDAV(token_property="uri")
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        server.put("b.ics", vtodo("b", "Book the dentist"))
        cal = calendar(server)
        state = state_after_read(cal)
        server.put("a.ics", vtodo("a", "Water the plants today"))
        server.delete("b.ics")
        server.put("c.ics", vtodo("c", "Renew library card"))
        ctx, keeper = context(cal)
        read, sent = requests_during(server, lambda: SyncThenMultiget().read(ctx, state))
        assert sent == [("REPORT", "sync-collection")]
        assert read is not None and read.token and read.token != state.token
        assert set(read.members) == {COLLECTION + "a.ics", COLLECTION + "c.ics"}
        assert read.recheck == read.unsorted == {COLLECTION + "a.ics", COLLECTION + "c.ics"}
        assert read.changes == {"update", "delete"}
        assert keeper.buried == [(COLLECTION + "b.ics", state.members[COLLECTION + "b.ics"])]
        assert keeper.discarded == [(COLLECTION + "a.ics", state.members[COLLECTION + "a.ics"])]
        assert not read.fetched  # the data comes with the reader's multiget
    finally:
        server.stop()


def test_sync_then_multiget__a_refused_token_is_no_answer() -> None:
    """None: the reader then reads the collection afresh (a first read)."""
    server = ScriptedDAV(token_property="uri")
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        cal = calendar(server)
        state = state_after_read(cal)
        server.refuse_tokens()
        ctx, keeper = context(cal)
        read, sent = requests_during(server, lambda: SyncThenMultiget().read(ctx, state))
        assert read is None and sent == [("REPORT", "sync-collection")]
        assert not keeper.buried and not keeper.discarded
    finally:
        server.stop()
