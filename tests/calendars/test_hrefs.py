"""hrefs a server can be asked for (issue 27, point 2): the rule, then the reader against a SOGo-like server.

SOGo 5.8 lists hrefs decoded once in its sync report (`pct%41.ics`,
`with space.ics`) while its PROPFIND and calendar-query list `pct%2541.ics`
and `with%20space.ics`. The scripted server (tests/support/scripted_dav.py)
does the same with `sync_hrefs="decoded"`; a GET to the href the reader
returns must reach the item, in every read mode, cold and warm, after edits.
"""
from __future__ import annotations

from typing import Iterator

import pytest
import requests

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.calendars.caldav.hrefs import agree, suspect, usable, valid
from resolver.domain.items import Kind
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV, vtodo

MODES = {"sync": dict(sync="auto"), "sync_off": dict(sync="off"), "memo_off": dict(parse_cache_items=0)}
C = "/dav/alice/work/"


@pytest.mark.parametrize("href", [f"{C}plain.ics", f"{C}pct%2541.ics", f"{C}with%20space.ics",
                                  f"{C}semi%3Bcolon.ics", f"{C}uni%C3%A9.ics", f"{C}a;b=c@d.ics"])
def test_hrefs__a_valid_href_is_kept_byte_for_byte(href: str) -> None:
    assert valid(href) and usable(href) == href and not suspect(href)


@pytest.mark.parametrize(("raw", "escaped"), [
    (f"{C}with space.ics", f"{C}with%20space.ics"),
    (f"{C}lone%.ics", f"{C}lone%25.ics"),
    (f"{C}half%4.ics", f"{C}half%254.ics"),
    (f"{C}caf\u00e9.ics", f"{C}caf%C3%A9.ics"),
    (f"{C}both %41 and %.ics", f"{C}both%20%41%20and%20%25.ics"),  # %41 stays: never re-encoded
])
def test_hrefs__only_what_rfc_3986_forbids_is_escaped(raw: str, escaped: str) -> None:
    assert not valid(raw) and usable(raw) == escaped and valid(escaped)


def test_hrefs__an_escaped_unreserved_character_is_suspect() -> None:
    assert suspect(f"{C}pct%41.ics") and suspect(f"{C}x%7e.ics") and not suspect(f"{C}pct%2541.ics")


def test_hrefs__a_disagreeing_report_takes_the_listings_form() -> None:
    listed = [f"{C}pct%2541.ics", f"{C}with%20space.ics", f"{C}ok.ics"]
    assert agree([f"{C}pct%41.ics", f"{C}with%20space.ics", f"{C}ok.ics", f"{C}gone%41.ics"], listed) == {
        f"{C}pct%41.ics": f"{C}pct%2541.ics"}


def test_hrefs__an_ambiguous_match_is_left_alone() -> None:
    """Two listed resources decode to the same name: no guess."""
    assert agree([f"{C}A%42.ics"], [f"{C}AB.ics", f"{C}%41B.ics"]) == {}
    assert agree([f"{C}A%42.ics"], [f"{C}AB.ics"]) == {f"{C}A%42.ics": f"{C}AB.ics"}


# -- through the reader ---------------------------------------------------------

NAMES = {"pct%41.ics": "Renew library card", "with space.ics": "Book the dentist", "plain.ics": "Water the plants"}


@pytest.fixture
def sogo() -> Iterator[ScriptedDAV]:
    server = ScriptedDAV(etags="sogo", sync_hrefs="decoded")
    for n, (name, title) in enumerate(NAMES.items()):
        server.put(name, vtodo(f"uid-{n}", title))
    try:
        yield server
    finally:
        server.stop()


def read(cal: CalDAVCalendar) -> dict[str, str]:
    result = deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=None))()
    return {item.title: item.href for item in result.items}


def gets_its_item(server: ScriptedDAV, href: str, title: str) -> bool:
    prepared = requests.Request("GET", f"http://127.0.0.1:{server.port}{href}", auth=(USER, PASSWORD)).prepare()
    prepared.url = f"http://127.0.0.1:{server.port}{href}"  # exactly as returned, never re-quoted
    response = requests.Session().send(prepared, timeout=5)
    return response.status_code == 200 and f"SUMMARY:{title}" in response.text


EXPECTED = {"Renew library card": f"{C}pct%2541.ics", "Book the dentist": f"{C}with%20space.ics",
            "Water the plants": f"{C}plain.ics"}


@pytest.mark.parametrize("mode", list(MODES))
def test_hrefs__sogo_sync_hrefs_answer_the_listings_form_cold_and_warm(sogo: ScriptedDAV, mode: str) -> None:
    cal = CalDAVCalendar(url=sogo.url, username=USER, password=PASSWORD, timeout=5.0, registry=ReaderRegistry(),
                         **MODES[mode])
    for _ in range(2):  # cold, then warm
        assert read(cal) == EXPECTED
    for title, href in EXPECTED.items():
        assert gets_its_item(sogo, href, title)


@pytest.mark.parametrize("mode", list(MODES))
def test_hrefs__an_edited_item_never_disappears_on_later_reads(sogo: ScriptedDAV, mode: str) -> None:
    """The issue's failure: after an edit, the decoded href got 404 and the item was gone for good."""
    cal = CalDAVCalendar(url=sogo.url, username=USER, password=PASSWORD, timeout=5.0, registry=ReaderRegistry(),
                         **MODES[mode])
    read(cal)
    sogo.put("pct%41.ics", vtodo("uid-0", "Renew library card soon"))
    sogo.put("with space.ics", vtodo("uid-1", "Book the dentist today"))
    expected = {"Renew library card soon": f"{C}pct%2541.ics", "Book the dentist today": f"{C}with%20space.ics",
                "Water the plants": f"{C}plain.ics"}
    for _ in range(3):
        assert read(cal) == expected
    sogo.delete("pct%41.ics")
    assert read(cal) == {k: v for k, v in expected.items() if k != "Renew library card soon"}
    assert gets_its_item(sogo, f"{C}with%20space.ics", "Book the dentist today")


def test_hrefs__the_listing_is_asked_once_per_suspect_href(sogo: ScriptedDAV) -> None:
    cal = CalDAVCalendar(url=sogo.url, username=USER, password=PASSWORD, timeout=5.0, registry=ReaderRegistry())
    read(cal)
    sogo.put("pct%41.ics", vtodo("uid-0", "Renew library card soon"))
    read(cal)
    # The collection's Depth 1 listing (its Depth 0 PROPFIND asks for the sync-token only).
    listings = [r for r in sogo.seen if r.method == "PROPFIND" and r.path == C and r.depth == "1"]
    assert len(listings) == 1
