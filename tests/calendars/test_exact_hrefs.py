"""hrefs byte for byte, on real Radicale and Xandikos: percent-encoding, spaces, `;`, UTF-8 and `%25`.

Each resource is stored with a PUT to its encoded path. The href the reader
returns must be the one the server lists (its own PROPFIND, read here with
lxml, not decoded), and a GET and an If-Match PUT sent to that href must
reach that very resource. (The product never writes: only this test does.)
"""
from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote

import pytest
import requests
from lxml import etree

from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.domain.items import Kind
from tests.conftest import start_radicale
from tests.support.xandikos import start_xandikos

pytestmark = [pytest.mark.slow]

NAMES = ("pct%2541.ics", "with%20space.ics", "semi%3Bcolon.ics", "uni%C3%A9.ics")
_numbers = itertools.count(1)


def vtodo(uid: str, title: str) -> str:
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject tests//EN\r\nBEGIN:VTODO\r\n"
            f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:{title}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")


class Server:
    def __init__(self, name: str, url: str, username: str, password: str, home: str) -> None:
        self.name, self.url, self.username, self.password, self.home = name, url, username, password, home
        self.session = requests.Session()
        if username:
            self.session.auth = (username, password)

    def send(self, method: str, path: str, **kwargs) -> requests.Response:
        """A request to `path` exactly as written (requests would re-quote `%41`-like escapes)."""
        prepared = self.session.prepare_request(requests.Request(method, self.url.rstrip("/") + path, **kwargs))
        prepared.url = self.url.rstrip("/") + path
        return self.session.send(prepared, timeout=10)

    def new_collection(self) -> str:
        cid = f"hrefs-{next(_numbers)}"
        body = ('<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
                "<D:set><D:prop><C:supported-calendar-component-set><C:comp name=\"VTODO\"/>"
                "</C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>")
        response = self.send("MKCALENDAR", f"{self.home}{cid}/", data=body,
                             headers={"Content-Type": "application/xml"})
        assert response.status_code in (200, 201), response.status_code
        return cid

    def listing(self, cid: str) -> dict[str, str]:
        """The server's own hrefs and ETags, as written in its multistatus."""
        body = b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>'
        response = self.send("PROPFIND", f"{self.home}{cid}/", data=body,
                             headers={"Depth": "1", "Content-Type": "application/xml"})
        found = {}
        for node in etree.fromstring(response.content).iter("{DAV:}response"):
            etag = node.findtext(".//{DAV:}getetag")
            href = node.findtext("{DAV:}href").strip()
            if etag and not href.endswith("/"):  # members, not the collection itself
                found[href] = etag
        return found

    def calendar(self, **options: object) -> CalDAVCalendar:
        return CalDAVCalendar(url=self.url, username=self.username, password=self.password, timeout=10.0,
                              registry=ReaderRegistry(), **options)


@pytest.fixture(scope="module", params=["radicale", "xandikos"])
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    root = Path(tempfile.mkdtemp(prefix=f"hrefs-{request.param}-"))
    try:
        if request.param == "radicale":
            running = start_radicale(root)
            name = running.instance.username
            yield Server("radicale", running.url, name, running.instance.password, f"/{name}/")
        else:
            running = start_xandikos(root)
            yield Server("xandikos", running.url, "", "", "/user/calendars/")
        running.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("sync", ["auto", "off", "memo off"])
def test_hrefs__byte_for_byte_and_they_reach_the_resource(server: Server, sync: str) -> None:
    cid = server.new_collection()
    titles = {}
    for n, name in enumerate(NAMES):
        title = f"Encoded name {n}"
        titles[title] = name
        response = server.send("PUT", f"{server.home}{cid}/{name}", data=vtodo(f"enc-{n}", title).encode(),
                               headers={"Content-Type": "text/calendar; charset=utf-8"})
        assert response.status_code in (201, 204), (name, response.status_code)
    calendar = server.calendar(**({"parse_cache_items": 0} if sync == "memo off" else {"sync": sync}))
    listed = server.listing(cid)
    for _read in range(2):  # the first read, then the incremental one
        items = calendar.fetch(kind=Kind.TASK, collection_ids=[cid]).items
        assert sorted(item.title for item in items) == sorted(titles)
        for item in items:
            # What the server listed, byte for byte, and the very name it was stored under.
            assert item.href in listed, (item.href, sorted(listed))
            assert item.etag == listed[item.href]
            assert unquote(item.href) == unquote(f"{server.home}{cid}/{titles[item.title]}")
    by_title = {item.title: item for item in items}
    # `%2541` is the name `pct%41`, not `pctA`.
    assert by_title["Encoded name 0"].href != f"{server.home}{cid}/pct%41.ics"
    for title, item in by_title.items():
        got = server.send("GET", item.href)
        assert got.status_code == 200 and f"SUMMARY:{title}" in got.text
        edited = vtodo(f"enc-{NAMES.index(titles[title])}", f"{title} edited")
        put = server.send("PUT", item.href, data=edited.encode(),
                          headers={"Content-Type": "text/calendar; charset=utf-8", "If-Match": item.etag})
        assert put.status_code in (201, 204), (item.href, put.status_code)
    # Each conditional write replaced its own resource: no new ones, every title edited.
    assert len(server.listing(cid)) == len(NAMES)
    after = calendar.fetch(kind=Kind.TASK, collection_ids=[cid]).items
    assert sorted(item.title for item in after) == sorted(f"{t} edited" for t in titles)
