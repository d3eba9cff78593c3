"""What the HTTP judges share: one Session, header hygiene, retry hints, and the one retrying POST.

Every HTTP judge posts through `post_json`, the one retry loop: a transient
failure (408, 429, 5xx, no response, a timeout, a 200 that is not JSON) is
retried, honouring `retry-after-ms` then `Retry-After`, else backing off from
INITIAL_BACKOFF_SECONDS, and never past the caller's deadline.

Every byte of an attempt is under that deadline, as for a CalDAV server
(resolver/watchdog.py): a judge's session mounts the guarded adapter, so a
server trickling the TLS handshake, the headers or a chunked body a byte at a
time (each read in time, the whole never) is cut when the attempt's end
passes, and a body is read up to MAX_ANSWER_BYTES, so a judge cannot hold a
request past its deadline nor fill its memory.
"""
from __future__ import annotations

import email.utils
import json
import logging
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import time

import requests

from resolver import watchdog
from resolver.domain import deadline as request_deadline
from resolver.domain.codes import http_reason
from resolver.domain.judgment import DefectiveAnswer

logger = logging.getLogger("resolver.judges")


def capped_budget(budget_seconds: float) -> float:
    """The judgment's budget, never more than what is left of the request's deadline."""
    left = request_deadline.remaining()
    return budget_seconds if left is None else max(0.0, min(budget_seconds, left))

INITIAL_BACKOFF_SECONDS = 0.25
# Statuses the services document as transient (529: overloaded).
_RETRYABLE_STATUSES = frozenset({408, 429})
# Longest header value we copy from a response or send as our request ID.
MAX_HEADER_VALUE = 200
# The most bytes of an answer read: a judgment's JSON is a few kilobytes (chat
# completions with their usage block included), an error page a few more.
MAX_ANSWER_BYTES = 1024 * 1024


def guarded_session() -> requests.Session:
    """A Session whose exchanges end at their end, every byte included (resolver/watchdog.py)."""
    session = requests.Session()
    for prefix in ("http://", "https://"):
        session.mount(prefix, watchdog.GuardedAdapter())
    return session


class AnswerTooLarge(Exception):
    """An answer past MAX_ANSWER_BYTES (not retried: the same question gets the same answer)."""



class JudgeConnections:
    """What one judge keeps between requests: its HTTP Session and what it learnt of its server.

    A judge object owns one (a field it is built with); the process keeps one
    judge per configuration (resolver.judges.registry.JudgeRegistry), so keep-
    alive connections and the learnt facts last as long as that configuration
    is in use, and two servers never share either.
    """

    def __init__(self, session_factory: Callable[[], requests.Session] = guarded_session) -> None:
        self._session_factory = session_factory
        self._session: requests.Session | None = None
        self._learnt: dict[str, str] = {}
        self._lock = threading.Lock()

    def session(self) -> requests.Session:
        with self._lock:
            if self._session is None:
                self._session = self._session_factory()
            return self._session

    def learnt(self, name: str, default: str) -> str:
        with self._lock:
            return self._learnt.get(name, default)

    def learn(self, name: str, value: str) -> None:
        with self._lock:
            self._learnt[name] = value

    def close(self) -> None:
        """Close the Session's connections and forget what was learnt (the judge is dropped)."""
        with self._lock:
            session, self._session = self._session, None
            self._learnt.clear()
        if session is not None:
            session.close()


def _attempt(session: requests.Session, url: str, payload: bytes, headers: Mapping[str, str],
             timeout: tuple[float, float], *, end: float, attempts: int, request_id_header: str,
             read: Callable[[Any], Any] | None) -> tuple[Exchange, bool, float | None]:
    """One POST, every byte of it before `end` (a time.monotonic() value): what it came to, whether
    another attempt may help, and the server's retry hint."""
    try:
        with watchdog.ending(end):
            response = session.post(url, data=payload, headers=dict(headers), timeout=timeout, stream=True)
        content = _content(response, end)
    except watchdog.LookupTimedOut:  # the judge's name did not resolve before the deadline: no time is left
        return Exchange(reason="timeout", attempts=attempts), False, None
    except AnswerTooLarge:
        return (Exchange(reason="defective_response", attempts=attempts, detail="answer_too_large"), False, None)
    except requests.Timeout:
        return Exchange(reason="timeout", attempts=attempts), True, None
    except requests.RequestException as exc:
        if time.monotonic() >= end:  # the watchdog cut the exchange at its end, whatever the read made of it
            return Exchange(reason="timeout", attempts=attempts), True, None
        if isinstance(exc, (requests.ConnectionError, requests.exceptions.ChunkedEncodingError)):
            return Exchange(reason="connection_error", attempts=attempts), True, None
        return Exchange(reason="request_error", attempts=attempts, detail=type(exc).__name__), False, None
    server_id = response.headers.get(request_id_header)
    server_id = (header_safe(server_id) or None) if server_id is not None else None
    status = response.status_code
    if status != 200:
        retry = is_retryable_status(status)
        return (Exchange(reason=http_reason(status), attempts=attempts, status=status,
                         error_body=content[:4096], server_request_id=server_id),
                retry, retry_after_seconds(response.headers) if retry else None)
    try:
        body = json.loads(content)
    except ValueError:
        # A 200 that is not JSON is a proxy or gateway page: transient.
        return Exchange(reason="not_json", attempts=attempts, status=status, server_request_id=server_id), True, None
    if read is not None:
        try:
            body = read(body)
        except DefectiveAnswer as defect:
            # Not retried: the same question would get the same broken answer.
            return (Exchange(reason="defective_response", attempts=attempts, status=status, detail=defect.reason,
                             server_request_id=server_id), False, None)
    return Exchange(reason="ok", attempts=attempts, status=status, body=body, server_request_id=server_id), False, None


