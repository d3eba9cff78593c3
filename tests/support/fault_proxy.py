"""Radicale behind a server that can be told to misbehave, on 127.0.0.1.

Radicale's own WSGI application runs in this process under a small threaded
HTTP server written here, so that a test can decide, per request method, how
the next responses go wrong:

    server = FaultyRadicale(root)
    server.start()
    with server.inject(Fault.status(503, methods={"REPORT"})):
        ... the resolver's REPORTs get a 503, its PROPFINDs go through ...
    server.stop()            # and the port refuses connections

Faults are injected on the wire, not inside Radicale: a reset closes the TCP
connection with an RST half-way through the body, a slow response sleeps
before answering, a broken body cuts the multistatus XML in half. Every
request is recorded, so a test can check the resolver sent no write.
"""
from __future__ import annotations

import io
import re
import secrets
import socket
import struct
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import unquote, urlsplit

import radicale
from radicale import config as radicale_config

from lifeproject.embedded_radicale import free_port, write_config

READ_METHODS = frozenset({"OPTIONS", "GET", "HEAD", "PROPFIND", "REPORT"})

# What a careless server puts in an error page: the resolver must never pass
# any of it on.
LEAKY_ERROR_PAGE = (
    b"<html><body><h1>Internal Server Error</h1><pre>Traceback (most recent call last):\n"
    b'  File "/srv/caldav/app.py", line 42, in handle\n'
    b"RuntimeError: database password=hunter2 rejected</pre></body></html>"
)

_CALENDAR_DATA = re.compile(rb"(<(?:[\w-]+:)?calendar-data[^>]*>)(.*?)(</(?:[\w-]+:)?calendar-data>)", re.S)
_RESPONSE = re.compile(rb"<(?:[\w-]+:)?response\b.*?</(?:[\w-]+:)?response>", re.S)


@dataclass(frozen=True)
class Fault:
    """How the matching responses go wrong. Build one with the class methods."""

    kind: str
    methods: frozenset[str] | None = None  # None: every method
    status: int = 500
    delay: float = 0.0
    # For `item`: which resource to damage (a substring of its calendar data,
    # such as "UID:x") and what to put instead of its calendar data.
    needle: bytes = b""
    replacement: Callable[[bytes], bytes] | None = field(default=None, repr=False)

    def applies_to(self, method: str) -> bool:
        return self.methods is None or method in self.methods

    @classmethod
    def status_code(cls, status: int, *, methods: set[str] | None = None) -> Fault:
        return cls("status", frozenset(methods) if methods else None, status=status)

    @classmethod
    def reset(cls, *, methods: set[str] | None = None) -> Fault:
        return cls("reset", frozenset(methods) if methods else None)

    @classmethod
    def slow(cls, delay: float, *, methods: set[str] | None = None) -> Fault:
        return cls("slow", frozenset(methods) if methods else None, delay=delay)

    @classmethod
    def broken_xml(cls, *, methods: set[str] | None = None) -> Fault:
        return cls("broken_xml", frozenset(methods) if methods else None)

    @classmethod
    def item(cls, needle: str, replacement: Callable[[bytes], bytes]) -> Fault:
        """Rewrite one resource's calendar data inside the REPORT answer."""
        return cls("item", frozenset({"REPORT"}), needle=needle.encode("utf-8"), replacement=replacement)

    @classmethod
    def item_without_data(cls, needle: str) -> Fault:
        """Drop one resource's calendar data from the REPORT answer."""
        return cls("item_without_data", frozenset({"REPORT"}), needle=needle.encode("utf-8"))


