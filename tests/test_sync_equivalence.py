"""The memo and sync paths give exactly what a memo-less full read gives, after any change.

Hypothesis builds a collection of tasks and events on a real server (Radicale
and Xandikos, each a server of this module's own so the shared fixtures stay
untouched), then applies random edits, deletions, additions, completions and
recurrence changes between requests. After each step both kinds are read
twice with the same clock (which steps may move forward, so that events
end or enter the horizon with their ETags unchanged): by a calendar with the memo and incremental reads
on (the path under test, whose memory carries over from step to step), and by
one with the memo off (one full calendar-query, everything parsed). The
FetchResults must agree item for item, occurrences and skipped resources
included, and every ETag must be the one the server holds.
"""
from __future__ import annotations

import itertools
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests
from hypothesis import HealthCheck, given, settings, strategies as st

from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.items import Kind
from tests.conftest import start_radicale
from tests.support.xandikos import start_xandikos

pytestmark = [pytest.mark.slow]

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc).replace(year=datetime.now(timezone.utc).year)
TITLES = ("Plan offsite", "Review budget", "Call Anna", "Weekly sync", "Dentist", "Plan offsite ")
_collections = itertools.count(1)
# Resource names as stored (PUT to these encoded paths): the hrefs the server
# lists must come back byte for byte, `%25`, spaces, `;` and UTF-8 included.
ENCODED_NAMES = ("pct%2541-", "with%20space-", "semi%3Bcolon-", "uni%C3%A9-", "")
# The clock both calendars read: a step may let time pass, so that events end
# or come into the horizon between two requests while their ETags stay put.
CLOCK = [NOW]


class Server:
    def __init__(self, name: str, url: str, username: str, password: str, path: str, **options: Any) -> None:
        self.name, self.url, self.username, self.password = name, url, username, password
        self.home_path = path  # where collections live
        self.options = options
        self.session = requests.Session()
        if username:
            self.session.auth = (username, password)

    def calendar(self, **overrides: Any) -> CalDAVCalendar:
        values: dict[str, Any] = dict(url=self.url, username=self.username, password=self.password, timeout=10.0,
                                      horizon_days=90, now=lambda: CLOCK[0], **self.options)
        values.update(overrides)
        return CalDAVCalendar(**values)

    def new_collection(self) -> str:
        cid = f"equiv-{next(_collections)}"
        body = ('<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
                "<D:set><D:prop><C:supported-calendar-component-set><C:comp name=\"VTODO\"/>"
                "<C:comp name=\"VEVENT\"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>")
        response = self.session.request("MKCALENDAR", f"{self.url.rstrip('/')}{self.home_path}{cid}/",
                                        data=body, headers={"Content-Type": "application/xml"}, timeout=10)
        assert response.status_code in (200, 201), response.status_code
        return cid

    @staticmethod
    def name_of(uid: str) -> str:
        return f"{ENCODED_NAMES[int(uid.rsplit('-', 1)[1]) % len(ENCODED_NAMES)]}{uid}.ics"

    def put(self, cid: str, uid: str, text: str) -> None:
        response = self.session.put(f"{self.url.rstrip('/')}{self.home_path}{cid}/{self.name_of(uid)}",
                                    data=text.encode(),
                                    headers={"Content-Type": "text/calendar; charset=utf-8"}, timeout=10)
        assert response.status_code in (201, 204), (response.status_code, response.text[:200])

    def delete(self, cid: str, uid: str) -> None:
        response = self.session.delete(f"{self.url.rstrip('/')}{self.home_path}{cid}/{self.name_of(uid)}",
                                       timeout=10)
        assert response.status_code in (200, 204), response.status_code


@pytest.fixture(scope="module", params=["radicale", "xandikos"])
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    root = Path(tempfile.mkdtemp(prefix=f"equiv-{request.param}-"))
    try:
        if request.param == "radicale":
            running = start_radicale(root)
            username = running.instance.username
            yield Server("radicale", running.url, username, running.instance.password, f"/{username}/")
        else:
            running = start_xandikos(root)
            # Its time-range leaves out some live events (tests/support/xandikos.py).
            yield Server("xandikos", running.url, "", "", "/user/calendars/", event_time_range=False)
        running.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- resources ------------------------------------------------------------------

