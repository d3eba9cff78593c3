"""Hostile networks in process: DNS faked by patching socket.getaddrinfo, and a loopback listener
that records every connection and byte reaching it (the address an attacker wants reached).

    dns = FakeDNS({"evil.example": ["93.184.216.34", "127.0.0.1"]})   # one answer per lookup, last repeats
    with dns.installed(), Listener() as listener:
        ...
        assert listener.received == b"" and listener.connections == 0

Names not in the table resolve as the real resolver says (IP literals, localhost).
A public address in the table is only ever *resolved*: the tests assert that the
code refuses before connecting, and a connection attempt to one is recorded and
failed here (`FakeDNS.public_connects`), never sent.
"""
from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock


_RealSocket = socket.socket


def _loopback(address: Any) -> bool:
    host = str(address[0]) if isinstance(address, tuple) else ""
    return host in ("127.0.0.1", "::1", "localhost") or host.startswith("127.")


class FakeDNS:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = {name.lower(): list(answers) for name, answers in table.items()}
        self.lookups: list[str] = []
        self.public_connects: list[Any] = []
        self._real = socket.getaddrinfo

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        answers = self.table.get(name.lower())
        if answers is None:
            return self._real(host, port, *args, **kwargs)
        self.lookups.append(name)
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        family = socket.AF_INET6 if ":" in answer else socket.AF_INET
        address = (answer, int(port or 0), 0, 0) if family == socket.AF_INET6 else (answer, int(port or 0))
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", address)]

    def _guarded_socket(self) -> type:
        fake = self

        class GuardedSocket(_RealSocket):  # type: ignore[misc,valid-type]
            """Never lets a test send traffic off loopback: the attempt is recorded and refused."""

            def connect(self, address: Any) -> None:
                if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
                    fake.public_connects.append(address)
                    raise ConnectionRefusedError("tests never connect off loopback")
                super().connect(address)

        return GuardedSocket

    @contextmanager
    def installed(self) -> Iterator[FakeDNS]:
        with mock.patch("socket.getaddrinfo", self.getaddrinfo), mock.patch("socket.socket", self._guarded_socket()):
            yield self


class Listener:
    """A TCP listener on 127.0.0.1 that records what reaches it (and answers nothing)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @classmethod
    def on(cls, host: str, port: int) -> Listener:
        """A listener on another loopback address (127/8), e.g. the same port as a server on 127.0.0.1."""
        return cls(host, port)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.settimeout(0.2)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            finally:
                conn.close()

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()

    @property
    def untouched(self) -> bool:
        return self.connections == 0 and self.received == b""


class HeaderTrickler:
    """An HTTP server on 127.0.0.1 that sends its status line and headers a byte at a time (every 0.4 s),
    up to `max_bytes` (then closes): the header phase a per-read timeout never ends."""

    # What `tls=True` trickles: a TLS handshake record announcing 16 KiB, so the
    # client's handshake waits for the rest of a record that comes a byte at a time.
    TLS_RECORD = b"\x16\x03\x03\x40\x00" + b"\x02" * 1000

    def __init__(self, *, interval: float = 0.4, max_bytes: int = 40, tls: bool = False) -> None:
        self.interval = interval
        self.tls = tls
        self.max_bytes = max_bytes
        self.listener = Listener()
        self.requests = 0
        # Set when a client hung up before the headers were all sent (what a deadline does).
        self.cut = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.listener.port}/"

    def _run(self) -> None:
        sock = self.listener.sock
        while not self._stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            self.requests += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        head = self.TLS_RECORD if self.tls else (
            b"HTTP/1.1 207 Multi-Status\r\nContent-Type: application/xml\r\nX-Slow: " + b"z" * 1000)
        try:
            conn.recv(65536)
        except OSError:
            conn.close()
            return
        try:
            for byte in head[: self.max_bytes]:
                if self._stop.wait(self.interval):
                    break
                conn.sendall(bytes([byte]))
        except OSError:
            self.cut.set()  # the client ended the exchange while the headers were still coming
        finally:
            conn.close()

    def __enter__(self) -> HeaderTrickler:
        self._thread.start()
        return self


    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.listener.sock.close()
