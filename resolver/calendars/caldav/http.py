"""The reader's HTTP client: one origin, bodies streamed under the deadline and a byte bound.

Rules every request follows (README, "The CalDAV server's origin"):

- It goes to the scheme, host and port of the account's URL, and nowhere
  else: a path is the only thing callers pass. Redirects are not followed by
  requests; a same-origin one is followed here (at most MAX_REDIRECTS), one to
  another origin ends the read with reason `foreign_origin`. The credentials
  are attached per request, never to the session, and the environment is not
  consulted (no proxy, no .netrc that could change where they go).
- The URL is sent as the server spelled the path: requests would re-quote it
  (turning `%41` into `A`, another resource name), so the prepared URL is
  set back to ours.
- The body is read as a stream, chunk by chunk: each read waits at most what
  is left of the request's deadline (or of the exchange's own bound outside
  one), and the watchdog (resolver/watchdog.py) shuts the socket down when that end
  passes, so a server trickling a body, a chunk-size line, its extensions or
  the trailers one byte at a time ends at the deadline with reason
  `timeout`; more than `max_bytes` decoded bytes ends it with
  `response_too_large`; a multistatus is parsed as it arrives
  (multistatus.py), so memory stays bounded by the cap, not the body.
- A connection dropped or refused on these idempotent requests (PROPFIND,
  REPORT) is tried once more after RETRY_BACKOFF, if the deadline leaves room.
- The header phase (connect, status line, headers) is under the same end
  (resolver/watchdog.py), and a person's account connects only to an address checked
  on that connection (connections.py, addresses.py): anything else ends the
  read with reason `address_not_allowed` before a byte is sent.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import requests
import urllib3.exceptions

from resolver import watchdog
from resolver.watchdog import LookupTimedOut
from resolver.domain import deadline
from resolver.calendars.caldav.account import CalDAVAccount, Origin
from resolver.calendars.caldav.addresses import AddressRefused
from resolver.calendars.caldav.connections import PinnedAdapter
from resolver.calendars.caldav.multistatus import Multistatus, MultistatusParser
from resolver.domain.errors import CalendarUnavailable

logger = logging.getLogger("resolver.calendars")

MAX_REDIRECTS = 5
RETRY_BACKOFF = 0.2
CHUNK_BYTES = 64 * 1024
REDIRECTS = (301, 302, 303, 307, 308)
# Outside a resolution (a collection listing, a command's check) one exchange
# is still bounded: by this many read timeouts.
UNBOUNDED_EXCHANGE_TIMEOUTS = 6


class _Dropped(Exception):
    """The connection was refused or dropped: worth one more try."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    # The parsed multistatus of a 200/207 answer, when one was asked for.
    multistatus: Multistatus | None = None
    # The path that answered (after same-origin redirects).
    path: str = ""


def unavailable(reason: str, message: str | None = None, **details: object) -> CalendarUnavailable:
    return CalendarUnavailable(message, details={"reason": reason, **details}) if message else \
        CalendarUnavailable(details={"reason": reason, **details})


NOT_ALLOWED_MESSAGE = ("The calendar server's address is not one this site connects to "
                       "(its name leads to no public address).")


def address_not_allowed() -> CalendarUnavailable:
    """The same words for a private name and an unknown one: no map of the site's network."""
    return unavailable("address_not_allowed", NOT_ALLOWED_MESSAGE)


class DAVClient:
    """HTTP for one account. Shared by the threads of a process: one requests session per thread."""

    def __init__(self, account: CalDAVAccount) -> None:
        self.account = account
        self.origin: Origin = account.origin
        self._local = threading.local()
        self._lock = threading.Lock()
        self._sessions: list[requests.Session] = []

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            session.trust_env = False  # no proxies or .netrc from the environment
            session.headers["Accept-Encoding"] = "identity"
            adapter = PinnedAdapter(check_addresses=self.account.check_addresses)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def close(self) -> None:
        """Close every thread's connections (the reader is dropped, or the server restarted)."""
        with self._lock:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            session.close()
        self._local = threading.local()


