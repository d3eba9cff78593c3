"""A server's profile is learnt from what it answers, named, and picks how its collections are read.

The last test is the worked example of docs/calendars.md, "Reading another
server": a profile for a server whose sync-collection is not to be relied on.
"""
from __future__ import annotations

from resolver import deadline
from resolver.calendars.caldav import profiles
from resolver.calendars.caldav.profiles import PROFILES, Profile, ServerFacts
from resolver.domain.items import Kind
from tests.support.scripted_dav import ScriptedDAV, vtodo
from tests.support.strategy_context import calendar


def named(**facts: bool | None) -> str:
    return ServerFacts(**facts).profile(PROFILES).name


def test_profiles__named_by_the_facts_learnt() -> None:
    assert named() == "unknown"
    assert named(token_property=True) == "radicale"
    assert named(token_property=True, sync_data=False) == "davical"
    assert named(token_property=False) == "sogo"
    assert named(token_property=False, sync_data=False) == "xandikos"


def read_twice(server: ScriptedDAV) -> tuple[str, list[str | None]]:
    server.put("a.ics", vtodo("a", "Water the plants"))
    cal = calendar(server)
    for _ in range(2):
        deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    return cal.reader().profile.name, [r.report for r in server.seen if r.method == "REPORT"]


def test_profiles__a_uri_token_property_reads_as_radicale() -> None:
    server = ScriptedDAV(token_property="uri")
    try:
        name, reports = read_twice(server)
        assert name == "radicale" and reports == ["calendar-query", "sync-collection"]
    finally:
        server.stop()


def test_profiles__no_token_property_and_a_sync_without_data_reads_as_xandikos() -> None:
    server = ScriptedDAV(sync_data=False)
    try:
        name, reports = read_twice(server)
        assert name == "xandikos"
        assert reports == ["sync-collection", "calendar-multiget", "sync-collection"]
    finally:
        server.stop()


def test_profiles__a_new_server_is_a_new_profile(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Worked example: a server whose sync-collection is unreliable, recognised by its answers
    (here: no usable sync-token property, as Xandikos and SOGo), is read by the full query,
    then the listing then multiget: no sync-collection is ever sent to it."""
    flaky = Profile("flaky", "a server whose sync-collection misses changes", token_property=False, syncs=False)
    monkeypatch.setattr(profiles, "PROFILES", (flaky, *PROFILES))
    server = ScriptedDAV()  # no sync-token property
    try:
        name, reports = read_twice(server)
        assert name == "flaky"
        assert reports == ["calendar-query"]  # the first read; the second is the listing then multiget
        assert [(r.method, r.depth) for r in server.seen][-1] == ("PROPFIND", "1")
    finally:
        server.stop()
