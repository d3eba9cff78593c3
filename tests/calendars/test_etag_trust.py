"""An ETag never vouches for content on its own (issue 27, point 3), through the public reader.

Against a scripted server on loopback (tests/support/scripted_dav.py) that
behaves like SOGo 5.8: an ETag counts the versions of one href and starts
over after a DELETE, so a DELETE + PUT on the same href gives back an ETag the
reader has already seen with other content. Each test runs in the three read
modes (sync, sync off, memo off) where the case applies to them.
"""
from __future__ import annotations

from typing import Iterator

import pytest

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.items import Kind
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV, vtodo

MODES = {"sync": dict(sync="auto"), "sync_off": dict(sync="off"), "memo_off": dict(parse_cache_items=0)}


@pytest.fixture
def sogo() -> Iterator[ScriptedDAV]:
    server = ScriptedDAV(etags="sogo")
    try:
        yield server
    finally:
        server.stop()


def calendar(server: ScriptedDAV, mode: str) -> CalDAVCalendar:
    return CalDAVCalendar(url=server.url, username=USER, password=PASSWORD, timeout=5.0,
                          registry=ReaderRegistry(), **MODES[mode])


def titles(cal: CalDAVCalendar) -> dict[str, tuple[str, str]]:
    """href -> (title, etag) of the live tasks."""
    result = deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    return {item.href: (item.title, item.etag) for item in result.items}


@pytest.mark.parametrize("mode", list(MODES))
def test_etag_trust__delete_and_put_reusing_the_etag_gives_the_new_content(sogo: ScriptedDAV, mode: str) -> None:
    sogo.put("expenses.ics", vtodo("old-uid", "Submit travel expenses"))
    sogo.put("other.ics", vtodo("other-uid", "Water the plants"))
    cal = calendar(sogo, mode)
    first = titles(cal)
    assert first["/dav/alice/work/expenses.ics"] == ("Submit travel expenses", '"gcs00000000"')
    sogo.delete("expenses.ics")
    etag = sogo.put("expenses.ics", vtodo("new-uid", "Submit conference expenses"))
    assert etag == '"gcs00000000"'  # the very ETag the reader saw with the old title
    second = titles(cal)
    assert second["/dav/alice/work/expenses.ics"] == ("Submit conference expenses", '"gcs00000000"')
    assert second["/dav/alice/work/other.ics"] == ("Water the plants", '"gcs00000000"')


@pytest.mark.parametrize("mode", list(MODES))
def test_etag_trust__an_etag_back_after_its_href_was_deleted_is_read_again(sogo: ScriptedDAV, mode: str) -> None:
    """The reader saw the deletion (a tombstone); the same ETag comes back with other content."""
    sogo.put("card.ics", vtodo("card-1", "Renew library card"))
    cal = calendar(sogo, mode)
    assert [t for t, _ in titles(cal).values()] == ["Renew library card"]
    sogo.delete("card.ics")
    assert titles(cal) == {}
    sogo.put("card.ics", vtodo("card-2", "Return library books"))
    assert titles(cal) == {"/dav/alice/work/card.ics": ("Return library books", '"gcs00000000"')}


@pytest.mark.parametrize("mode", list(MODES))
def test_etag_trust__a_delete_and_put_in_the_second_of_the_listing_is_read_again(mode: str) -> None:
    """Same ETag and same modification time: a stamp as new as the listing vouches for nothing.

    The server's clock does not move between the reads and the DELETE + PUT
    (on SOGo they fit in one second), so without sync only the stamp's
    closeness to the listing's Date tells the reader to look again.
    """
    server = ScriptedDAV(etags="sogo", frozen_clock=True)
    try:
        server.put("expenses.ics", vtodo("old-uid", "Submit travel expenses"))
        cal = calendar(server, mode)
        titles(cal)
        assert titles(cal)["/dav/alice/work/expenses.ics"][0] == "Submit travel expenses"
        server.delete("expenses.ics")
        server.put("expenses.ics", vtodo("new-uid", "Submit conference expenses"))
        assert titles(cal) == {"/dav/alice/work/expenses.ics": ("Submit conference expenses", '"gcs00000000"')}
        assert titles(cal)["/dav/alice/work/expenses.ics"][0] == "Submit conference expenses"
    finally:
        server.stop()


def test_etag_trust__a_stamp_older_than_the_listing_is_believed(sogo: ScriptedDAV) -> None:
    """Without sync, a member whose ETag and settled stamp are unchanged is not downloaded again."""
    for n in range(3):
        sogo.put(f"t{n}.ics", vtodo(f"t{n}", f"Task {n}"))
    cal = calendar(sogo, "sync_off")
    titles(cal)
    titles(cal)  # the first listing learns the stamps (a calendar-query may leave them out)
    before = len(sogo.reports())
    assert len(titles(cal)) == 3
    assert [r.report for r in sogo.reports()[before:]] == []


def test_etag_trust__sync_listing_a_known_etag_as_changed_downloads_it(sogo: ScriptedDAV) -> None:
    """The server changes content under the same ETag but lists the href as changed: it is read again."""
    sogo.put("plan.ics", vtodo("plan-1", "Draft the plan"))
    cal = calendar(sogo, "sync")
    titles(cal)
    sogo.rewrite("plan.ics", vtodo("plan-1", "Draft the budget"))
    assert titles(cal) == {"/dav/alice/work/plan.ics": ("Draft the budget", '"gcs00000000"')}
    assert [r.report for r in sogo.reports()][-2:] == ["sync-collection", "calendar-multiget"]


def test_etag_trust__content_disagreeing_with_the_memo_replaces_it(sogo: ScriptedDAV) -> None:
    """A refused token makes the reader read everything again: data under a memoised ETag is compared, not trusted."""
    sogo.put("plan.ics", vtodo("plan-1", "Draft the plan"))
    sogo.put("keep.ics", vtodo("keep-1", "Keep this one"))
    cal = calendar(sogo, "sync")
    titles(cal)
    sogo.rewrite("plan.ics", vtodo("plan-1", "Draft the budget"))
    sogo.refuse_tokens()
    assert titles(cal) == {"/dav/alice/work/plan.ics": ("Draft the budget", '"gcs00000000"'),
                           "/dav/alice/work/keep.ics": ("Keep this one", '"gcs00000000"')}
    # and the next (warm) read still answers the new content
    assert titles(cal)["/dav/alice/work/plan.ics"][0] == "Draft the budget"


def test_etag_trust__an_unchanged_collection_downloads_nothing_warm(sogo: ScriptedDAV) -> None:
    """The rule costs nothing when nothing changed: a warm read is one sync report, no multiget."""
    for n in range(5):
        sogo.put(f"t{n}.ics", vtodo(f"t{n}", f"Task {n}"))
    cal = calendar(sogo, "sync")
    titles(cal)
    before = len(sogo.reports())
    assert len(titles(cal)) == 5
    assert [r.report for r in sogo.reports()[before:]] == ["sync-collection"]
