"""Peers that hold a request where a per-read timeout never fires, each reporting whether the client hung up.

- `ChunkTrickler`: a CalDAV-shaped server whose chunked body stalls where http.client reads byte by byte;
- `SilentServer`: accepts, reads the request and says nothing (a judge that never answers);
- `SlowDNS`: a name whose lookup does not return until the test lets it (a slow authoritative server).

`ChunkTrickler`:

The status line and headers come at once (the header phase is not what is
tested here), then, a byte every `interval` seconds:

    where="size"      the next chunk-size line: `1;` and an extension that never ends
    where="trailer"   a first chunk of XML, the last-chunk `0`, then a trailer line that never ends

Inside one `read1()` http.client reads that line with `readline()`, one
socket read after another, each well within the socket timeout: only a bound
on the whole exchange ends it.

    with ChunkTrickler(where="size") as server:
        ...                                # point an account at server.url
        assert server.cut.wait(10)         # the client hung up while the line was still coming
        assert server.sent < server.max_bytes

`sent` counts the trickled bytes that went out; `cut` is set when the client
closed the connection before the server had sent `max_bytes` of them (then
the server closes); `requests` counts the connections answered.
"""
from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Any, Iterator, Self
from unittest import mock

HEAD = (b"HTTP/1.1 207 Multi-Status\r\nContent-Type: application/xml; charset=utf-8\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n")
FIRST = (b'<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/</D:href>'
         b"<D:propstat><D:prop/><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>")


class LoopbackPeer:
    """A loopback server on 127.0.0.1 that answers each connection in a thread of its own (`_answer`);
    `connections` counts them, `cut` is for the subclass to set when the client hung up early."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.cut = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    @property
    def requests(self) -> int:
        """The connections answered (one request each)."""
        return self.connections

    def _answer(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


class ChunkTrickler(LoopbackPeer):
    def __init__(self, *, where: str = "size", interval: float = 0.05, max_bytes: int = 300,
                 head: bytes = HEAD) -> None:
        if where not in ("size", "trailer"):
            raise ValueError(where)
        super().__init__()
        self.head = head  # the status line and headers (a judge's 200 JSON, say)
        self.where = where
        self.interval = interval
        self.max_bytes = max_bytes
        self.sent = 0
        self.finished = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def host_url(self, host: str) -> str:
        """The server under another name (a fake DNS maps it to 127.0.0.1)."""
        return f"http://{host}:{self.port}/"

    def _prefix(self) -> bytes:
        if self.where == "size":
            return b"1;"  # a chunk of one byte, announced by a line whose extension is trickled
        return b"%x\r\n%s\r\n0\r\n" % (len(FIRST), FIRST) + b"X-Slow: "

    def _answer(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(2)
            request = b""
            while b"\r\n\r\n" not in request:
                part = conn.recv(65536)
                if not part:
                    return
                request += part
            conn.sendall(self.head + self._prefix())
            for _ in range(self.max_bytes):
                if self._stop.wait(self.interval):
                    return
                conn.sendall(b"e")
                self.sent += 1
            self.finished.set()
        except OSError:
            if self.sent < self.max_bytes:
                self.cut.set()  # the client ended the exchange while the line was still coming
        finally:
            conn.close()


class SilentServer(LoopbackPeer):
    """Accepts on 127.0.0.1, reads the request, answers nothing for `hold` seconds, then closes.

    `cut` is set when the client closed the connection while the server was still holding it.
    """

    def __init__(self, *, hold: float = 10.0) -> None:
        super().__init__()
        self.hold = hold

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(self.hold)
        try:
            while conn.recv(65536):  # the request, then b"" when the client hangs up
                pass
            self.cut.set()
        except OSError:
            pass  # held the whole time: the client waited it out
        finally:
            conn.close()


class SlowDNS:
    """`name` resolves to `address`, but only once the test calls `answer()` (or at exit).

    `asked` is set when a lookup of the name began; `pending()`, called right
    after the code under test returned, says how many lookups were still
    waiting: nonzero means the code stopped waiting for the lookup.
    """

    def __init__(self, name: str, address: str = "93.184.216.34") -> None:
        self.name = name.lower()
        self.address = address
        self.asked = threading.Event()
        self._released = threading.Event()
        self._waiting = 0
        self._lock = threading.Lock()
        self._real = socket.getaddrinfo

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name.lower() != self.name:
            return self._real(host, port, *args, **kwargs)
        with self._lock:
            self._waiting += 1
        self.asked.set()
        try:
            self._released.wait(30)
        finally:
            with self._lock:
                self._waiting -= 1
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (self.address, int(port or 0)))]

    def pending(self) -> int:
        """Lookups of the name still waiting for their answer."""
        with self._lock:
            return self._waiting

    def answer(self) -> None:
        self._released.set()

    @contextmanager
    def installed(self) -> Iterator[SlowDNS]:
        with mock.patch("socket.getaddrinfo", self.getaddrinfo):
            try:
                yield self
            finally:
                self.answer()
