"""The contract for callers that act on the answer, and the newcomer findings, at the API door."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver.domain.items import Kind, make_item
from tests.support import memory_backend

pytestmark = pytest.mark.django_db

STRANGE_HREF = "/demo/work/not-the-uid-4711.ics"


@pytest.fixture
def api(db) -> APIClient:
    user = get_user_model().objects.create_user("caller", password="pw-caller-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def memory(settings):
    """The API over the in-memory backend, chosen by dotted path like any backend."""
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH}
    start = datetime.now(timezone.utc) + timedelta(days=2)
    memory_backend.CALENDAR.items = [
        # A resource whose name is not its UID: the href must be the server's, never <uid>.ics.
        make_item(collection_path="/demo/work/", uid="t-portfolio", title="Draft portfolio outline", etag='"e1"',
                  kind=Kind.TASK, href=STRANGE_HREF),
        make_item(collection_path="/demo/work/", uid="e-review", title="Design review", etag='"e2"',
                  kind=Kind.EVENT, start=start, href="/demo/work/abc.ics"),
        make_item(collection_path="/demo/work/", uid="e-retro", title="Design retro", etag='"e3"',
                  kind=Kind.EVENT, start=start, href="/demo/work/def.ics"),
    ]
    yield memory_backend.CALENDAR
    memory_backend.CALENDAR.items = []


def post(api: APIClient, body) -> dict:
    response = api.post("/v1/resolve", data=json.dumps(body), content_type="application/json")
    return {"status_code": response.status_code, **response.json()}


def test_contract__href_is_the_servers_not_the_uid(api, memory):
    body = post(api, {"text": "Draft portfolio outline", "kind": "task"})
    assert body["data"]["href"] == STRANGE_HREF
    assert body["data"]["read_at"].endswith("Z")
    datetime.fromisoformat(body["data"]["read_at"].replace("Z", "+00:00"))


def test_contract__clarification_reason_hrefs_and_occurrence_keys(api, memory):
    body = post(api, {"text": "design", "kind": "event"})
    data = body["data"]
    assert (body["status"], data["reason"]) == ("needs_clarification", "ambiguous")
    assert {c["href"] for c in data["candidates"]} == {"/demo/work/abc.ics", "/demo/work/def.ics"}
    assert all("occurrence" in c for c in data["candidates"]) and data["read_at"].endswith("Z")


@pytest.mark.parametrize("text, reason", [("qwzx", "no_candidates"), ("design", "ambiguous")])
def test_contract__reason_codes(api, memory, text, reason):
    assert post(api, {"text": text, "kind": "event"})["data"]["reason"] == reason


def test_contract__time_zone_accepted_and_reaches_the_calendar(api, memory, monkeypatch):
    seen = []
    original = type(memory).fetch
    monkeypatch.setattr(type(memory), "fetch", lambda self, **kw: seen.append(kw["time_zone"]) or original(self, **kw))
    assert post(api, {"text": "Draft portfolio outline", "kind": "task", "time_zone": "Europe/Berlin"})["status"] == "ok"
    assert post(api, {"text": "Draft portfolio outline", "kind": "task"})["status"] == "ok"
    # Parsed once at the boundary: the calendar gets the zone itself, never a name.
    # The default is RESOLVER["TIME_ZONE"], i.e. Django's TIME_ZONE.
    assert seen == [ZoneInfo("Europe/Berlin"), ZoneInfo("UTC")]


def test_contract__default_time_zone_is_the_setting(api, memory, monkeypatch, settings):
    settings.RESOLVER = {**settings.RESOLVER, "TIME_ZONE": "Asia/Tokyo"}
    seen = []
    original = type(memory).fetch
    monkeypatch.setattr(type(memory), "fetch", lambda self, **kw: seen.append(kw["time_zone"]) or original(self, **kw))
    post(api, {"text": "Draft portfolio outline", "kind": "task"})
    assert seen == [ZoneInfo("Asia/Tokyo")]


def test_contract__unknown_time_zone_is_invalid_request(api, memory):
    body = post(api, {"text": "x", "kind": "task", "time_zone": "Mars/Olympus"})
    assert (body["status_code"], body["error"]["code"], body["error"]["details"]) == (
        400, "invalid_request", {"field": "time_zone"})


@pytest.mark.parametrize("body, details", [
    ({"text": "", "kind": "task"}, {"field": "text"}),
    ({"text": "   ", "kind": "task"}, {"field": "text"}),
    ({"text": 5, "kind": "task"}, {"field": "text"}),
    ({"kind": "task"}, {"field": "text"}),
    ({"text": "x", "kind": "meeting"}, {"field": "kind"}),
    ({"text": "x", "kind": "task", "extra": True}, {"field": "extra", "unknown_fields": ["extra"]}),
    (["not", "an", "object"], {"field": "body"}),
])
def test_contract__one_details_shape_for_every_validation_error(api, memory, body, details):
    """`{"text": ""}` and `{"text": "   "}` used to differ (`fields.text` vs `field`)."""
    envelope = post(api, body)
    assert (envelope["status_code"], envelope["error"]["code"]) == (400, "invalid_request")
    assert envelope["error"]["details"] == details


def test_contract__malformed_json_has_the_same_shape(api, memory):
    response = api.post("/v1/resolve", data="{not json", content_type="application/json")
    assert (response.status_code, response.json()["error"]["details"]) == (400, {"field": "body"})


def test_contract__text_limit_is_read_from_the_settings(api, memory, settings):
    settings.RESOLVER = {**settings.RESOLVER, "MAX_TEXT_LENGTH": 10}
    envelope = post(api, {"text": "x" * 11, "kind": "task"})
    assert envelope["error"]["details"] == {"field": "text", "max_length": 10}


def test_contract__candidate_limit_is_read_from_the_settings(api, memory, settings):
    # The lexical count (the semantic signal's extra candidates: tests/domain/test_semantic.py).
    settings.RESOLVER = {**settings.RESOLVER, "MAX_CANDIDATES": 1, "SEMANTIC": False}
    body = post(api, {"text": "design", "kind": "event"})
    assert len(body["data"]["candidates"]) == 1
    assert [w["details"] for w in body["warnings"] if w["code"] == "candidate_narrowed"] == [
        {"matched": 2, "kept": 1}]


@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize("path", ["/v1/nope", "/v1/resolve/", "/v1/collections/", "/v1/"])
def test_contract__unknown_api_paths_are_envelopes_whatever_debug(api, settings, path, debug):
    settings.DEBUG = debug
    for response in (api.get(path), api.post(path, data="{}", content_type="application/json")):
        assert response.status_code == 404 and response["Content-Type"] == "application/json"
        body = response.json()
        assert body["error"]["code"] == "not_found" and body["request_id"].startswith("req_")


def test_contract__openapi_documents_every_new_field_and_reason():
    from tests.hostile.openapi import api_document

    components = api_document()["components"]["schemas"]
    request = components["ResolveInputRequest"]["properties"]
    assert {"text", "kind", "collection_ids", "time_zone", "language"} == set(request)
    for name in ("ResolvedItem", "Candidate"):
        assert {"href", "occurrence"} <= set(components[name]["properties"]), name
    assert "read_at" in components["ResolvedItem"]["properties"]
    clarification = components["Clarification"]["properties"]
    assert clarification["reason"]["allOf"] == [{"$ref": "#/components/schemas/ReasonEnum"}]
    assert components["ReasonEnum"]["enum"] == ["duplicate_titles", "ambiguous", "single_candidate", "judge_no_match",
                                                "no_candidates"]
    assert "duplicate_titles" in clarification["reason"]["description"]
    assert "read_at" in clarification
    examples = api_document()["paths"]["/v1/resolve"]["post"]["responses"]["200"]["content"]["application/json"][
        "examples"]
    reasons = {e["value"]["data"].get("reason") for e in examples.values()}
    assert {"duplicate_titles", "ambiguous", "judge_no_match", "no_candidates"} <= reasons
