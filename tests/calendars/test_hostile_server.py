"""The reader against a CalDAV server of our own that misbehaves on purpose (tests/support/hostile_dav.py).

127.0.0.1 is the account's origin, 127.0.0.2 another one. Whatever the first
points to on the second (principal, home set, collection, member, redirect),
no request with credentials reaches the second and nothing it holds becomes
an item; a trickling or oversized answer ends within the deadline or the byte
bound; a dropped connection is tried once more.
"""
from __future__ import annotations

from typing import Iterator

import pytest

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind
from tests.support.hostile_dav import PASSWORD, USER, HostileDAV, Member, Origins


@pytest.fixture(scope="module")
def servers() -> Iterator[Origins]:
    home, other = HostileDAV("127.0.0.1"), HostileDAV("127.0.0.2")
    try:
        yield Origins(home=home, other=other)
    finally:
        home.stop()
        other.stop()


@pytest.fixture
def origins(servers: Origins) -> Origins:
    servers.home.reset()
    servers.other.reset()
    # The other origin holds a calendar too, with a planted task.
    servers.other.members = [Member(f"/{USER}/work/planted.ics", "planted-1", "Planted task")]
    return servers


def calendar(origins: Origins, **options) -> CalDAVCalendar:
    values = dict(url=origins.home.url, username=USER, password=PASSWORD, timeout=2.0,
                  registry=ReaderRegistry())
    values.update(options)
    return CalDAVCalendar(**values)


def fetch(cal: CalDAVCalendar):
    """One fetch under a resolution's deadline (RESOLVER_RESOLUTION_BUDGET_SECONDS)."""
    return deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()


def assert_other_untouched(origins: Origins) -> None:
    assert origins.credentials_sent_to_other() == []
    assert origins.other.seen == []


def test_hostile__a_plain_server_reads(origins: Origins) -> None:
    """The baseline the other cases change one thing of."""
    result = fetch(calendar(origins))
    assert [item.title for item in result.items] == ["Plain task"]
    assert all(seen.authorized for seen in origins.home.seen)
    assert_other_untouched(origins)


@pytest.mark.parametrize("step", ["principal", "home_set", "collection"])
def test_hostile__discovery_pointing_elsewhere_is_refused(origins: Origins, step: str) -> None:
    elsewhere = f"{origins.other.url}{USER}/"
    if step == "principal":
        origins.home.principal = elsewhere
    elif step == "home_set":
        origins.home.home_set = elsewhere
    else:
        origins.home.collection_href = f"{origins.other.url}{USER}/work/"
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(calendar(origins))
    assert caught.value.details == {"reason": "foreign_origin", "step": step}
    assert_other_untouched(origins)


def test_hostile__redirect_elsewhere_is_refused_same_origin_followed(origins: Origins) -> None:
    origins.home.redirect = {"/": f"{origins.other.url}"}
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(calendar(origins))
    assert caught.value.details == {"reason": "foreign_origin", "step": "redirect"}
    assert_other_untouched(origins)
    # A redirect on our own origin is followed, credentials and all.
    origins.home.redirect = {"/": f"{origins.home.url}{USER}/"}
    result = fetch(calendar(origins))
    assert [item.title for item in result.items] == ["Plain task"]
    assert [seen.path for seen in origins.home.seen].count("/") == 2


@pytest.mark.parametrize("sync", ["auto", "off"])
def test_hostile__member_elsewhere_is_skipped(origins: Origins, sync: str) -> None:
    planted = f"{origins.other.url}{USER}/work/planted.ics"
    ours = f"{origins.home.url}{USER}/work/with%20space.ics"  # absolute, our origin: reduced to its path
    origins.home.members = [Member(f"/{USER}/work/plain.ics", "plain-1", "Plain task"),
                            Member(planted, "planted-1", "Planted task"),
                            Member(ours, "ours-1", "Our absolute task")]
    result = fetch(calendar(origins, sync=sync))
    assert sorted(item.title for item in result.items) == ["Our absolute task", "Plain task"]
    assert sorted(item.href for item in result.items) == [f"/{USER}/work/plain.ics", f"/{USER}/work/with%20space.ics"]
    assert [(s.href, s.reason) for s in result.skipped] == [(planted, "foreign_origin")]
    assert_other_untouched(origins)


def test_hostile__memo_off_skips_the_member_too(origins: Origins) -> None:
    origins.home.members.append(Member(f"{origins.other.url}{USER}/work/planted.ics", "planted-1", "Planted task"))
    result = fetch(calendar(origins, parse_cache_items=0))
    assert [item.title for item in result.items] == ["Plain task"]
    assert [s.reason for s in result.skipped] == ["foreign_origin"]
    assert_other_untouched(origins)


def test_hostile__trickling_body_ends_at_the_deadline(origins: Origins, settings) -> None:
    """One byte every 50 ms never trips the read timeout (2 s); the deadline (1.5 s) ends it."""
    settings.RESOLVER = {"RESOLUTION_BUDGET_SECONDS": 1.5}
    origins.home.trickle = 0.05
    origins.home.members = [Member(f"/{USER}/work/{n}.ics", f"t-{n}", f"Task {n}") for n in range(20)]
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(calendar(origins))
    assert caught.value.details["reason"] == "timeout"


def test_hostile__oversized_body_is_refused(origins: Origins) -> None:
    origins.home.body_bytes = 4 * 1024 * 1024
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(calendar(origins, max_response_bytes=1024 * 1024))
    assert caught.value.details["reason"] == "response_too_large"
    # Under the bound, the same padding is read through.
    origins.home.body_bytes = 512 * 1024
    assert [item.title for item in fetch(calendar(origins, max_response_bytes=1024 * 1024)).items] == ["Plain task"]


def test_hostile__dropped_connection_is_tried_once_more(origins: Origins) -> None:
    origins.home.drops = 1
    result = fetch(calendar(origins))
    assert [item.title for item in result.items] == ["Plain task"]
    # The first PROPFIND was dropped and sent again.
    assert [seen.method for seen in origins.home.seen][:2] == ["PROPFIND", "PROPFIND"]


def test_hostile__dropped_twice_fails_cleanly(origins: Origins) -> None:
    origins.home.drops = 2
    with pytest.raises(CalendarUnavailable) as caught:
        fetch(calendar(origins))
    assert caught.value.details == {"reason": "unreachable"}
    assert len(origins.home.seen) == 2  # tried once more, not more than that
