"""manage.py resolve: the contract fields, time_zone, and human output without log lines."""
from __future__ import annotations

import io
import json
import logging
from typing import Iterator
from zoneinfo import ZoneInfo

import pytest
from tests.support.commands import run_resolve

from resolver.domain.items import Kind, make_item
from tests.support import memory_backend

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory(settings):
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH}
    memory_backend.CALENDAR.items = [
        make_item(collection_path="/demo/work/", uid="t-portfolio", title="Draft portfolio outline", etag='"e1"',
                  kind=Kind.TASK, href="/demo/work/not-the-uid-4711.ics"),
        make_item(collection_path="/demo/work/", uid="t-slides", title="Review portfolio slides", etag='"e2"',
                  kind=Kind.TASK, href="/demo/work/slides.ics"),
    ]
    yield memory_backend.CALENDAR
    memory_backend.CALENDAR.items = []


def _zones(memory, monkeypatch) -> list:
    seen: list = []
    original = type(memory).fetch
    monkeypatch.setattr(type(memory), "fetch", lambda self, **kw: seen.append(kw["time_zone"]) or original(self, **kw))
    return seen


def test_command__human_output_has_the_href(memory):
    code, out, _ = run_resolve("--text", "Draft portfolio outline", "--kind", "task")
    assert (code, out) == (0, 'itm_' + out[4:36] + '\t"e1"\t/demo/work/not-the-uid-4711.ics\n')


def test_command__json_carries_href_read_at_and_reason(memory):
    code, out, _ = run_resolve("--text", "portfolio", "--kind", "task", "--json")
    data = json.loads(out)["data"]
    assert code == 3 and data["reason"] == "ambiguous" and data["read_at"].endswith("Z")
    assert {c["href"] for c in data["candidates"]} == {"/demo/work/not-the-uid-4711.ics", "/demo/work/slides.ics"}


def test_command__clarification_prints_its_reason(memory):
    code, _, err = run_resolve("--text", "qwzx", "--kind", "task")
    assert code == 3 and "reason: no_candidates" in err.splitlines()


def test_command__time_zone_option_and_document(memory, monkeypatch):
    seen = _zones(memory, monkeypatch)
    assert run_resolve("--text", "Draft portfolio outline", "--kind", "task", "--time-zone", "Europe/Berlin")[0] == 0
    doc = json.dumps({"text": "Draft portfolio outline", "kind": "task", "time_zone": "Asia/Tokyo"})
    assert run_resolve("--input", "-", stdin=doc)[0] == 0
    assert seen == [ZoneInfo("Europe/Berlin"), ZoneInfo("Asia/Tokyo")]  # parsed once, at the door


@pytest.mark.parametrize("args, stdin", [
    (("--text", "x", "--kind", "task", "--time-zone", "Mars/Olympus"), None),
    (("--input", "-"), '{"text": "x", "kind": "task", "time_zone": "Nowhere/Land"}'),
    (("--input", "-", "--time-zone", "UTC"), '{"text": "x", "kind": "task"}'),
])
def test_command__bad_time_zone_is_invalid_request(memory, args, stdin):
    code, out, _ = run_resolve(*args, "--json", stdin=stdin)
    assert code == 2 and json.loads(out)["error"]["code"] == "invalid_request"


def test_command__empty_and_blank_text_give_one_details_shape(memory):
    shapes = []
    for text in ("", "   "):
        code, out, _ = run_resolve("--input", "-", "--json", stdin=json.dumps({"text": text, "kind": "task"}))
        shapes.append(json.loads(out)["error"]["details"])
    assert shapes == [{"field": "text"}, {"field": "text"}]


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    """What the project's log handlers write (on stderr, beside the human output), captured."""
    stream = io.StringIO()
    handlers = {h for name in ("resolver", "resolver.requests", "resolver.judges")
                for h in logging.getLogger(name).handlers if type(h) is logging.StreamHandler}
    assert handlers  # the project's LOGGING is in force
    saved = {h: h.setStream(stream) for h in handlers}
    yield stream
    for handler, previous in saved.items():
        handler.setStream(previous)


def test_command__no_log_lines_in_human_output(memory, log_stream):
    """The JSON resolution line used to land on stderr between the human lines."""
    code, _, err = run_resolve("--text", "portfolio", "--kind", "task")
    assert code == 3 and err.startswith("warning: judgment_unavailable")
    assert log_stream.getvalue() == ""


def test_command__log_lines_with_json(memory, log_stream):
    """With --json, stdout is the envelope alone and the log lines are JSON on stderr."""
    code, out, _ = run_resolve("--text", "portfolio", "--kind", "task", "--json")
    assert code == 3 and json.loads(out)["status"] == "needs_clarification"
    assert [json.loads(line)["message"] for line in log_stream.getvalue().splitlines()] == ["resolution"]


def test_command__log_lines_at_verbosity_2(memory, log_stream):
    run_resolve("--text", "portfolio", "--kind", "task", "--verbosity", "2")
    lines = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    assert [line["message"] for line in lines] == ["resolution"]


def test_command__list_collections_json_is_the_shared_envelope(memory):
    code, out, _ = run_resolve("--list-collections", "--json")
    body = json.loads(out)
    assert code == 0 and body["schema_version"] == 1 and body["data"] == {
        "collections": [{"collection_id": "work", "display_name": "work"}]}