def _content(response: requests.Response, end: float) -> bytes:
    """The body, every byte of it before `end` (the watchdog shuts the socket then) and at most MAX_ANSWER_BYTES."""
    guard = watchdog.watch(watchdog.socket_of(response.raw), end)
    chunks: list[bytes] = []
    total = 0
    try:
        for chunk in response.iter_content(64 * 1024):
            total += len(chunk)
            if total > MAX_ANSWER_BYTES:
                raise AnswerTooLarge
            chunks.append(chunk)
    finally:
        watchdog.release(guard)
        response.close()
    return b"".join(chunks)


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUSES or 500 <= status <= 599


def header_safe(value: str) -> str:
    # Our request ID goes into a header: a CR, LF or non-ASCII byte would make
    # requests refuse the call (or split the header), so keep printable ASCII only.
    cleaned = "".join(ch for ch in value if " " < ch <= "~")
    return cleaned[:MAX_HEADER_VALUE]


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """The server's own retry hint: `retry-after-ms` first, then `Retry-After`."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    seconds = headers.get("retry-after")
    if seconds is None:
        return None
    try:
        value = float(seconds)
    except ValueError:
        # The HTTP-date form: rare for APIs, but allowed by RFC 9110.
        try:
            when = email.utils.parsedate_to_datetime(seconds)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
    if math.isfinite(value) and value >= 0:
        return value
    return None


@dataclass(frozen=True)
class Exchange:
    """One POST, retries included: a JSON 200, or the reason there is none."""

    reason: str  # "ok" or an unavailability reason (http_429, timeout, ...)
    attempts: int
    status: int | None = None
    body: Any = None  # the parsed JSON of a 200
    error_body: bytes = b""  # the body of a non-retried error status
    server_request_id: str | None = None
    detail: str = ""


def post_json(
    *,
    session: requests.Session,
    url: str,
    payload: bytes,
    headers: Mapping[str, str],
    connect_timeout: float,
    read_timeout: float,
    deadline: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    request_id_header: str,
    label: str,
    read: Callable[[Any], Any] | None = None,
) -> Exchange:
    """POST until a JSON 200, a status not worth retrying, or the deadline (a `clock()` value).

    `read`, if given, turns the JSON of a 200 into the exchange's `body`; a
    DefectiveAnswer it raises ends the exchange (`defective_response`, not
    retried), logged as such.
    """
    attempts = 0
    last = Exchange(reason="budget_exhausted", attempts=0, detail="judgment budget exhausted")
    backoff = INITIAL_BACKOFF_SECONDS
    while True:
        remaining = deadline - clock()
        if remaining <= 0:
            break
        attempts += 1
        timeout = (min(connect_timeout, remaining), min(read_timeout, remaining))
        # The whole attempt (connect, headers, body), not only each read, ends within what is left.
        end = time.monotonic() + min(timeout[0] + timeout[1], remaining)
        began = clock()
        last, retry, retry_after = _attempt(session, url, payload, headers, timeout, end=end, attempts=attempts,
                                            request_id_header=request_id_header, read=read)
        logger.log(
            logging.INFO if last.reason == "ok" else logging.WARNING,
            "%s attempt=%d request_id=%s status=%s outcome=%s latency_ms=%d server_request_id=%s",
            label, attempts, headers.get("X-Request-Id", "-"),
            last.status if last.status is not None else "-", last.reason,
            max(0, int(round((clock() - began) * 1000))), last.server_request_id or "-",
        )
        if not retry:
            return last
        delay = retry_after if retry_after is not None else backoff
        backoff *= 2
        # Never sleep past the deadline: if the wait would use it up, stop now
        # rather than wake up with no time left for the call itself.
        if delay >= deadline - clock():
            break
        sleep(delay)
    return Exchange(reason=last.reason, attempts=attempts, status=last.status,
                    server_request_id=last.server_request_id, detail="judgment budget exhausted")
