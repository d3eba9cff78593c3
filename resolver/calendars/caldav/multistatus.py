"""WebDAV request bodies, the multistatus answer read incrementally with its hrefs kept raw, and the
one rule for what an answer's status means (`answered`).

The bodies are built with lxml. Answers are parsed here, not by the caldav
library: the library normalises URLs (it decoded `%2541` into `%41`, a
different resource name), while the resolver promises the server's href byte
for byte. A multistatus is fed to a pull parser chunk by chunk as it arrives
(http.py), and each `<D:response>` is turned into a small `Response` and
dropped from the tree at once, so the tree never holds more than one
response, and the resolution's deadline is looked at after each one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol, Sequence

from lxml import etree

from resolver import deadline
from resolver.calendars.ical import Window
from resolver.domain.codes import http_reason
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import Kind

DAV = "DAV:"
CALDAV = "urn:ietf:params:xml:ns:caldav"
_NS = {"D": DAV, "C": CALDAV}

GETETAG = f"{{{DAV}}}getetag"
CALENDAR_DATA = f"{{{CALDAV}}}calendar-data"
RESOURCETYPE = f"{{{DAV}}}resourcetype"
DISPLAYNAME = f"{{{DAV}}}displayname"
PRINCIPAL = f"{{{DAV}}}current-user-principal"
HOME_SET = f"{{{CALDAV}}}calendar-home-set"
CALENDAR = f"{{{CALDAV}}}calendar"
SYNC_TOKEN = f"{{{DAV}}}sync-token"
GETLASTMODIFIED = f"{{{DAV}}}getlastmodified"
# CalendarServer's collection tag (not an RFC): changes whenever a member does, where the server keeps it so.
CALSERVER = "http://calendarserver.org/ns/"
GETCTAG = f"{{{CALSERVER}}}getctag"


def _xml(root: etree._Element) -> bytes:
    return etree.tostring(root, encoding="utf-8", xml_declaration=True)


def _el(parent: etree._Element, tag: str, text: str | None = None, **attrib: str) -> etree._Element:
    child = etree.SubElement(parent, tag, attrib)
    if text is not None:
        child.text = text
    return child


def _prop(parent: etree._Element, *tags: str) -> None:
    prop = _el(parent, f"{{{DAV}}}prop")
    for tag in tags:
        _el(prop, tag)


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def query_body(kind: Kind, window: Window, *, time_range: bool = True, data: bool = True,
               stamp: bool = False) -> bytes:
    """calendar-query asking for etag (and data), with only the filters servers evaluate cheaply.

    A filter may only ever return too much, never too little: the client
    re-checks every resource, but cannot see what the server left out.

    Tasks: the VTODO comp-filter alone; closed tasks are dropped on the
    client. A `COMPLETED is-not-defined` prop-filter made Radicale parse every
    item in Python: 455 ms against 107 ms without it at 1,000 tasks
    (docs/performance.md). Events: those with an occurrence in the window, so
    years of past events stay on the server. `time_range=False` asks for
    every VEVENT instead, for servers whose time-range leaves out live
    events (Xandikos 0.4 misses a series whose only upcoming occurrence is an
    RDATE, or an override moved into the window from a series that has
    ended), and for incremental reads, whose memo must know every event.
    Either way the window is applied again on the client (`ical.items_from`).
    `data=False` asks for ETags only (the listing of the etag-only path).
    `stamp=True` asks for DAV:getlastmodified too: where there is no sync
    report, a resource deleted and put again under an ETag it had before
    (SOGo counts ETags per href) shows only in its modification time.
    """
    root = etree.Element(f"{{{CALDAV}}}calendar-query", nsmap=_NS)
    _prop(root, GETETAG, *([CALENDAR_DATA] if data else []), *([GETLASTMODIFIED] if stamp else []))
    outer = _el(_el(root, f"{{{CALDAV}}}filter"), f"{{{CALDAV}}}comp-filter", name="VCALENDAR")
    if kind is Kind.TASK:
        _el(outer, f"{{{CALDAV}}}comp-filter", name="VTODO")
    else:
        inner = _el(outer, f"{{{CALDAV}}}comp-filter", name="VEVENT")
        if time_range:
            _el(inner, f"{{{CALDAV}}}time-range", start=_utc(window.start), end=_utc(window.end))
    return _xml(root)


def sync_body(token: str, *, data: bool = False) -> bytes:
    """sync-collection (RFC 6578) from `token` ("" for the initial sync, which lists every member).

    A later sync asks for ETags only: data comes with one calendar-multiget
    for the hrefs the memo does not hold, so a resource edited and edited
    back, or held for the other kind, costs no download. The initial sync
    asks for the data too, where the server sends it (Radicale and Xandikos
    do): the first token and every member in one round trip.
    """
    root = etree.Element(f"{{{DAV}}}sync-collection", nsmap=_NS if data else {"D": DAV})
    _el(root, SYNC_TOKEN, token)
    _el(root, f"{{{DAV}}}sync-level", "1")
    _prop(root, GETETAG, *([CALENDAR_DATA] if data else []))
    return _xml(root)


def multiget_body(hrefs: Sequence[str]) -> bytes:
    """calendar-multiget for these hrefs, sent exactly as the server listed them."""
    root = etree.Element(f"{{{CALDAV}}}calendar-multiget", nsmap=_NS)
    _prop(root, GETETAG, CALENDAR_DATA)
    for href in hrefs:
        _el(root, f"{{{DAV}}}href", href)
    return _xml(root)


def propfind_body(*tags: str) -> bytes:
    root = etree.Element(f"{{{DAV}}}propfind", nsmap=_NS)
    _prop(root, *tags)
    return _xml(root)


@dataclass(frozen=True, slots=True)
class Prop:
    """One property as answered: its text, the hrefs inside it, the tags of its children."""

    text: str | None
    hrefs: tuple[str, ...] = ()
    children: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Response:
    """One `<D:response>`: its hrefs as written (stripped of surrounding blanks), status, found props."""

    hrefs: tuple[str, ...]
    status: int | None
    props: dict[str, Prop] = field(default_factory=dict)

    @property
    def href(self) -> str:
        return self.hrefs[0] if self.hrefs else ""

    def text(self, tag: str) -> str | None:
        prop = self.props.get(tag)
        return prop.text if prop is not None else None


@dataclass
class Multistatus:
    responses: list[Response]
    sync_token: str | None = None
    # The answer's Date header: the server's clock when it listed (stamps.settled).
    served: str | None = None


def _status(text: str | None) -> int | None:
    """`HTTP/1.1 200 OK` -> 200."""
    if not text:
        return None
    parts = text.split()
    if len(parts) >= 2 and parts[1].isdigit():
        return int(parts[1])
    return None


_HREF = f"{{{DAV}}}href"
_STATUS = f"{{{DAV}}}status"
_PROPSTAT = f"{{{DAV}}}propstat"
_PROP = f"{{{DAV}}}prop"
_NO_CHILDREN: frozenset[str] = frozenset()


def _response(element: etree._Element) -> Response:
    """One pass over the response's children (this runs once per resource: it is kept cheap)."""
    hrefs: list[str] = []
    status = None
    props: dict[str, Prop] = {}
    for child in element:
        tag = child.tag
        if tag == _HREF:
            hrefs.append((child.text or "").strip())
        elif tag == _STATUS:
            status = _status(child.text)
        elif tag == _PROPSTAT:
            found = None
            ok = False
            for part in child:
                if part.tag == _STATUS:
                    ok = _status(part.text) == 200
                elif part.tag == _PROP:
                    found = part
            if not ok or found is None:
                continue
            for prop in found:
                name = prop.tag
                if not isinstance(name, str):
                    continue  # a comment or processing instruction
                if len(prop):
                    props[name] = Prop(
                        text=prop.text,
                        hrefs=tuple((h.text or "").strip() for h in prop.iter(_HREF)),
                        children=frozenset(c.tag for c in prop if isinstance(c.tag, str)),
                    )
                else:
                    props[name] = Prop(prop.text)
    if status is None and props:
        status = 200  # the status of its found properties; None: nothing found, no status of its own
    return Response(hrefs=tuple(hrefs), status=status, props=props)


