"""The loopback HTTP plumbing the scripted CalDAV servers share (scripted_dav.py, hostile_dav.py).

    server = LoopbackHTTP(self._handle, host="127.0.0.1")   # every GET, PROPFIND and REPORT to one callable
    send(handler, 207, body, headers={"ETag": '"e1"'})     # one whole answer
    server.stop()

What each server answers stays in its own module; here is only what both
did alike: a threaded HTTP/1.1 server on an ephemeral port, in a daemon
thread, quiet, and answers with Content-Type and Content-Length.
"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

XML = "application/xml; charset=utf-8"
METHODS = ("GET", "PROPFIND", "REPORT")


class LoopbackHTTP:
    """A threaded HTTP/1.1 server on `host`, port chosen by the system, each request of `methods` to `handle`.

    `date`, when given, is the Date header of every answer (a server whose clock
    a test sets); it returns None for the real time.
    """

    def __init__(self, handle: Callable[[BaseHTTPRequestHandler], None], *, host: str = "127.0.0.1",
                 methods: tuple[str, ...] = METHODS, date: Callable[[], str | None] | None = None) -> None:
        def dispatch(handler: BaseHTTPRequestHandler) -> None:
            handle(handler)

        def date_time_string(handler: BaseHTTPRequestHandler, timestamp: float | None = None) -> str:
            own = date() if date is not None else None
            return own if own is not None else BaseHTTPRequestHandler.date_time_string(handler, timestamp)

        def log_message(handler: BaseHTTPRequestHandler, *args: Any) -> None:
            pass  # the tests read what each server logs itself, not stderr

        namespace: dict[str, Any] = {"protocol_version": "HTTP/1.1", "log_message": log_message,
                                     "date_time_string": date_time_string}
        namespace.update({f"do_{method}": dispatch for method in methods})
        handler_class = type("Handler", (BaseHTTPRequestHandler,), namespace)
        self.host = host
        self._httpd = ThreadingHTTPServer((host, 0), handler_class)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def send_head(handler: BaseHTTPRequestHandler, status: int, length: int, content_type: str = XML,
              headers: dict[str, str] | None = None) -> None:
    """The status line and headers of an answer whose body (`length` bytes) the caller writes."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(length))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str = XML,
         headers: dict[str, str] | None = None) -> None:
    """One whole answer."""
    send_head(handler, status, len(body), content_type, headers)
    handler.wfile.write(body)
