"""resolver/watchdog.py: a socket is shut down when its exchange's end passes, unless released.

On a local socket pair: the watched end's read fails at once (end of file)
when the deadline passes, however long its own timeout; released in time,
the socket is untouched. Servers trickling their headers or body are in
tests/calendars/test_hostile_server.py and tests/hostile/test_deadline.py
(the reader) and tests/judges/test_http.py (a judge).
"""
from __future__ import annotations

import socket
import time
from types import SimpleNamespace
from typing import Iterator

import pytest
import requests

from resolver import watchdog
from resolver.domain import deadline
from tests.support.loopback_http import LoopbackHTTP
from tests.support.slow_peers import SlowDNS


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    ours.settimeout(10)
    try:
        yield ours, theirs
    finally:
        ours.close()
        theirs.close()


def test_watchdog__nothing_is_watched_outside_an_exchange(pair) -> None:
    ours, _ = pair
    assert watchdog.watch(ours) is None
    with watchdog.ending(time.monotonic() + 60):
        assert watchdog.watch(None) is None
    assert watchdog.watch(ours) is None  # the block's end is gone with the block


def test_watchdog__a_read_past_the_end_fails_at_once(pair) -> None:
    ours, _ = pair
    with watchdog.ending(time.monotonic() + 0.2):
        handle = watchdog.watch(ours)
        started = time.monotonic()
        assert ours.recv(1) == b""  # shut down: the peer never sent a byte, the 10 s timeout never came
    watchdog.release(handle)
    assert time.monotonic() - started < 5


def test_watchdog__released_in_time_the_socket_is_untouched(pair) -> None:
    ours, theirs = pair
    handle = watchdog.watch(ours, end=time.monotonic() + 0.1)
    assert handle is not None
    watchdog.release(handle)
    time.sleep(0.3)
    theirs.sendall(b"x")
    assert ours.recv(1) == b"x"


def test_watchdog__guarded_watches_the_connections_socket_while_it_waits(pair) -> None:
    ours, _ = pair
    with watchdog.ending(time.monotonic() + 0.2), watchdog.guarded(SimpleNamespace(sock=ours)):
        assert ours.recv(1) == b""


def test_watchdog__guarded_releases_the_socket_when_the_headers_came_in_time(pair) -> None:
    ours, theirs = pair
    with watchdog.ending(time.monotonic() + 0.1), watchdog.guarded(SimpleNamespace(sock=ours)):
        pass
    time.sleep(0.3)
    theirs.sendall(b"y")
    assert ours.recv(1) == b"y"


# --- the name lookup, under the request's deadline ---------------------------------------------------


def test_lookup__a_name_that_does_not_answer_ends_at_the_deadline():
    with SlowDNS("slow-dns.example").installed() as dns, deadline.running(0.3):
        with pytest.raises(watchdog.LookupTimedOut):
            watchdog.lookup("slow-dns.example", 80)
        assert dns.pending() == 1


def test_guarded_adapter__a_slow_name_ends_at_the_deadline_before_any_connection():
    session = requests.Session()
    session.mount("http://", watchdog.GuardedAdapter())
    with SlowDNS("slow-dns.example", address="127.0.0.1").installed() as dns, deadline.running(0.3):
        with pytest.raises(watchdog.LookupTimedOut):
            session.get("http://slow-dns.example:9/", timeout=5)
        assert dns.pending() == 1


def test_guarded_adapter__a_name_is_connected_by_its_address_and_still_named_in_the_host_header():
    seen: list[str] = []

    def answer(handler):
        seen.append(handler.headers["Host"])
        handler.send_response(200)
        handler.send_header("Content-Length", "2")
        handler.end_headers()
        handler.wfile.write(b"ok")

    session = requests.Session()
    session.mount("http://", watchdog.GuardedAdapter())
    server = LoopbackHTTP(answer, methods=("GET",))
    try:
        with SlowDNS("named.example", address="127.0.0.1").installed() as dns:
            dns.answer()
            with deadline.running(5):
                response = session.get(f"http://named.example:{server.port}/", timeout=5)
    finally:
        server.stop()
    assert response.text == "ok" and seen == [f"named.example:{server.port}"]
