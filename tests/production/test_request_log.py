"""One JSON line per request on stderr, with the resolution's timings and no user text."""
from __future__ import annotations

import io
import json
import logging
from types import SimpleNamespace
from typing import Iterator

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from lifeproject.request_log import CaptureOutcome, JsonFormatter, door_of

pytestmark = pytest.mark.django_db

REFERENCE = "Draft portfolio outline"


@pytest.fixture
def api(radicale, settings) -> APIClient:
    settings.RESOLVER = radicale.settings()
    user = get_user_model().objects.create_user("log-agent", password="pw-log-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


class Captured:
    def __init__(self) -> None:
        self.stream = io.StringIO()

    def readouterr(self) -> SimpleNamespace:
        """The lines written since the last call (named like pytest's capture fixtures)."""
        text = self.stream.getvalue()
        self.stream.seek(0)
        self.stream.truncate()
        return SimpleNamespace(out=text)


@pytest.fixture
def request_log() -> Iterator[Captured]:
    """What the configured JSON handlers write (they hold the stderr of start-up, not pytest's)."""
    captured = Captured()
    handlers = [h for name in ("lifeproject.requests", "resolver.requests")
                for h in logging.getLogger(name).handlers if isinstance(h.formatter, JsonFormatter)]
    assert handlers, "LOGGING wires no stream handler for the request log"
    previous = [h.setStream(captured.stream) for h in handlers]
    try:
        yield captured
    finally:
        for handler, stream in zip(handlers, previous):
            handler.setStream(stream)


def test_request_log__one_line_per_resolution_with_timings(api, request_log):
    request_log.readouterr()
    response = api.post("/v1/resolve", {"text": REFERENCE, "kind": "task"}, format="json")
    out = request_log.readouterr().out
    lines = json_lines(out)
    assert len(lines) == 1, out
    line = lines[0]
    assert line["logger"] == "lifeproject.requests"
    assert line["request_id"] == response.json()["request_id"]
    assert line["door"] == "api" and line["route"] == "v1/resolve" and line["http_method"] == "POST"
    assert line["http_status"] == 200 and line["envelope_status"] == "ok"
    assert line["resolution_method"] == "deterministic"
    assert line["calendar_ms"] > 0 and line["matching_ms"] >= 0 and line["calendar_requests"] >= 2
    assert line["duration_ms"] >= line["calendar_ms"]
    assert "portfolio" not in out.lower() and "token" not in out.lower()


def test_request_log__error_envelope_code(api, request_log):
    request_log.readouterr()
    api.post("/v1/resolve", {"text": REFERENCE, "kind": "meeting"}, format="json")
    (line,) = json_lines(request_log.readouterr().out)
    assert line["http_status"] == 400 and line["envelope_status"] == "error"
    assert line["error_code"] == "invalid_request"


def test_request_log__unauthenticated_and_health(client, radicale, settings, request_log):
    settings.RESOLVER = radicale.settings()
    request_log.readouterr()
    client.post("/v1/resolve", {"text": REFERENCE, "kind": "task"}, content_type="application/json")
    client.get("/healthz")
    first, second = json_lines(request_log.readouterr().out)
    assert first["http_status"] == 401 and first["error_code"] == "not_authenticated"
    assert second["door"] == "health" and second["http_status"] == 200


def test_request_log__command_line_resolution_logs_its_own_line(live, request_log):
    from django.core.management import call_command

    request_log.readouterr()
    try:
        call_command("resolve", "--text", REFERENCE, "--kind", "task", "--json")
    except SystemExit:
        pass
    lines = [line for line in json_lines(request_log.readouterr().out) if line.get("logger") == "resolver.requests"]
    assert len(lines) == 1 and lines[0]["door"] == "cli" and lines[0]["calendar_ms"] > 0


def test_door_of__paths():
    assert [door_of(p) for p in ("/v1/resolve", "/resolve/abc/", "/healthz", "/admin/")] == [
        "api", "web", "health", "other"]


def test_json_formatter__extra_fields_and_exception_type_only():
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), None)
    record.request_id = "req_1"
    try:
        raise ValueError("secret detail")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    data = json.loads(JsonFormatter().format(record))
    assert data["request_id"] == "req_1" and data["exc_type"] == "ValueError"
    assert "secret detail" not in json.dumps(data)


def test_capture_outcome__passes_records_outside_a_request():
    record = logging.LogRecord("resolver.requests", logging.INFO, __file__, 1, "resolution", (), None)
    assert CaptureOutcome().filter(record) is True
