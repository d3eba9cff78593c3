"""A stateful CalDAV server of our own on loopback, with the quirks of real servers switchable.

Unlike `hostile_dav.py` (one canned answer), this one keeps a collection
that a test changes between reads (`put`, `delete`) and answers the
dialogue the reader uses: discovery PROPFINDs, a Depth 1 PROPFIND of the
collection, sync-collection (initial and from a token, with 404 entries for
what was deleted), calendar-query (by component, with or without data) and
calendar-multiget, and GET. Every request is logged (`seen`).

Quirks, as seen on real servers (issue 27, docs/servers.md):

- `etags="sogo"`: an ETag counts the versions of one href, `"gcs00000000"`
  for the first PUT, `"gcs00000001"` for the next, and starts over after a
  DELETE, so a DELETE + PUT on the same href gives back an ETag the reader
  may have seen with other content. The default gives every PUT a new ETag.
- `sync_hrefs="decoded"`: the sync report lists hrefs decoded once
  (`pct%41.ics` for the resource listed elsewhere as `pct%2541.ics`,
  `with space.ics` for `with%20space.ics`), as SOGo 5.8 does.
- `sync_data=False`: a sync-collection asking for calendar-data answers it
  with a 404 propstat (DAViCal 1.1.12).
- `token_property="uri"`: a Depth 0 PROPFIND of the collection answers its
  DAV:sync-token (the token a sync would give now); `"seconds"`: it answers
  the server's clock in seconds, not a URI, as SOGo 5.8 does. By default the
  property is not given.
- `ctag="counter"`: a Depth 0 PROPFIND of the collection answers CS:getctag,
  which moves with every change; `"puts"`: it moves on a PUT only, not on a
  DELETE (a ctag that does not witness every change); `"stuck"`: it never
  moves. By default the property is not given.
- `delay`: seconds each answer waits before it is computed (reads that overlap).
- `frozen_clock=True`: the server's clock does not move (every write falls in
  one second, as a quick DELETE + PUT does on a real server), and the Date
  header of each answer is that clock. Otherwise each write is a second
  after the last, long before the real Date the answers carry.

Resource names are stored decoded; the listing form of an href is the
collection path plus the name percent-encoded (RFC 3986 unreserved kept), and
a request path is decoded once to find its resource, as servers do.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import quote, unquote
from xml.sax.saxutils import escape

from lxml import etree

from tests.support.loopback_http import XML, LoopbackHTTP, send

USER = "alice"
PASSWORD = "scripted-test-secret"
COLLECTION = f"/dav/{USER}/work/"
_DAV, _CALDAV = "DAV:", "urn:ietf:params:xml:ns:caldav"
_HEAD = ('<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" '
         'xmlns:C="urn:ietf:params:xml:ns:caldav">')


def vtodo(uid: str, title: str) -> str:
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject//scripted dav//EN\r\nBEGIN:VTODO\r\n"
            f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:{title}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")


def vevent(uid: str, title: str) -> str:
    """An event far in the future, inside any horizon long enough to reach it (`horizon_days`)."""
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject//scripted dav//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20990105T090000Z\r\nDTEND:20990105T100000Z\r\n"
            f"SUMMARY:{title}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


@dataclass
class Stored:
    etag: str
    text: str
    modified: int  # the server's clock when last written


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    report: str | None  # sync-collection, calendar-query, calendar-multiget
    authorized: bool
    depth: str | None = None  # the Depth header as sent
    token: str | None = None  # a sync-collection's DAV:sync-token as sent


def _http_date(clock: int) -> str:
    """The scripted server's clock (seconds since 2026-01-01, under an hour) as an HTTP date."""
    return f"Thu, 01 Jan 2026 00:{clock // 60:02d}:{clock % 60:02d} GMT"


def listing_href(name: str) -> str:
    return COLLECTION + quote(name, safe="-._~!$&'()*+,;=:@")


