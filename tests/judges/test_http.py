"""resolver/judges/http.py: the one retrying POST every HTTP judge uses, bounded in time and bytes.

The retry rules (statuses, backoff) are exercised through each judge
(tests/judges/test_jev.py, test_openai.py); here, how a retry hint is read
(Retry-After, retry-after-ms), and what the shared POST adds whatever the
judge: every byte of an attempt before its end, against a real loopback
server that trickles a chunked answer, and a bound on the answer's size.
"""
from __future__ import annotations

import time

import pytest
import responses

from resolver.judges import http
from resolver.judges.http import retry_after_seconds
from tests.support.slow_peers import ChunkTrickler

JSON_200 = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")


def _post(url: str, *, seconds: float, session=None) -> http.Exchange:
    return http.post_json(
        session=session or http.guarded_session(), url=url, payload=b"{}", headers={"X-Request-Id": "r1"},
        connect_timeout=seconds, read_timeout=seconds, deadline=time.monotonic() + seconds,
        clock=time.monotonic, sleep=time.sleep, request_id_header="X-Request-Id", label="test judge")


@pytest.mark.parametrize("where", ["size", "trailer"])
def test_post_json__a_chunked_answer_trickled_a_byte_at_a_time_is_cut_at_the_deadline(where):
    """Each byte comes well within the read timeout; only a bound on the whole attempt ends it."""
    with ChunkTrickler(where=where, head=JSON_200, interval=0.05, max_bytes=400) as server:
        exchange = _post(server.url, seconds=1.0)
        assert exchange.reason == "timeout"
        assert server.cut.wait(10), "the judge's connection was not cut while the answer was still coming"
        assert server.sent < server.max_bytes


def test_guarded_session__mounts_the_watchdog_adapter_for_both_schemes():
    session = http.guarded_session()
    assert isinstance(session.get_adapter("http://judge.example/"), http.watchdog.GuardedAdapter)
    assert isinstance(session.get_adapter("https://judge.example/"), http.watchdog.GuardedAdapter)
    assert isinstance(http.JudgeConnections().session().get_adapter("https://x/"), http.watchdog.GuardedAdapter)


@responses.activate
def test_post_json__an_answer_past_the_byte_bound_is_defective_and_not_retried():
    responses.add(responses.POST, "https://judge.example/v1", body=b"[" + b"0," * http.MAX_ANSWER_BYTES + b"0]",
                  status=200, content_type="application/json")
    exchange = _post("https://judge.example/v1", seconds=5.0)
    assert (exchange.reason, exchange.detail, exchange.attempts) == ("defective_response", "answer_too_large", 1)
    assert len(responses.calls) == 1


@responses.activate
def test_post_json__an_answer_within_the_bound_is_read_whole():
    body = b'{"ok": "' + b"x" * 4096 + b'"}'
    responses.add(responses.POST, "https://judge.example/v1", body=body, status=200, content_type="application/json")
    exchange = _post("https://judge.example/v1", seconds=5.0)
    assert exchange.reason == "ok" and exchange.body == {"ok": "x" * 4096}


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "nope", "retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected
