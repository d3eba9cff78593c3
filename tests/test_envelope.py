"""resolver/envelope.py (through resolver.services): every envelope shape, built once."""
from __future__ import annotations

import json
import logging
from datetime import date, datetime, timedelta, timezone

import pytest

from resolver import services
from resolver.domain.errors import CalendarUnavailable, InvalidRequest
from resolver.domain.items import MAX_TITLE_CHARS, Collection, Kind, Method, Occurrence, make_item
from resolver.domain.pipeline import Outcome, OutcomeWarning, Status
from resolver.envelope import SCHEMA_VERSION, iso_utc, outcome_envelope

KEYS = {"schema_version", "request_id", "status", "data", "warnings", "error"}
BERLIN = timezone(timedelta(hours=1))
READ_AT = datetime(2026, 3, 10, 9, 15, 2, tzinfo=BERLIN)

TASK = make_item(collection_path="/demo/work/", uid="t-portfolio", title="Draft portfolio outline",
                 etag='"e1"', kind=Kind.TASK, due=date(2026, 3, 13), href="/demo/work/not-the-uid-4711.ics")
SERIES_START = datetime(2026, 3, 17, 9, tzinfo=timezone.utc)
OCCURRENCE = Occurrence(start=SERIES_START, end=SERIES_START + timedelta(hours=1),
                        recurrence_id=SERIES_START.isoformat())
EVENT = make_item(collection_path="/demo/work/", uid="weekly", title="Weekly sync", etag='"e2"', kind=Kind.EVENT,
                  start=datetime(2025, 3, 11, 9, tzinfo=timezone.utc), href="/demo/work/weekly.ics", occurrences=(OCCURRENCE,))
OTHER_EVENT = make_item(collection_path="/demo/work/", uid="retro", title="Design retro", etag='"e3"',
                        kind=Kind.EVENT, start=datetime(2026, 3, 14, 9, tzinfo=timezone.utc), href="/demo/work/x-retro.ics")


def ok(item, **kwargs) -> dict:
    outcome = Outcome(request_id="req_1", status=Status.OK, kind=item.kind, method=Method.DETERMINISTIC, item=item,
                      read_at=READ_AT, **kwargs)
    return services.envelope_for(outcome)


def test_envelope__resolved_task_carries_href_and_read_at_in_utc():
    body = ok(TASK)
    assert set(body) == KEYS and body["schema_version"] == SCHEMA_VERSION
    data = body["data"]
    assert data["href"] == "/demo/work/not-the-uid-4711.ics"  # never built from the UID
    assert data["read_at"] == "2026-03-10T08:15:02Z"
    assert data["due"] == "2026-03-13" and "occurrence" not in data


def test_envelope__resolved_event_carries_its_occurrence():
    data = ok(EVENT, occurrences={EVENT.item_id: OCCURRENCE})["data"]
    assert data["occurrence"] == {"start": "2026-03-17T09:00:00+00:00", "end": "2026-03-17T10:00:00+00:00",
                                  "recurrence_id": "2026-03-17T09:00:00+00:00"}


def test_envelope__event_without_a_known_occurrence_is_null():
    assert ok(EVENT)["data"]["occurrence"] is None


def test_envelope__clarification_carries_reason_read_at_href_and_occurrences():
    outcome = Outcome(request_id="req_2", status=Status.NEEDS_CLARIFICATION, kind=Kind.EVENT, method=None,
                      candidates=(EVENT, OTHER_EVENT), reason="ambiguous", prompt="Which item do you mean?",
                      occurrences={EVENT.item_id: OCCURRENCE}, read_at=READ_AT,
                      warnings=(OutcomeWarning("judgment_unavailable", "off", {"reason": "disabled"}),))
    body = services.envelope_for(outcome, clarification_url="https://x.example/resolve/clarify/t/")
    data = body["data"]
    assert (data["reason"], data["read_at"]) == ("ambiguous", "2026-03-10T08:15:02Z")
    assert [c["href"] for c in data["candidates"]] == ["/demo/work/weekly.ics", "/demo/work/x-retro.ics"]
    assert [c["occurrence"] is None for c in data["candidates"]] == [False, True]
    assert data["questions"][0]["options"] == [{"label": "Weekly sync", "value": EVENT.item_id},
                                               {"label": "Design retro", "value": OTHER_EVENT.item_id}]
    assert data["clarification_url"] == "https://x.example/resolve/clarify/t/"
    assert body["warnings"] == [{"code": "judgment_unavailable", "message": "off", "details": {"reason": "disabled"}}]