def _fmt(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


tasks = st.fixed_dictionaries({
    "kind": st.just("task"),
    "title": st.sampled_from(TITLES),
    "status": st.sampled_from([None, "NEEDS-ACTION", "IN-PROCESS", "COMPLETED", "CANCELLED"]),
    "due": st.one_of(st.none(), st.integers(-5, 120)),
    "completed": st.booleans(),
})
events = st.fixed_dictionaries({
    "kind": st.just("event"),
    "title": st.sampled_from(TITLES),
    "status": st.sampled_from([None, "CONFIRMED", "CANCELLED"]),
    "start": st.integers(-400, 200),  # days from now
    "hours": st.integers(1, 30),
    "rule": st.sampled_from([None, "FREQ=WEEKLY", "FREQ=DAILY;COUNT=5", "FREQ=DAILY;INTERVAL=3", "FREQ=MONTHLY"]),
    "exdate": st.booleans(),
    "moved": st.one_of(st.none(), st.integers(-3, 3)),  # an override of the second occurrence
})
resources = st.one_of(tasks, events)


def ical(uid: str, spec: dict[str, Any], version: int) -> str:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//lifeproject//equivalence//EN"]
    stamp = _fmt(datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=version))
    if spec["kind"] == "task":
        lines += ["BEGIN:VTODO", f"UID:{uid}", f"DTSTAMP:{stamp}", f"SUMMARY:{spec['title']}"]
        if spec["status"]:
            lines.append(f"STATUS:{spec['status']}")
        if spec["due"] is not None:
            lines.append(f"DUE:{_fmt(NOW + timedelta(days=spec['due']))}")
        if spec["completed"]:
            lines.append(f"COMPLETED:{_fmt(NOW - timedelta(days=1))}")
        lines.append("END:VTODO")
    else:
        start = NOW + timedelta(days=spec["start"], hours=2)
        end = start + timedelta(hours=spec["hours"])
        lines += ["BEGIN:VEVENT", f"UID:{uid}", f"DTSTAMP:{stamp}", f"SUMMARY:{spec['title']}",
                  f"DTSTART:{_fmt(start)}", f"DTEND:{_fmt(end)}"]
        if spec["status"]:
            lines.append(f"STATUS:{spec['status']}")
        if spec["rule"]:
            lines.append(f"RRULE:{spec['rule']}")
            if spec["exdate"]:
                lines.append(f"EXDATE:{_fmt(start + timedelta(days=7 if 'WEEKLY' in spec['rule'] else 3))}")
        lines.append("END:VEVENT")
        if spec["rule"] and spec["moved"] is not None:
            second = start + timedelta(days={"FREQ=WEEKLY": 7, "FREQ=DAILY;COUNT=5": 1,
                                             "FREQ=DAILY;INTERVAL=3": 3, "FREQ=MONTHLY": 0}[spec["rule"]])
            if spec["rule"] != "FREQ=MONTHLY":
                moved = second + timedelta(days=spec["moved"])
                lines += ["BEGIN:VEVENT", f"UID:{uid}", f"DTSTAMP:{stamp}", f"RECURRENCE-ID:{_fmt(second)}",
                          f"SUMMARY:{spec['title']} (moved)", f"DTSTART:{_fmt(moved)}",
                          f"DTEND:{_fmt(moved + timedelta(hours=1))}", "END:VEVENT"]
    lines += ["END:VCALENDAR", ""]
    return "\r\n".join(lines)


# An operation on the collection: ("edit", index, spec), ("delete", index),
# ("add", spec), ("complete", index), ("recur", index, rule), ("wait", hours),
# ("noop",).
operations = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 50), resources),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("add"), resources),
    st.tuples(st.just("complete"), st.integers(0, 50)),
    st.tuples(st.just("recur"), st.integers(0, 50),
              st.sampled_from([None, "FREQ=WEEKLY", "FREQ=DAILY;COUNT=5", "FREQ=DAILY;INTERVAL=3"])),
    st.tuples(st.just("wait"), st.integers(1, 80)),
    st.tuples(st.just("noop")),
)