class ScriptedDAV:
    """One collection at COLLECTION on 127.0.0.1 (module docstring)."""

    def __init__(self, *, etags: str = "unique", sync_hrefs: str = "escaped", sync_data: bool = True,
                 frozen_clock: bool = False, token_property: str | None = None, ctag: str | None = None,
                 delay: float = 0.0) -> None:
        self.etags, self.sync_hrefs, self.sync_data = etags, sync_hrefs, sync_data
        self.ctag, self.delay = ctag, delay
        self._ctag_moves = 0
        self.token_property = token_property
        self.frozen_clock = frozen_clock
        self.store: dict[str, Stored] = {}
        self.log: list[tuple[int, str]] = []  # (change number, resource name)
        self.seen: list[Request] = []
        self._versions: dict[str, int] = {}
        self._serial = 0
        self._clock = 0
        self._epoch = 0
        # PROPFIND paths answered 403 (Radicale, for a path not the user's), and an HTML page at
        # /.well-known/caldav (SOGo without its Apache front).
        self.forbidden: set[str] = set()
        # The collection's DAV:displayname, as the server sends it (a hostile one: control characters).
        self.display_name = "Work"
        self.well_known_html = False
        self._lock = threading.Lock()
        self._http = LoopbackHTTP(self._handle, date=self._date)
        self.port = self._http.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/dav/{USER}/"

    def stop(self) -> None:
        self._http.stop()

    def _date(self) -> str | None:
        """The Date of every answer: the frozen clock's, else the real time (None)."""
        return _http_date(self._clock) if self.frozen_clock else None

    # -- what a test does to the collection -------------------------------------

    def put(self, name: str, text: str) -> str:
        with self._lock:
            if self.etags == "sogo":
                version = self._versions.get(name, -1) + 1
                self._versions[name] = version
                etag = f'"gcs{version:08d}"'
            else:
                self._serial += 1
                etag = f'"e{self._serial}"'
            self._clock += 0 if self.frozen_clock else 1
            self._ctag_moves += self.ctag in ("counter", "puts")
            self.store[name] = Stored(etag, text, self._clock)
            self.log.append((len(self.log) + 1, name))
            return etag

    def delete(self, name: str) -> None:
        with self._lock:
            del self.store[name]
            self._versions.pop(name, None)
            self._ctag_moves += self.ctag == "counter"
            self._clock += 0 if self.frozen_clock else 1
            self.log.append((len(self.log) + 1, name))

    def rewrite(self, name: str, text: str) -> None:
        """New content under the same ETag (a server that does not change it), listed as changed."""
        with self._lock:
            self.store[name].text = text
            self.log.append((len(self.log) + 1, name))

    def advance(self, seconds: int) -> None:
        """The frozen clock (and the Date of every answer) moves on, nothing written."""
        with self._lock:
            self._clock += seconds

    def refuse_tokens(self) -> None:
        """Every token given so far is refused from now on (403 valid-sync-token), as after a server restore."""
        with self._lock:
            self._epoch += 1

    def get(self, href: str) -> Stored | None:
        """The resource a request for `href` reaches (decoded once, as a server does)."""
        if not href.startswith(COLLECTION):
            return None
        return self.store.get(unquote(href[len(COLLECTION):]))

    def reports(self, name: str | None = None) -> list[Request]:
        return [r for r in self.seen if r.method == "REPORT" and (name is None or r.report == name)]

    # -- answering ----------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        root = etree.fromstring(body) if body else None
        report = etree.QName(root).localname if root is not None and handler.command == "REPORT" else None
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            token = root.findtext(f"{{{_DAV}}}sync-token") if report == "sync-collection" else None
            self.seen.append(Request(handler.command, handler.path, report, "Authorization" in handler.headers,
                                     handler.headers.get("Depth"), token))
            if handler.command == "GET":
                found = self.get(handler.path)
                if found is None:
                    return self._send(handler, 404, b"", "text/plain")
                return self._send(handler, 200, found.text.encode(), "text/calendar", etag=found.etag)
            if handler.command == "PROPFIND" and handler.path in self.forbidden:
                return self._send(handler, 403, b"Access to this resource is forbidden", "text/plain")
            if handler.command == "PROPFIND" and handler.path.startswith("/.well-known/caldav"):
                if self.well_known_html:
                    return self._send(handler, 200, b"<html><body>SOGo</body></html>", "text/html")
                return self._send(handler, 301, b"", "text/plain", location=f"/dav/{USER}/")
            if handler.command == "PROPFIND":
                answer = self._propfind(handler.path, handler.headers.get("Depth", "0"))
            elif report == "sync-collection":
                answer = self._sync(root)
            elif report == "calendar-multiget":
                answer = self._multiget(root)
            else:
                answer = self._query(root)
        if answer is None:
            return self._send(handler, 403, b"<D:error xmlns:D='DAV:'><D:valid-sync-token/></D:error>")
        self._send(handler, 207, answer.encode())

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str = XML,
              etag: str | None = None, location: str | None = None) -> None:
        headers = {name: value for name, value in (("Location", location), ("ETag", etag)) if value}
        send(handler, status, body, content_type, headers)

    def _propfind(self, path: str, depth: str) -> str:
        home = f"/dav/{USER}/"
        out = [_HEAD]
        if path.rstrip("/") == COLLECTION.rstrip("/"):
            token = {"uri": self._token(), "seconds": str(1_796_000_000 + self._clock)}.get(
                self.token_property or "", "")
            ctag = f'<CS:getctag xmlns:CS="http://calendarserver.org/ns/">ctag-{self._ctag_moves}</CS:getctag>'
            out.append(_ok(COLLECTION, "<D:resourcetype><D:collection/><C:calendar/></D:resourcetype>"
                           + (f"<D:sync-token>{token}</D:sync-token>" if token and depth == "0" else "")
                           + (ctag if self.ctag and depth == "0" else "")))
            if depth != "0":
                out += [_ok(listing_href(n), self._props(s, {"getlastmodified"})[0])
                        for n, s in sorted(self.store.items())]
        else:
            out.append(_ok(path, f"<D:current-user-principal><D:href>{home}</D:href></D:current-user-principal>"
                                 f"<C:calendar-home-set><D:href>{home}</D:href></C:calendar-home-set>"
                                 "<D:resourcetype><D:collection/></D:resourcetype>"))
            if depth != "0":
                out.append(_ok(COLLECTION, "<D:resourcetype><D:collection/><C:calendar/></D:resourcetype>"
                                           f"<D:displayname>{_text(self.display_name)}</D:displayname>"))
        return "".join(out) + "</D:multistatus>"

    def _props(self, stored: Stored, asked: set[str]) -> tuple[str, str]:
        """(found, missing) property XML for one resource."""
        found = f"<D:getetag>{escape(stored.etag)}</D:getetag>"
        missing = ""
        if "getlastmodified" in asked:
            found += f"<D:getlastmodified>{_http_date(stored.modified)}</D:getlastmodified>"
        if "calendar-data" in asked:
            found += f"<C:calendar-data>{escape(stored.text)}</C:calendar-data>"
        return found, missing

    def _query(self, root: etree._Element) -> str:
        asked = _asked(root)
        filters = [e.get("name") for e in root.iter(f"{{{_CALDAV}}}comp-filter")]
        comp = next((f for f in filters if f != "VCALENDAR"), None)
        out = [_HEAD]
        for name, stored in sorted(self.store.items()):
            if comp is None or f"BEGIN:{comp}" in stored.text:
                out.append(_ok(listing_href(name), self._props(stored, asked)[0]))
        return "".join(out) + "</D:multistatus>"

    def _multiget(self, root: etree._Element) -> str:
        asked = _asked(root)
        out = [_HEAD]
        for element in root.iter(f"{{{_DAV}}}href"):
            href = element.text or ""
            stored = self.get(href)
            if stored is None:
                out.append(f"<D:response><D:href>{escape(href)}</D:href>"
                           "<D:status>HTTP/1.1 404 Not Found</D:status></D:response>")
            else:
                out.append(_ok(href, self._props(stored, asked)[0]))
        return "".join(out) + "</D:multistatus>"

    def _sync_href(self, name: str) -> str:
        return COLLECTION + name if self.sync_hrefs == "decoded" else listing_href(name)

    def _sync(self, root: etree._Element) -> str | None:
        token = root.findtext(f"{{{_DAV}}}sync-token") or ""
        epoch, since = (int(part) for part in token.rsplit("/", 2)[1:]) if token else (self._epoch, 0)
        if epoch != self._epoch or since > len(self.log):
            return None
        asked = _asked(root)
        if not self.sync_data:
            asked.discard("calendar-data")
        changed = sorted({name for number, name in self.log if number > since})
        out = [_HEAD]
        for name in changed:
            stored = self.store.get(name)
            if stored is None:
                if since:
                    out.append(f"<D:response><D:href>{escape(self._sync_href(name))}</D:href>"
                               "<D:status>HTTP/1.1 404 Not Found</D:status></D:response>")
                continue
            found, _ = self._props(stored, asked)
            missing = ("<D:propstat><D:prop><C:calendar-data/></D:prop><D:status>HTTP/1.1 404 Not Found"
                       "</D:status></D:propstat>") if not self.sync_data and "calendar-data" in _asked(root) else ""
            out.append(_ok(self._sync_href(name), found, extra=missing))
        out.append(f"<D:sync-token>{self._token()}</D:sync-token>")
        return "".join(out) + "</D:multistatus>"

    def _token(self) -> str:
        return f"http://scripted.example/sync/{self._epoch}/{len(self.log)}"


def _text(value: str) -> str:
    """XML character data that survives parsing as it is: CR as a reference (a raw one reads as LF)."""
    return escape(value).replace("\r", "&#13;")


def _asked(root: etree._Element) -> set[str]:
    prop = root.find(f"{{{_DAV}}}prop")
    return {etree.QName(child).localname for child in prop} if prop is not None else set()


def _ok(href: str, props: str, extra: str = "") -> str:
    return (f"<D:response><D:href>{escape(href)}</D:href><D:propstat><D:prop>{props}</D:prop>"
            f"<D:status>HTTP/1.1 200 OK</D:status></D:propstat>{extra}</D:response>")
