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
    assert code == 3 and err.startswith("clarification_required:")
    assert "judgment_unavailable" not in err  # the judge is off by default: nothing alarming
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


# --- the occurrence, and output a hostile server cannot drive ---------------------------

def _series(**overrides):
    from datetime import datetime, timedelta, timezone

    from resolver.domain.items import Occurrence

    start = datetime(2030, 1, 14, 9, tzinfo=timezone.utc)
    occurrence = Occurrence(start=start, end=start + timedelta(hours=1), recurrence_id="2030-01-14T09:00:00+00:00")
    fields = dict(collection_path="/demo/work/", uid="weekly", title="Weekly sync", etag='"e9"', kind=Kind.EVENT,
                  start=datetime(2029, 1, 7, 9, tzinfo=timezone.utc), href="/demo/work/weekly.ics",
                  occurrences=(occurrence,))
    return make_item(**{**fields, **overrides})


def test_command__an_event_prints_its_occurrence_start_and_recurrence_id(memory):
    memory.items = [_series()]
    code, out, _ = run_resolve("--text", "Weekly sync", "--kind", "event")
    assert code == 0
    assert out.rstrip("\n").split("\t")[1:] == ['"e9"', "/demo/work/weekly.ics", "2030-01-14T09:00:00+00:00",
                                               "2030-01-14T09:00:00+00:00"]


HOSTILE = "\x1b]52;c;ZWNobyBwd25lZA==\x07\r\x9b2J\u202e\x7f"


def test_command__no_raw_control_character_reaches_the_terminal(memory):
    """A hostile server's href, ETag and title: ESC (OSC 52 clipboard), BEL, CR, C1 CSI, RLO, DEL."""
    memory.items = [_series(href="/demo/work/" + HOSTILE + ".ics", etag='"' + HOSTILE + '"'),
                    _series(uid="weekly-2", title="Weekly sync " + HOSTILE, href="/x" + HOSTILE)]
    for args in (("--text", "Weekly sync", "--kind", "event"), ("--text", "weekly", "--kind", "event")):
        code, out, err = run_resolve(*args)
        assert code in (0, 3)
        for text in (out, err):
            assert not [c for c in text if (ord(c) < 0x20 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f
                        or c == "\u202e"], repr(text)
    code, out, _ = run_resolve("--text", "Weekly sync", "--kind", "event")
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x0d\\x9b2J\\u202e\\x7f" in out


def test_command__json_escapes_del_and_c1_but_keeps_the_value(memory):
    memory.items = [_series(href="/demo/work/" + HOSTILE + ".ics")]
    code, out, _ = run_resolve("--text", "Weekly sync", "--kind", "event", "--json")
    assert code == 0 and not [c for c in out.rstrip("\n") if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f]
    assert "\\u009b" in out and "\\u007f" in out
    assert json.loads(out)["data"]["href"] == "/demo/work/" + HOSTILE + ".ics"  # byte for byte


def test_command__input_is_read_to_the_body_limit_only(memory, settings):
    settings.RESOLVER = {**settings.RESOLVER, "MAX_BODY_BYTES": 100}

    class Endless(io.RawIOBase):
        """Standard input that never ends: the command must stop reading past the limit."""

        read_sizes: list[int] = []

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            assert size != -1, "read to the end"
            self.read_sizes.append(size)
            return b" " * size

    class Stdin(io.StringIO):
        buffer = Endless()

    import sys

    saved, sys.stdin = sys.stdin, Stdin()
    try:
        from django.core.management import call_command

        out = io.StringIO()
        with pytest.raises(SystemExit) as caught:
            call_command("resolve", "--input", "-", "--json", stdout=out, stderr=io.StringIO())
    finally:
        sys.stdin = saved
    error = json.loads(out.getvalue())["error"]
    assert caught.value.code == 2 and error["code"] == "invalid_request"
    assert error["details"] == {"field": "body", "max_bytes": 100} and Stdin.buffer.read_sizes == [101]


def test_command__input_at_the_limit_is_read(memory, settings):
    document = json.dumps({"text": "Draft portfolio outline", "kind": "task"})
    settings.RESOLVER = {**settings.RESOLVER, "MAX_BODY_BYTES": len(document.encode())}
    assert run_resolve("--input", "-", stdin=document)[0] == 0
    assert run_resolve("--input", "-", stdin=document + " ")[0] == 2


def test_command__messages_name_the_bad_value(memory):
    code, _, err = run_resolve("--input", "file.json")
    assert code == 2 and "not `file.json`" in err
    code, _, err = run_resolve("--text", "x", "--kind", "task", "--collection", "holidays")
    assert code == 2 and "holidays" in err and "work" in err


def test_command__one_candidate_has_its_own_reason_and_wording(memory):
    memory.items = memory.items[:1]
    code, out, err = run_resolve("--text", "portfolio", "--kind", "task", "--json")
    data = json.loads(out)["data"]
    assert code == 3 and data["reason"] == "single_candidate"
    assert data["questions"][0]["prompt"] == "Is this the item you mean?"


def test_command__judge_off_is_said_plainly(memory):
    code, out, _ = run_resolve("--text", "portfolio", "--kind", "task", "--json")
    [warning] = json.loads(out)["warnings"]
    assert warning == {"code": "judgment_unavailable", "message": "The judge is off; candidates are in search order.",
                       "details": {"reason": "disabled"}}
