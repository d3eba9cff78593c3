"""Resources the resolver cannot read are skipped, with a warning and a log line.

Radicale refuses such items on PUT, so the server here damages one resource
inside its REPORT answer (tests/support/fault_proxy.py). The rest of the
collection still resolves; the envelope carries `items_skipped` with the
count by reason, and the log names the resource's href and the reason.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import pytest

from resolver import services
from resolver.domain.pipeline import Status
from tests.conftest import storage_digest
from tests.faults.conftest import MAIN, post_resolve, run_command
from tests.support.fault_proxy import Fault, FaultyRadicale
from tests.support.resolving import resolve_outcome

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def _drop_line(name: bytes):
    return lambda data: re.sub(rb"(?m)^" + name + rb"[;:][^\r\n]*\r?\n", b"", data)


def _replace_line(name: bytes, line: bytes):
    return lambda data: re.sub(rb"(?m)^" + name + rb"[;:][^\r\n]*", line, data)


def _add_after_summary(line: bytes):
    return lambda data: re.sub(rb"(?m)^(SUMMARY:[^\r\n]*)", rb"\1\r\n" + line, data)


@dataclass(frozen=True)
class BadItem:
    name: str
    kind: str
    fault: Fault
    damaged_uid: str
    damaged_title: str
    good_title: str
    good_uid: str
    reason: str


BAD_ITEMS = [
    BadItem("not-icalendar", "task", Fault.item("UID:f-alpha", lambda data: b"this is not iCalendar\r\n"),
            "f-alpha", "Alpha task", "Beta task", "f-beta", "not iCalendar"),
    BadItem("truncated", "task", Fault.item("UID:f-alpha", lambda data: data[: len(data) // 2]),
            "f-alpha", "Alpha task", "Beta task", "f-beta", "not iCalendar"),
    BadItem("due-not-a-date", "task", Fault.item("UID:f-alpha", _replace_line(b"DUE", b"DUE;VALUE=TEXT:soon")),
            "f-alpha", "Alpha task", "Beta task", "f-beta", "bad due"),
    BadItem("no-calendar-data", "task", Fault.item_without_data("UID:f-alpha"),
            "f-alpha", "Alpha task", "Beta task", "f-beta", "no calendar data"),
    BadItem("event-without-dtstart", "event", Fault.item("UID:f-gamma", _drop_line(b"DTSTART")),
            "f-gamma", "Gamma review", "Delta review", "f-delta", "event without dtstart"),
    BadItem("unreadable-rrule", "event", Fault.item("UID:f-gamma", _add_after_summary(b"RRULE:FREQ=SOMETIMES")),
            "f-gamma", "Gamma review", "Delta review", "f-delta", "bad property value"),
]
IDS = [bad.name for bad in BAD_ITEMS]


def _skipped_warning(bad: BadItem) -> dict:
    return {"code": "items_skipped", "message": "Some calendar resources could not be read and were skipped.",
            "details": {"count": 1, "reasons": {bad.reason: 1}}}


def _assert_logged(caplog: pytest.LogCaptureFixture, server: FaultyRadicale, bad: BadItem) -> None:
    href = f"{server.collection_path(MAIN)}{bad.damaged_uid}.ics"
    lines = [r.getMessage() for r in caplog.records if r.name == "resolver.calendars" and r.levelno == logging.WARNING]
    assert f"skipped resource {href}: {bad.reason}" in lines


@pytest.mark.parametrize("bad", BAD_ITEMS, ids=IDS)
def test_bad_item__service_skips_it_and_resolves_the_rest(faulty_live: FaultyRadicale, caplog, bad: BadItem) -> None:
    before = storage_digest(faulty_live.storage)
    with caplog.at_level(logging.WARNING), faulty_live.inject(bad.fault):
        outcome = resolve_outcome(text=bad.good_title, kind=bad.kind, collection_ids=[MAIN], door="test")
    assert outcome.status is Status.OK and outcome.item is not None and outcome.item.uid == bad.good_uid
    assert [(w.code, w.details) for w in outcome.warnings] == [
        ("items_skipped", {"count": 1, "reasons": {bad.reason: 1}})
    ]
    _assert_logged(caplog, faulty_live, bad)
    assert faulty_live.writes() == [] and storage_digest(faulty_live.storage) == before


@pytest.mark.parametrize("bad", BAD_ITEMS, ids=IDS)
def test_bad_item__its_own_title_no_longer_resolves(faulty_live: FaultyRadicale, bad: BadItem) -> None:
    with faulty_live.inject(bad.fault):
        outcome = resolve_outcome(text=bad.damaged_title, kind=bad.kind, collection_ids=[MAIN],
                                             door="test")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert bad.damaged_uid not in [item.uid for item in outcome.candidates]
    assert "items_skipped" in [w.code for w in outcome.warnings]


@pytest.mark.parametrize("bad", BAD_ITEMS, ids=IDS)
def test_bad_item__api(faulty_live: FaultyRadicale, api, caplog, bad: BadItem) -> None:
    with caplog.at_level(logging.WARNING), faulty_live.inject(bad.fault):
        response = post_resolve(api, {"text": bad.good_title, "kind": bad.kind, "collection_ids": [MAIN]})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["data"]["uid"] == bad.good_uid
    assert body["warnings"] == [_skipped_warning(bad)]
    assert "Traceback" not in response.content.decode("utf-8")
    _assert_logged(caplog, faulty_live, bad)


@pytest.mark.parametrize("bad", BAD_ITEMS, ids=IDS)
def test_bad_item__command(faulty_live: FaultyRadicale, caplog, bad: BadItem) -> None:
    with caplog.at_level(logging.WARNING), faulty_live.inject(bad.fault):
        as_json = run_command("--text", bad.good_title, "--kind", bad.kind, "--collection", MAIN, "--json")
        plain = run_command("--text", bad.good_title, "--kind", bad.kind, "--collection", MAIN)
    assert as_json.code == 0 and plain.code == 0
    assert as_json.envelope["data"]["uid"] == bad.good_uid
    assert as_json.envelope["warnings"] == [_skipped_warning(bad)]
    fields = plain.stdout.rstrip("\n").split("\t")
    item_id, etag = fields[:2]
    assert len(fields) == (5 if bad.kind == "event" else 3)  # an event adds its occurrence's start and RECURRENCE-ID
    assert item_id == as_json.envelope["data"]["item_id"] and etag == as_json.envelope["data"]["etag"]
    assert plain.stderr == f"warning: items_skipped: {_skipped_warning(bad)['message']}\n"
    for result in (as_json, plain):
        assert "Traceback" not in result.stdout + result.stderr
    _assert_logged(caplog, faulty_live, bad)


def test_bad_item__several_skipped_are_counted_by_reason(faulty_live: FaultyRadicale, readers) -> None:
    """Two damaged resources with two reasons: one warning, counted by reason."""
    both = Fault.item("UID:f-", lambda data: b"garbage\r\n" if b"UID:f-alpha" in data else data)
    with faulty_live.inject(both):
        outcome = resolve_outcome(text="Beta task", kind="task", collection_ids=[MAIN], door="test")
    assert outcome.item is not None and outcome.item.uid == "f-beta"
    assert [(w.code, w.details) for w in outcome.warnings] == [
        ("items_skipped", {"count": 1, "reasons": {"not iCalendar": 1}})
    ]
    # The proxy now damages f-beta too without changing its ETag, which no real
    # server does (new content, new ETag): the resolver rightly trusts what it
    # parsed for that ETag, so start again as a new process would.
    readers.clear()
    everything = Fault.item("UID:f-", lambda data: b"garbage\r\n")
    with faulty_live.inject(everything):
        outcome = resolve_outcome(text="Beta task", kind="task", collection_ids=[MAIN], door="test")
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.candidates == ()
    assert [(w.code, w.details) for w in outcome.warnings] == [
        ("items_skipped", {"count": 2, "reasons": {"not iCalendar": 2}})
    ]


def test_bad_item__stays_skipped_while_its_etag_is_unchanged(faulty_live: FaultyRadicale) -> None:
    """The next request reads only changes: the damaged resource is still skipped, with the same reason."""
    bad = BAD_ITEMS[2]  # bad due
    with faulty_live.inject(bad.fault):
        first = resolve_outcome(text=bad.good_title, kind=bad.kind, collection_ids=[MAIN], door="test")
    # No fault now: the server would send good data, but it is not asked for
    # an unchanged resource, so the answer is the one a full read gave.
    second = resolve_outcome(text=bad.good_title, kind=bad.kind, collection_ids=[MAIN], door="test")
    for outcome in (first, second):
        assert outcome.item is not None and outcome.item.uid == bad.good_uid
        assert [(w.code, w.details) for w in outcome.warnings] == [
            ("items_skipped", {"count": 1, "reasons": {bad.reason: 1}})
        ]
    assert second.calendar_requests < first.calendar_requests


def test_bad_item__without_data_is_asked_for_again(faulty_live: FaultyRadicale) -> None:
    """A resource sent without data is not remembered: the next request fetches it and reads it."""
    with faulty_live.inject(Fault.item_without_data("UID:f-alpha")):
        first = resolve_outcome(text="Alpha task", kind="task", collection_ids=[MAIN], door="test")
    assert first.item is None and "items_skipped" in [w.code for w in first.warnings]
    second = resolve_outcome(text="Alpha task", kind="task", collection_ids=[MAIN], door="test")
    assert second.item is not None and second.item.uid == "f-alpha" and second.warnings == ()
