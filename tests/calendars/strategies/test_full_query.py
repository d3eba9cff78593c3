"""Full query: the kind's calendar-query, every member of the kind with its data, in one REPORT."""
from __future__ import annotations

from resolver.calendars.caldav.strategies import FullQuery
from tests.support.scripted_dav import COLLECTION, ScriptedDAV, vtodo
from tests.support.strategy_context import calendar, context, requests_during

A = COLLECTION + "a.ics"


def test_full_query__one_calendar_query_brings_members_and_data() -> None:
    server = ScriptedDAV()
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        ctx, _ = context(calendar(server))
        read, sent = requests_during(server, lambda: FullQuery().read_with(ctx, "http://token/1"))
        assert sent == [("REPORT", "calendar-query")]
        assert read.token == "http://token/1" and set(read.members) == set(read.fetched) == {A}
        assert not read.unsorted  # the server chose the kind
    finally:
        server.stop()


def test_full_query__without_a_token_each_members_time_comes_along() -> None:
    """For the listing strategy's next read, which compares getlastmodified."""
    server = ScriptedDAV()
    try:
        server.put("a.ics", vtodo("a", "Water the plants"))
        ctx, _ = context(calendar(server))
        read, _ = requests_during(server, lambda: FullQuery().read_with(ctx, None))
        assert read.token is None and set(read.stamps) <= {A}
    finally:
        server.stop()