class MultistatusParser:
    """Feed the body chunk by chunk; each finished `<D:response>` is read, then dropped from the tree."""

    def __init__(self) -> None:
        # No entities resolved, no DTD, no network: a hostile body is only text.
        self._parser = etree.XMLPullParser(
            events=("end",), tag=(f"{{{DAV}}}response", SYNC_TOKEN),
            resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
        )
        self.result = Multistatus(responses=[])
        self._root_checked = False

    def feed(self, chunk: bytes) -> None:
        try:
            self._parser.feed(chunk)
        except etree.LxmlError as err:
            raise CalendarUnavailable(details={"reason": "bad_response"}) from err
        self._drain()

    def close(self) -> Multistatus:
        try:
            root = self._parser.close()
        except etree.LxmlError as err:
            raise CalendarUnavailable(details={"reason": "bad_response"}) from err
        self._drain()
        if root is None or root.tag != f"{{{DAV}}}multistatus":
            raise CalendarUnavailable(details={"reason": "bad_response"})
        return self.result

    def _drain(self) -> None:
        for _event, element in self._parser.read_events():
            if element.tag == SYNC_TOKEN:
                parent = element.getparent()
                if parent is not None and parent.tag == f"{{{DAV}}}multistatus":
                    self.result.sync_token = (element.text or "").strip() or None
                continue
            self.result.responses.append(_response(element))
            # Drop what was read: the tree stays one response deep.
            element.clear()
            parent = element.getparent()
            if parent is not None:
                while element.getprevious() is not None:
                    del parent[0]
            if deadline.expired():
                raise CalendarUnavailable(details={"reason": "timeout"})