def test_envelope__collections():
    calendar = type("C", (), {"collections": lambda self: [Collection("work", "/demo/work/", "Work")]})()
    body = services.collections_envelope(request_id="req_3", calendar=calendar)
    assert body == {"schema_version": SCHEMA_VERSION, "request_id": "req_3", "status": "ok",
                    "data": {"collections": [{"collection_id": "work", "display_name": "Work"}]},
                    "warnings": [], "error": None}


def test_envelope__resolver_error_as_it_is():
    body = services.error_envelope_for(CalendarUnavailable("down", details={"reason": "timeout"}), request_id="r")
    assert body["error"] == {"code": "calendar_unavailable", "message": "down", "details": {"reason": "timeout"}}
    assert (body["status"], body["data"], set(body)) == ("error", None, KEYS)


def test_envelope__unexpected_exception_is_internal_error_without_internals(caplog):
    with caplog.at_level(logging.ERROR, logger="resolver.errors"):
        body = services.error_envelope_for(RuntimeError("secret /etc/passwd"), request_id="req_4")
    assert body["error"] == {"code": "internal_error", "message": "An unexpected error occurred.", "details": {}}
    assert "passwd" not in str(body)
    assert [r.request_id for r in caplog.records] == ["req_4"]  # the traceback is logged, for us


@pytest.mark.parametrize("moment, expected", [
    (datetime(2026, 1, 1, 12, tzinfo=timezone.utc), "2026-01-01T12:00:00Z"),
    (datetime(2026, 1, 1, 12), "2026-01-01T12:00:00Z"),
    (None, None),
])
def test_iso_utc(moment, expected):
    assert iso_utc(moment) == expected


def test_envelope__invalid_request_details_shape():
    body = services.error_envelope_for(InvalidRequest("bad", details={"field": "text"}), request_id="r")
    assert body["error"]["details"] == {"field": "text"}


# Titles of a megabyte (issue 38; tests/hostile/test_huge_titles.py reads them from a calendar).

def _task(uid: str, title: str):
    return make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.TASK)


def test_item__a_cut_title_is_marked_and_a_whole_one_is_byte_for_byte_as_before():
    cut = _task("huge", "Huge title " + "agenda " * 150_000)
    whole = _task("plain-passport", "Renew passport")
    outcome = Outcome(request_id="r", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=None,
                      candidates=(cut, whole), prompt="Which item do you mean?")
    candidates = outcome_envelope(outcome)["data"]["candidates"]
    assert candidates[0]["title_truncated"] is True and candidates[0]["title"] == cut.title
    assert "title_truncated" not in candidates[1]
    assert list(candidates[1]) == ["item_id", "uid", "collection_id", "href", "title", "etag", "kind", "due"]


def test_clarification__twenty_megabyte_titles_stay_within_the_bound_of_the_documented_limits():
    """20 candidates (the judge's 19 and one more), each title in the candidate and in the option's
    label: at most MAX_TITLE_CHARS + 1 characters each, at most 12 bytes a character in JSON (an
    astral character escaped as two \\uXXXX), plus the fixed fields of an item."""
    items = [_task(f"huge-{n}", f"Huge {n} " + "\U0001f4c5 réunion budget " * 60_000) for n in range(20)]
    outcome = Outcome(request_id="r", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=None,
                      candidates=tuple(items), prompt="Which item do you mean?")
    body = json.dumps(outcome_envelope(outcome)).encode("utf-8")
    per_item = 2 * 12 * (MAX_TITLE_CHARS + 1) + 1024
    assert len(body) < 20 * per_item + 4096
    assert len(body) > 20 * 2 * MAX_TITLE_CHARS  # the titles are there, cut, not dropped
