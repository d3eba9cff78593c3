"""resolver/services.py: the functions every door (the MCP door included) calls."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from resolver import services
from resolver.domain.errors import CandidateGone, InvalidRequest, NotACandidate
from resolver.domain.items import Kind, Method, Occurrence, make_item
from resolver.domain.pipeline import Status
from tests.support import memory_backend

pytestmark = pytest.mark.django_db

START = datetime(2030, 1, 7, 9, tzinfo=timezone.utc)
OCCURRENCE = Occurrence(start=START, end=START + timedelta(hours=1), recurrence_id=START.isoformat())
SERIES = make_item(collection_path="/demo/work/", uid="weekly", title="Weekly sync", etag='"e9"', kind=Kind.EVENT,
                   start=datetime(2029, 1, 1, 9, tzinfo=timezone.utc), href="/demo/work/x-weekly.ics", occurrences=(OCCURRENCE,))
TASK = make_item(collection_path="/demo/work/", uid="t1", title="Draft portfolio outline", etag='"e1"',
                 kind=Kind.TASK, href="/demo/work/t1.ics")


@pytest.fixture
def memory(settings):
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH}
    memory_backend.CALENDAR.items = [SERIES, TASK]
    yield memory_backend.CALENDAR
    memory_backend.CALENDAR.items = []


def test_calendar_backend__by_dotted_path(memory):
    assert services.calendar_from_settings() is memory


def test_select_item__re_reads_live_and_is_user_selected(memory):
    outcome = services.select_item(item_id=SERIES.item_id, kind="event", candidate_ids=[SERIES.item_id],
                                   request_id="req_pick")
    assert (outcome.status, outcome.method, outcome.request_id) == (Status.OK, Method.USER_SELECTED, "req_pick")
    data = services.envelope_for(outcome)["data"]
    assert (data["href"], data["etag"], data["method"]) == ("/demo/work/x-weekly.ics", '"e9"', "user_selected")
    assert data["occurrence"] == OCCURRENCE.as_dict() and data["read_at"].endswith("Z")


def test_select_item__not_offered(memory):
    with pytest.raises(NotACandidate):
        services.select_item(item_id=TASK.item_id, kind="task", candidate_ids=[SERIES.item_id])


def test_select_item__gone(memory):
    offered = [TASK.item_id]
    memory.items = [SERIES]  # the task was completed or deleted since the question was asked
    with pytest.raises(CandidateGone):
        services.select_item(item_id=TASK.item_id, kind="task", candidate_ids=offered)


def test_select_item__bad_time_zone(memory):
    with pytest.raises(InvalidRequest) as caught:
        services.select_item(item_id=TASK.item_id, kind="task", time_zone="Nowhere/Land")
    assert caught.value.details == {"field": "time_zone"}


def test_clarification_url__only_for_clarifications(memory):
    ok = services.resolve_reference(text="Draft portfolio outline", kind="task")
    assert services.clarification_url(ok, user_id=1, base_url="https://r.example/") is None
    asked = services.resolve_reference(text="sync portfolio", kind="task")
    url = services.clarification_url(asked, user_id=1, base_url="https://r.example/")
    assert url is not None and url.startswith("https://r.example/resolve/clarify/")
    claims = services.read_clarification(url.split("/clarify/")[1].rstrip("/"), user_id=1)
    assert claims.reason == asked.reason and claims.candidate_ids == tuple(i.item_id for i in asked.candidates)


def test_resolve_document__same_rules_as_the_fields(memory):
    with pytest.raises(InvalidRequest) as caught:
        services.resolve_document({"text": "x", "kind": "task", "colection_ids": []})
    assert caught.value.details["field"] == "colection_ids"
    outcome = services.resolve_document({"text": "Draft portfolio outline", "kind": "task", "time_zone": None})
    assert outcome.item.uid == "t1"
