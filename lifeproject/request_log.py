"""One JSON line per request, on stderr: who answered, how, and where the time went.

`RequestLogMiddleware` gives each request an ID (the one the API envelope
reports) and, when the response is out, writes one line on the logger
`lifeproject.requests`. A resolution made while the request is handled logs
its own record on `resolver.requests` (`resolver.services.log_outcome`): the
`CaptureOutcome` filter folds that record's fields into the request's line
instead of writing a second one. Outside a request (the command-line door) the
resolution record is written on its own, in the same JSON shape.

The line holds identifiers, codes, counts and durations only: never the
reference, a title, a query string, a header or a credential. The path is
logged as its URL pattern (`v1/resolve`), never as the requested path.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import Any, Callable

from django.http import HttpRequest, HttpResponse

from resolver.domain.escaping import json_text

logger = logging.getLogger("lifeproject.requests")

# Fields a resolution record may contribute (resolver.services.log_outcome).
# Its `status` and `method` are renamed so they cannot be mistaken for the
# HTTP status and method of the request.
OUTCOME_FIELDS = {
    "request_id": "request_id",
    "door": "door",
    "status": "envelope_status",
    "method": "resolution_method",
    "calendar_ms": "calendar_ms",
    "matching_ms": "matching_ms",
    "judgment_ms": "judgment_ms",
    "candidates": "candidates",
    "calendar_requests": "calendar_requests",
}

_current: ContextVar[dict[str, Any] | None] = ContextVar("lifeproject_request_log", default=None)

# Attributes every LogRecord has; anything else on a record came from `extra`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def door_of(path: str) -> str:
    """Which door a path belongs to: api, web, health, or other (admin, static files)."""
    if path.startswith("/v1/"):
        return "api"
    if path.startswith("/resolve/"):
        return "web"
    if path.rstrip("/") == "/healthz":
        return "health"
    if path.startswith("/oauth/") or path.startswith("/.well-known/oauth-"):
        return "oauth"
    return "other"


@contextmanager
def collecting() -> Iterator[dict[str, Any]]:
    """For a door outside Django (the MCP endpoint: RESOLVER["REQUEST_LOG"]): fold resolution records into a dict."""
    fields: dict[str, Any] = {}
    token = _current.set(fields)
    try:
        yield fields
    finally:
        _current.reset(token)


def write_line(*, door: str, http_method: str | None, route: str, http_status: int, duration_ms: float,
               fields: dict[str, Any]) -> None:
    """The request line of a door outside Django, in the same shape as RequestLogMiddleware's."""
    from resolver.request_ids import new_request_id

    line: dict[str, Any] = {"request_id": new_request_id(), "door": door, "http_method": http_method,
                            "route": route, "http_status": http_status, "duration_ms": duration_ms}
    line.update(fields)
    logger.info("request", extra=line)


class RequestLogMiddleware:
    """Outermost middleware: times the whole request, including the other middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from resolver.request_ids import request_id_of

        started = time.perf_counter()
        # Made here and kept on the request: every door reads it there, so the envelope carries the same ID.
        request_id = request_id_of(request)
        fields: dict[str, Any] = {}
        token = _current.set(fields)
        response: HttpResponse | None = None
        try:
            response = self.get_response(request)
            return response
        finally:
            _current.reset(token)
            self._log(request, response, fields, request_id=request_id,
                      duration_ms=round((time.perf_counter() - started) * 1000, 3))

    @staticmethod
    def _log(request: HttpRequest, response: HttpResponse | None, fields: dict[str, Any], *,
             request_id: str, duration_ms: float) -> None:
        match = getattr(request, "resolver_match", None)
        line: dict[str, Any] = {
            "request_id": request_id,
            "door": door_of(request.path),
            "http_method": request.method,
            "route": match.route if match is not None else None,
            # No response means an exception escaped every handler: Django answers 500.
            "http_status": response.status_code if response is not None else 500,
            "duration_ms": duration_ms,
        }
        envelope = getattr(response, "data", None)
        if isinstance(envelope, dict) and "schema_version" in envelope:
            line["envelope_status"] = envelope.get("status")
            error = envelope.get("error")
            if isinstance(error, dict):
                line["error_code"] = error.get("code")
        # The resolution's own fields win: its request ID is the one in the envelope or page.
        line.update(fields)
        logger.info("request", extra=line)


class CaptureOutcome(logging.Filter):
    """On the resolution log's handler: inside a request, fold the record into the request's line."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = _current.get()
        if fields is None:
            return True
        for source, target in OUTCOME_FIELDS.items():
            if hasattr(record, source):
                fields[target] = getattr(record, source)
        return False


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time, level, logger, message, and the record's `extra` fields."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _RECORD_ATTRIBUTES and not name.startswith("_"):
                data[name] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        if record.exc_info and record.exc_info[0] is not None:
            # The type only: a message or a traceback can quote user text or a URL.
            data["exc_type"] = record.exc_info[0].__name__
        # No raw C1 or bidi control either (resolver/domain/escaping.py): a log viewer is a terminal too.
        return json_text(data, separators=(",", ":"))