@dataclass
class Transport:
    """One fetch's use of a client: its timeout and byte bound, and the round trips it made."""

    client: DAVClient
    timeout: float
    max_bytes: int
    trips: int = field(default=0)

    @property
    def origin(self) -> Origin:
        return self.client.origin

    def propfind(self, path: str, body: bytes, *, depth: int) -> Answer:
        return self.exchange("PROPFIND", path, body, depth=depth)

    def report(self, path: str, body: bytes, *, depth: int | None) -> Answer:
        return self.exchange("REPORT", path, body, depth=depth)

    def exchange(self, method: str, path: str, body: bytes, *, depth: int | None) -> Answer:
        """Send one idempotent request (retried once when dropped) and read its multistatus."""
        started = time.monotonic()
        own_end = started + self.timeout * UNBOUNDED_EXCHANGE_TIMEOUTS
        for attempt in (1, 2):
            try:
                return self._exchange(method, path, body, depth=depth, own_end=own_end)
            except _Dropped as err:
                left = self._left(own_end)
                if attempt == 2 or left <= RETRY_BACKOFF:
                    logger.warning("caldav %s %s failed: unreachable (%s)", method, path, err)
                    raise unavailable("unreachable") from err.__cause__
                logger.info("caldav %s %s: connection dropped (%s), trying once more", method, path, err)
                time.sleep(RETRY_BACKOFF)
        raise AssertionError("unreachable")  # pragma: no cover

    def _left(self, own_end: float) -> float:
        left = deadline.remaining()
        mine = own_end - time.monotonic()
        return mine if left is None else min(left, mine)

    def _wait(self, own_end: float) -> float:
        """How long the next socket operation may wait: the timeout, never past the deadline."""
        left = self._left(own_end)
        if left <= 0:
            raise unavailable("timeout")
        return min(self.timeout, left)

    def _exchange(self, method: str, path: str, body: bytes, *, depth: int | None, own_end: float) -> Answer:
        current = path
        for _hop in range(MAX_REDIRECTS + 1):
            response = self._send(method, current, body, depth=depth, own_end=own_end)
            try:
                status = response.status_code
                if status in REDIRECTS and response.headers.get("Location"):
                    target = self.origin.path_of(response.headers["Location"], base=current)
                    if target is None:
                        logger.warning("caldav %s %s: redirect to another origin refused", method, current)
                        raise unavailable("foreign_origin", "The calendar server pointed to another origin.",
                                          step="redirect")
                    current = target
                    continue
                if status in (200, 207):
                    found = self._read(response, own_end)
                    found.served = response.headers.get("Date")
                    return Answer(status, found, current)
                return Answer(status, None, current)
            finally:
                response.close()
        raise unavailable("bad_response", step="redirect")

    def _send(self, method: str, path: str, body: bytes, *, depth: int | None, own_end: float) -> requests.Response:
        url = self.origin.url(path)
        headers = {"Content-Type": 'application/xml; charset="utf-8"'}
        if depth is not None:
            headers["Depth"] = str(depth)
        account = self.client.account
        auth = (account.username, account.password) if account.username else None
        session = self.client._session()
        prepared = session.prepare_request(requests.Request(method, url, data=body, headers=headers, auth=auth))
        # As the server spelled it (requests re-quotes, and `%41` would become `A`).
        prepared.url = url
        self.trips += 1
        return self._sent(session, prepared, own_end)

    def _sent(self, session: requests.Session, prepared: requests.PreparedRequest, own_end: float) -> requests.Response:
        """Send under the exchange's end: connect, status line and headers included (resolver/watchdog.py)."""
        wait = self._wait(own_end)
        try:
            with watchdog.ending(time.monotonic() + self._left(own_end)):
                return session.send(prepared, stream=True, allow_redirects=False, timeout=(wait, wait))
        except AddressRefused:
            logger.warning("caldav %s: the server's name leads to an address not allowed", prepared.method)
            raise address_not_allowed() from None
        except LookupTimedOut:
            logger.warning("caldav %s: the server's name was not resolved before the deadline", prepared.method)
            raise unavailable("timeout") from None
        except requests.exceptions.Timeout as err:
            raise unavailable("timeout") from err
        except requests.exceptions.ConnectionError as err:
            if self._left(own_end) <= 0:  # the watchdog ended the header phase
                raise unavailable("timeout") from err
            raise _Dropped(type(err).__name__) from err
        except requests.exceptions.RequestException as err:
            raise unavailable("unreachable") from err

    def says_calendar_access(self, url: str) -> bool:
        """OPTIONS on the account's URL, without credentials or redirects: nothing leaves the origin.

        Under the same address policy and end as every other request; a refused
        address is an error (address_not_allowed), any other failure a no.
        """
        path = self.origin.path_of(url) or "/"
        session = self.client._session()
        prepared = session.prepare_request(requests.Request("OPTIONS", self.origin.url(path)))
        prepared.url = self.origin.url(path)
        own_end = time.monotonic() + self.timeout
        self.trips += 1
        try:
            response = self._sent(session, prepared, own_end)
        except CalendarUnavailable as err:
            if err.details.get("reason") in ("address_not_allowed", "timeout"):
                raise
            return False
        except _Dropped:
            return False
        with response:
            dav = {part.strip().lower() for part in response.headers.get("DAV", "").split(",")}
        return "calendar-access" in dav

    def _read(self, response: requests.Response, own_end: float) -> Multistatus:
        parser = MultistatusParser()
        raw = response.raw
        total = 0
        # Every byte of the body under the exchange's end, not only each read:
        # inside one read of a chunked body http.client reads the chunk-size
        # line, its extensions and the trailers a socket read at a time, each
        # in time; the watchdog shuts the socket down when the end passes.
        guard = watchdog.watch(watchdog.socket_of(raw), time.monotonic() + self._left(own_end))
        try:
            while True:
                _set_read_timeout(raw, self._wait(own_end))
                chunk = raw.read1(CHUNK_BYTES, decode_content=True)
                if not chunk:
                    break
                total += len(chunk)
                if total > self.max_bytes:
                    logger.warning("caldav answer beyond %s bytes: refused", self.max_bytes)
                    raise unavailable("response_too_large", "The calendar server's answer is too large.",
                                      max_bytes=self.max_bytes)
                parser.feed(chunk)
        except (urllib3.exceptions.HTTPError, OSError) as err:
            if self._left(own_end) <= 0:  # the watchdog ended the body, whatever the read made of it
                raise unavailable("timeout") from err
            if isinstance(err, (urllib3.exceptions.ReadTimeoutError, TimeoutError)):
                raise unavailable("timeout") from err
            if isinstance(err, (urllib3.exceptions.ProtocolError, ConnectionError)):
                raise _Dropped(type(err).__name__) from err
            if isinstance(err, urllib3.exceptions.DecodeError):
                raise unavailable("bad_response") from err
            raise unavailable("unreachable") from err
        finally:
            watchdog.release(guard)
        return parser.close()


def _set_read_timeout(raw: urllib3.HTTPResponse, seconds: float) -> None:
    """Bound the next socket read by what is left (the timeout requests set is for the whole exchange)."""
    sock = watchdog.socket_of(raw)
    if sock is not None:
        try:
            sock.settimeout(max(seconds, 0.001))
        except OSError:
            pass
