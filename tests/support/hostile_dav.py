"""A scripted CalDAV server of our own, for peers that misbehave on purpose.

Two of them on loopback stand for two origins: `127.0.0.1` (the account's
server) and `127.0.0.2` (somewhere else; Linux answers on all of 127/8).
Each logs every request it receives, with whether it carried credentials, so
a test can assert that nothing, and no password, ever reached the other one.
Both answer a minimal but real CalDAV dialogue: discovery (principal, home
set, the home's listing), and any REPORT with one multistatus listing the
members of the collection with their ETags and data (with a sync token, so the
reader's initial sync accepts it). A test changes what is answered by setting
attributes (`principal`, `home_set`, `collection_href`, `members`,
`redirect`, `trickle`, `body_bytes`, `drops`).
"""
from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from xml.sax.saxutils import escape

from tests.support.loopback_http import LoopbackHTTP, send, send_head

USER = "alice"
PASSWORD = "hostile-test-secret"


def vtodo(uid: str, title: str) -> str:
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//lifeproject//hostile dav//EN\r\nBEGIN:VTODO\r\n"
            f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:{title}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")


@dataclass
class Seen:
    method: str
    path: str
    authorized: bool


@dataclass
class Member:
    href: str
    uid: str
    title: str

    @property
    def etag(self) -> str:
        return f'"{abs(hash((self.href, self.title))) % 10**8}"'


def _response(href: str, props: str) -> str:
    return (f"<D:response><D:href>{escape(href)}</D:href><D:propstat><D:prop>{props}</D:prop>"
            "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")


class HostileDAV:
    """One scripted server on `host`; attributes say what it answers (module docstring)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self.reset()
        self._http = LoopbackHTTP(self._handle, host=host)
        self.port = self._http.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def reset(self) -> None:
        self.principal = f"/{USER}/"
        self.home_set: str | None = f"/{USER}/"
        self.collection_href = f"/{USER}/work/"
        self.members: list[Member] = [Member(f"/{USER}/work/plain.ics", "plain-1", "Plain task")]
        # path -> Location: answered with a 307 instead.
        self.redirect: dict[str, str] = {}
        # Seconds between the bytes of a REPORT body (None: all at once).
        self.trickle: float | None = None
        # A REPORT body of this many bytes (padding inside a valid multistatus).
        self.body_bytes: int | None = None
        # The next this-many REPORT or PROPFIND connections are closed without an answer.
        self.drops = 0
        with self._lock:
            self.seen = []

    def stop(self) -> None:
        self._http.stop()

    def settings(self, **overrides: Any) -> dict[str, Any]:
        values: dict[str, Any] = {"CALDAV_URL": self.url, "CALDAV_USERNAME": USER, "CALDAV_PASSWORD": PASSWORD,
                                  "CALDAV_TIMEOUT": 2.0, "EVENT_HORIZON_DAYS": 90}
        values.update(overrides)
        return values

    # -- answering -------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        with self._lock:
            self.seen.append(Seen(handler.command, handler.path, "Authorization" in handler.headers))
            drop = self.drops > 0
            if drop:
                self.drops -= 1
        if drop:
            handler.close_connection = True
            try:
                handler.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if handler.path in self.redirect:
            send(handler, 307, b"", headers={"Location": self.redirect[handler.path]})
            return
        if handler.command == "PROPFIND":
            send(handler, 207, self._propfind(handler.path, handler.headers.get("Depth", "0")).encode())
            return
        if handler.command == "REPORT":
            self._report(handler, body)
            return
        send(handler, 404, b"")

    def _propfind(self, path: str, depth: str) -> str:
        out = ['<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" '
               'xmlns:C="urn:ietf:params:xml:ns:caldav">']
        # The requested resource's own properties, at any depth, as a real
        # server answers them: a Depth 1 PROPFIND on the principal carries
        # its home set too.
        props = f"<D:current-user-principal><D:href>{escape(self.principal)}</D:href></D:current-user-principal>"
        if self.home_set is not None and path.rstrip("/") == self.principal.rstrip("/"):
            props += f"<C:calendar-home-set><D:href>{escape(self.home_set)}</D:href></C:calendar-home-set>"
        out.append(_response(path, props + "<D:resourcetype><D:collection/></D:resourcetype>"))
        if depth != "0":
            out.append(_response(self.collection_href, "<D:resourcetype><D:collection/><C:calendar/>"
                                                       "</D:resourcetype><D:displayname>Work</D:displayname>"))
        out.append("</D:multistatus>")
        return "".join(out)

    def _report(self, handler: BaseHTTPRequestHandler, request: bytes) -> None:
        parts = ['<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" '
                 'xmlns:C="urn:ietf:params:xml:ns:caldav">']
        for member in self.members:
            parts.append(_response(member.href, f"<D:getetag>{escape(member.etag)}</D:getetag>"
                                                f"<C:calendar-data>{escape(vtodo(member.uid, member.title))}"
                                                "</C:calendar-data>"))
        tail = "<D:sync-token>http://hostile.example/sync/1</D:sync-token></D:multistatus>"
        head = "".join(parts).encode()
        if self.body_bytes is not None:
            # Padding the parser must read through: an XML comment between responses.
            pad = max(0, self.body_bytes - len(head) - len(tail) - 7)
            body = head + b"<!--" + b"x" * pad + b"-->" + tail.encode()
        else:
            body = head + tail.encode()
        if self.trickle is None:
            send(handler, 207, body)
            return
        send_head(handler, 207, len(body))
        try:
            for byte in body:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(self.trickle)
        except OSError:
            pass  # the client gave up: what it should do


@dataclass
class Origins:
    """The account's server and another origin."""

    home: HostileDAV
    other: HostileDAV
    stopped: list[HostileDAV] = field(default_factory=list)

    def credentials_sent_to_other(self) -> list[Seen]:
        return [seen for seen in self.other.seen if seen.authorized]