def snapshot(result) -> tuple:
    return (
        tuple((i.item_id, i.uid, i.collection_id, i.title, i.etag, i.kind, i.status, i.due, i.start, i.href,
               i.occurrences, i.title_key, i.title_words) for i in result.items),
        tuple(result.skipped),
        result.collections_searched,
    )


def server_etags(server: Server, cid: str) -> dict[str, str]:
    from lxml import etree

    body = b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>'
    response = server.session.request("PROPFIND", f"{server.url.rstrip('/')}{server.home_path}{cid}/", data=body,
                                      headers={"Depth": "1", "Content-Type": "application/xml"}, timeout=10)
    found = {}
    for node in etree.fromstring(response.content).iter("{DAV:}response"):
        etag = node.findtext(".//{DAV:}getetag")
        if etag:
            found[node.findtext("{DAV:}href")] = etag
    return found


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(initial=st.lists(resources, min_size=1, max_size=8),
       steps=st.lists(st.lists(operations, min_size=1, max_size=4), min_size=1, max_size=4),
       sync=st.sampled_from(["auto", "off"]))
def test_equivalence__memo_and_sync_equal_a_full_read(server: Server, initial, steps, sync: str) -> None:
    CLOCK[0] = NOW
    cid = server.new_collection()
    specs: dict[str, dict[str, Any]] = {}
    versions = itertools.count(1)
    uids = itertools.count(1)
    for spec in initial:
        uid = f"r-{next(uids)}"
        specs[uid] = spec
        server.put(cid, uid, ical(uid, spec, next(versions)))
    # A reader of its own per example, like a new process.
    incremental = server.calendar(sync=sync, registry=ReaderRegistry())
    full = server.calendar(parse_cache_items=0, registry=ReaderRegistry())

    def compare() -> None:
        for kind in (Kind.TASK, Kind.EVENT):
            got = incremental.fetch(kind=kind, collection_ids=[cid])
            want = full.fetch(kind=kind, collection_ids=[cid])
            assert snapshot(got) == snapshot(want), (server.name, kind, sync)
            etags = server_etags(server, cid)
            # The href is the server's, byte for byte: it keys the server's own listing.
            assert all(item.etag == etags[item.href] for item in got.items)
            assert {item.href for item in got.items} <= set(etags)

    compare()
    for step in steps:
        for op in step:
            names = sorted(specs)
            if op[0] == "wait":
                CLOCK[0] += timedelta(hours=op[1])
                continue
            if op[0] == "add" or (not names and op[0] != "noop"):
                spec = op[-1] if op[0] in ("add", "edit") else {"kind": "task", "title": "Plan offsite",
                                                                  "status": None, "due": None, "completed": False}
                uid = f"r-{next(uids)}"
                specs[uid] = spec
                server.put(cid, uid, ical(uid, spec, next(versions)))
            elif op[0] == "edit":
                uid = names[op[1] % len(names)]
                specs[uid] = op[2]
                server.put(cid, uid, ical(uid, op[2], next(versions)))
            elif op[0] == "delete":
                uid = names[op[1] % len(names)]
                del specs[uid]
                server.delete(cid, uid)
            elif op[0] == "complete":
                uid = names[op[1] % len(names)]
                spec = dict(specs[uid])
                if spec["kind"] == "task":
                    spec.update(status="COMPLETED", completed=True)
                else:
                    spec.update(status="CANCELLED")
                specs[uid] = spec
                server.put(cid, uid, ical(uid, spec, next(versions)))
            elif op[0] == "recur":
                uid = names[op[1] % len(names)]
                spec = dict(specs[uid])
                if spec["kind"] == "event":
                    spec["rule"] = op[2]
                    specs[uid] = spec
                    server.put(cid, uid, ical(uid, spec, next(versions)))
        compare()
    # A fresh process (nothing remembered) agrees too.
    incremental = server.calendar(sync=sync, registry=ReaderRegistry())
    compare()
