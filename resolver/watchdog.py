"""A bound on every byte of an HTTP exchange: TLS handshake, header phase and body, for every peer we read.

The CalDAV reader (resolver/calendars/caldav/http.py, connections.py) and the
HTTP judges (resolver/judges/http.py) both mount `GuardedAdapter` and read
their bodies under `watch`: a server is never trusted to keep time. The name
lookup before a connection is bounded too (`lookup`: the request's deadline,
whoever named the server, the operator or a person).

A socket timeout bounds one read; a server sending its status line and
headers a byte at a time never lets one read time out, and urllib3 reads the
header phase itself. The body is no better: inside one read of a chunked body
http.client reads the next chunk-size line, its extensions and the trailers
with `readline()`, one socket read after another, each in time. Here one
thread per process watches the exchanges (waiting for headers, or reading a
body) and shuts a socket down when its exchange's end passes: the read then
fails at once, and http.py, seeing the end passed, reports `timeout`.

The end is a context variable set around the exchange (`ending(end)`), read
in the same thread by the connection when it waits for the response.
"""
from __future__ import annotations

import heapq
import ipaddress
import itertools
import socket
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from resolver.domain import deadline

_end: ContextVar[float | None] = ContextVar("http_exchange_end", default=None)


@contextmanager
def ending(end: float) -> Iterator[None]:
    """Exchanges in this block end at `end` (a time.monotonic() value)."""
    token = _end.set(end)
    try:
        yield
    finally:
        _end.reset(token)


class Watchdog:
    """Shuts down sockets whose exchange outlived its end; one thread, started on first use."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Any]] = []
        self._armed: set[int] = set()
        self._count = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, end: float, sock: Any) -> int:
        with self._cond:
            handle = next(self._count)
            heapq.heappush(self._heap, (end, handle, sock))
            self._armed.add(handle)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="http-watchdog", daemon=True)
                self._thread.start()
            self._cond.notify()
            return handle

    def disarm(self, handle: int) -> None:
        with self._cond:
            self._armed.discard(handle)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)  # finished in time
                wait = self._heap[0][0] - time.monotonic() if self._heap else None
                if wait is None or wait > 0:
                    self._cond.wait(timeout=wait)
                    continue
                _end_time, handle, sock = heapq.heappop(self._heap)
                self._armed.discard(handle)
            _shut(sock)


def _shut(sock: Any) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError, ValueError):
        pass


_watchdog = Watchdog()


def watch(sock: Any, end: float | None = None) -> int | None:
    """Shut `sock` down at `end` (default: the exchange's) unless released first; None outside an exchange."""
    end = _end.get() if end is None else end
    if end is None or sock is None:
        return None
    return _watchdog.arm(end, sock)


def release(handle: int | None) -> None:
    if handle is not None:
        _watchdog.disarm(handle)


@contextmanager
def guarded(connection: Any) -> Iterator[None]:
    """While `connection` waits for its response's headers, shut it down at the exchange's end."""
    handle = watch(getattr(connection, "sock", None))
    try:
        yield
    finally:
        release(handle)


def socket_of(raw: Any) -> object | None:
    """The socket under a urllib3 response (None for a response that has none, as in tests)."""
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    return getattr(connection, "sock", None)


class LookupTimedOut(Exception):
    """The name's lookup outlived the request's deadline: nothing was sent. Not an OSError (no retry)."""


def lookup(host: str, port: int) -> list[Any]:
    """getaddrinfo, given no longer than the request's deadline leaves (LookupTimedOut past it)."""
    lookup = socket.getaddrinfo  # looked up now: the one in force for this call (tests fake it)
    left = deadline.remaining()
    if left is None:
        return lookup(host, port, type=socket.SOCK_STREAM)
    if left <= 0:
        raise LookupTimedOut(host)
    answer: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            answer["infos"] = lookup(host, port, type=socket.SOCK_STREAM)
        except BaseException as err:  # handed to the waiting request
            answer["error"] = err
        finally:
            done.set()

    # A thread per lookup, not a pool: one slow name must not queue another request's lookups.
    threading.Thread(target=run, name="http-lookup", daemon=True).start()
    if not done.wait(left):
        raise LookupTimedOut(host)
    if "error" in answer:
        raise answer["error"]
    return answer["infos"]  # type: ignore[no-any-return]


def _by_address(connection: Any, connect: Any) -> Any:
    """Connect `connection` to its host's addresses in turn, the name looked up under the deadline.

    urllib3 looks a name up with the system resolver, bounded by nothing of
    ours; here the lookup is `lookup` (it ends at the request's deadline), and
    each address it gives is connected to as urllib3 would (the next one after
    a failure). The name stays what the server sees: the Host header is
    written before connecting, and TLS is asked for the name (server_hostname).
    An address literal, or a call outside any request's deadline, connects as
    urllib3 does.
    """
    name = connection._dns_host
    try:
        ipaddress.ip_address(name.strip("[]"))
        return connect()
    except ValueError:
        pass
    if deadline.remaining() is None:
        return connect()
    infos = lookup(name, connection.port or connection.default_port)
    if getattr(connection, "server_hostname", "absent") is None:
        connection.server_hostname = name.rstrip(".")
    error: Exception | None = None
    try:
        for address in dict.fromkeys(str(info[4][0]) for info in infos):
            connection._dns_host = address
            try:
                return connect()
            except OSError as err:  # urllib3's NewConnectionError and ConnectTimeoutError are OSErrors
                error = err
    finally:
        connection._dns_host = name
    raise error if error is not None else OSError(f"{name} has no address")


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> Any:
        return _by_address(self, super()._new_conn)

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        with guarded(self):
            return super().getresponse(*args, **kwargs)


class _GuardedHTTPSConnection(HTTPSConnection):
    # The TLS handshake reads the socket record by record, each read under
    # its own timeout: a server trickling it a byte at a time is ended, like
    # the header phase, by the watchdog at the exchange's end.
    _handshake: int | None = None

    def _new_conn(self) -> Any:
        sock = _by_address(self, super()._new_conn)
        self._handshake = watch(sock)
        return sock

    def connect(self) -> None:
        try:
            super().connect()
        finally:
            release(self._handshake)
            self._handshake = None

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        with guarded(self):
            return super().getresponse(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """requests' adapter whose TLS handshake and header phase end at the exchange's end (`ending`)."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