class Answer(Protocol):
    """An HTTP answer as http.py reads it: its status, and its multistatus when it parsed as one."""

    @property
    def status(self) -> int: ...

    @property
    def multistatus(self) -> Multistatus | None: ...


class Reporter(Protocol):
    def report(self, path: str, body: bytes, *, depth: int | None) -> Answer: ...


def answered(answer: Answer, *, required: bool = True) -> Multistatus | None:
    """The one rule for a multistatus answer's status, for every request the reader sends.

    401 is the credentials (`unauthorized`), whatever was asked. A required
    answer (discovery, a listing, a query, a multiget) must be a multistatus:
    403 is this address refusing access whoever asks (`forbidden`: Radicale's
    answer for a path that is not a collection of the user), which a new
    password would not change, and anything else makes the calendar
    unavailable. An optional one (a sync report, the sync-token or getctag
    property) is a 207 multistatus or nothing (None): the caller reads
    another way.
    """
    if answer.status == 401:
        raise CalendarUnavailable(message="The calendar server refused our credentials.",
                                  details={"reason": "unauthorized"})
    if not required:
        return answer.multistatus if answer.status == 207 else None
    if answer.status == 403:
        raise CalendarUnavailable(message="The calendar server refused access to this address.",
                                  details={"reason": "forbidden"})
    if answer.multistatus is None:
        raise CalendarUnavailable(details={"reason": http_reason(answer.status)})
    return answer.multistatus


def required(answer: Answer) -> Multistatus:
    """The answer's multistatus, which must be one (`answered`)."""
    found = answered(answer)
    assert found is not None
    return found


def report(transport: Reporter, path: str, body: bytes, *, depth: int | None) -> Multistatus:
    """A REPORT that must answer with a multistatus; anything else makes the calendar unavailable."""
    return required(transport.report(path, body, depth=depth))