@dataclass
class _Response:
    status: str
    headers: list[tuple[str, str]]
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "FaultyRadicale"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def handle_one_request(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline:
            self.close_connection = True
            return
        if not self.parse_request():
            return
        # One request per connection, like HTTP/1.0: no connection pool in the
        # client carries a connection (or a fault) over into the next test.
        self.close_connection = True
        try:
            self.server.owner._serve(self)
        except OSError:
            pass  # the client gave up (a timeout) or we reset it ourselves

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass  # the request log is `FaultyRadicale.requests`


class FaultyRadicale:
    """A real Radicale (its WSGI app, its storage) behind a switchable, misbehaving server."""

    name = "radicale"

    def __init__(self, root: Path, *, username: str = "faults") -> None:
        self.root = root
        self.port = free_port()
        self.username = username
        self.password = secrets.token_urlsafe(18)
        config_path = write_config(root, port=self.port, username=username, password=self.password)
        configuration = radicale_config.load([(str(config_path), False)])
        self.app = radicale.Application(configuration)
        self.fault: Fault | None = None
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- life cycle ---------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def storage(self) -> Path:
        return self.root / "collections"

    @property
    def running(self) -> bool:
        return self._server is not None

    def collection_path(self, collection_id: str) -> str:
        return f"/{self.username}/{collection_id}/"

    def settings(self, **overrides: object) -> dict[str, object]:
        values: dict[str, object] = {
            "CALDAV_URL": self.url,
            "CALDAV_USERNAME": self.username,
            "CALDAV_PASSWORD": self.password,
            "CALDAV_TIMEOUT": 5.0,
            "EVENT_HORIZON_DAYS": 90,
        }
        values.update(overrides)
        return values

    def start(self) -> None:
        if self._server is not None:
            return
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.owner = self
        self._server = server
        serving = threading.Event()

        def serve() -> None:
            serving.set()
            server.serve_forever()

        self._thread = threading.Thread(target=serve, name="faulty-radicale", daemon=True)
        self._thread.start()
        # The port listens from the constructor on; on a loaded machine the thread that answers may start
        # later than a test's first request times out (0.5 s): "the server came back" means it serves.
        serving.wait(timeout=10)

    def stop(self) -> None:
        """Stop answering: the port refuses connections until `start()`."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

    @contextmanager
    def inject(self, fault: Fault) -> Iterator[Fault]:
        with self._lock:
            self.fault = fault
        try:
            yield fault
        finally:
            with self._lock:
                self.fault = None

    @contextmanager
    def stopped(self) -> Iterator[None]:
        self.stop()
        try:
            yield
        finally:
            self.start()

    def writes(self) -> list[tuple[str, str]]:
        """Requests that were not reads."""
        with self._lock:
            return [(method, path) for method, path in self.requests if method not in READ_METHODS]

    def forget_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    # --- serving ------------------------------------------------------------

    def _serve(self, handler: _Handler) -> None:
        method = handler.command
        with self._lock:
            self.requests.append((method, handler.path))
            fault = self.fault if self.fault is not None and self.fault.applies_to(method) else None
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length > 0 else b""

        if fault is not None and fault.kind == "status":
            self._send(handler, _Response(
                f"{fault.status} Injected", [("Content-Type", "text/html; charset=utf-8")], LEAKY_ERROR_PAGE
            ))
            return
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay)

        response = self._call_app(handler, method, body)

        if fault is not None and fault.kind == "reset":
            self._reset_half_way(handler, response)
            return
        if fault is not None and response.status.startswith("207"):
            if fault.kind == "broken_xml":
                # Half a multistatus, and a tag that cannot close.
                response.body = response.body[: len(response.body) // 2] + b"<D:respo"
            elif fault.kind == "item":
                response.body = _rewrite_calendar_data(response.body, fault.needle, fault.replacement)
            elif fault.kind == "item_without_data":
                response.body = _rewrite_calendar_data(response.body, fault.needle, None)
        self._send(handler, response)

    def _call_app(self, handler: _Handler, method: str, body: bytes) -> _Response:
        parts = urlsplit(handler.path)
        environ: dict[str, object] = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            # PEP 3333: PATH_INFO carries the URL-decoded bytes as latin-1.
            "PATH_INFO": unquote(parts.path, "iso-8859-1"),
            "QUERY_STRING": parts.query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": str(self.port),
            "SERVER_PROTOCOL": handler.request_version,
            "REMOTE_ADDR": handler.client_address[0],
            "CONTENT_LENGTH": str(len(body)),
            "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        for name, value in handler.headers.items():
            key = name.upper().replace("-", "_")
            # No Accept-Encoding: Radicale would gzip its answer, and the
            # faults edit plain bodies.
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH", "ACCEPT_ENCODING"):
                environ["HTTP_" + key] = value
        captured: dict[str, object] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: object = None) -> Callable[[bytes], None]:
            captured["status"], captured["headers"] = status, headers
            return lambda data: None

        chunks = self.app(environ, start_response)
        payload = b"".join(chunks)
        return _Response(str(captured["status"]), list(captured["headers"]), payload)  # type: ignore[arg-type]

    @staticmethod
    def _head(response: _Response, *, length: int) -> bytes:
        lines = [f"HTTP/1.1 {response.status}"]
        for name, value in response.headers:
            if name.lower() not in ("content-length", "connection"):
                lines.append(f"{name}: {value}")
        lines += [f"Content-Length: {length}", "Connection: close", "", ""]
        return "\r\n".join(lines).encode("latin-1")

    def _send(self, handler: _Handler, response: _Response) -> None:
        handler.wfile.write(self._head(response, length=len(response.body)) + response.body)
        handler.wfile.flush()

    def _reset_half_way(self, handler: _Handler, response: _Response) -> None:
        """Promise the whole body, send half of it, then reset the connection."""
        body = response.body or b"x" * 64
        handler.wfile.write(self._head(response, length=len(body)) + body[: len(body) // 2])
        handler.wfile.flush()
        connection: socket.socket = handler.connection
        # A zero linger time makes close() send an RST instead of a FIN.
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()
        handler.wfile = io.BytesIO()  # nothing more may reach the closed socket


def _rewrite_calendar_data(body: bytes, needle: bytes, replacement: Callable[[bytes], bytes] | None) -> bytes:
    """Change the calendar data of the <response> elements containing `needle`."""

    def one_response(match: re.Match[bytes]) -> bytes:
        element = match.group(0)
        if needle not in element:
            return element
        if replacement is None:
            return _CALENDAR_DATA.sub(b"", element)
        return _CALENDAR_DATA.sub(
            lambda data: data.group(1) + _xml_escape(replacement(_xml_unescape(data.group(2)))) + data.group(3),
            element,
        )

    return _RESPONSE.sub(one_response, body)


def _xml_escape(data: bytes) -> bytes:
    return data.replace(b"&", b"&amp;").replace(b"<", b"&lt;").replace(b">", b"&gt;")


def _xml_unescape(data: bytes) -> bytes:
    return data.replace(b"&lt;", b"<").replace(b"&gt;", b">").replace(b"&amp;", b"&")
