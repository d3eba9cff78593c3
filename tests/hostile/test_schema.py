"""The OpenAPI document: served to authenticated clients, complete, and true.

"Complete": every /v1/ endpoint and every stable error code is in it, with
examples. "True": its examples validate against its own schemas, and real
responses of every kind (each envelope status, each error, the judge on and
off) validate against it.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import jsonschema
import pytest
from django.contrib.auth import get_user_model
from django.test import Client as DjangoClient
from werkzeug.test import Client, TestResponse

from resolver.domain import errors
from resolver.thresholds import current_fingerprint
from tests.hostile.openapi import api_document, api_schema, v1_paths
from tests.support.jev_contract_server import JevContractServer, decisive
from tests.support.wsgi import application

pytestmark = pytest.mark.django_db

DOCUMENTED_PATHS = {"/v1/resolve", "/v1/collections", "/v1/schema/"}


def every_error_code() -> dict[str, int]:
    codes = {cls.code: cls.http_status for cls in (errors.InvalidRequest, errors.CollectionNotFound,
                                                   errors.CalendarUnavailable, errors.InternalError)}
    codes.update(errors.HTTP_ONLY_CODES)
    return codes


def response_schema(document: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    content = document["paths"][path][method]["responses"][str(status)]["content"]["application/json"]
    return content


def validate(document: dict[str, Any], schema_: dict[str, Any], instance: Any) -> None:
    # The components travel with the schema so that its `$ref`s resolve.
    root = {**schema_, "components": document["components"]}
    jsonschema.Draft202012Validator(root).validate(instance)


# --- served, and only to authenticated clients ---------------------------------


def test_schema__requires_authentication(anonymous):
    response = anonymous.get("/v1/schema/")
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["status"] == "error" and body["error"]["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"


def test_schema__served_document_is_the_tested_one(api):
    response = api.get("/v1/schema/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    served = json.loads(response.content)
    assert served["openapi"] == "3.1.0"
    assert served == json.loads(json.dumps(api_document()))


def test_schema__every_v1_endpoint_is_documented():
    """Every URL pattern under /v1/ (but /healthz) is an operation in the document."""
    document = api_document()
    paths = {p for p in v1_paths() if not p.startswith("/v1/healthz")}
    assert paths == DOCUMENTED_PATHS
    assert paths <= set(document["paths"])


def test_schema__every_operation_requires_authentication():
    document = api_document()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert operation["security"] == [{"tokenAuth": []}, {"cookieAuth": []}], (method, path)
            assert "401" in operation["responses"], (method, path)


# --- every error code, with its status and an example -------------------------


@pytest.mark.parametrize("code,status", sorted(every_error_code().items()))
def test_schema__every_error_code_is_documented_on_resolve(code, status):
    document = api_document()
    documented = document["paths"]["/v1/resolve"]["post"]["responses"]
    assert str(status) in documented, f"{status} ({code}) is not documented"
    media = documented[str(status)]["content"]["application/json"]
    examples = [e["value"] for e in media["examples"].values()]
    assert code in {e["error"]["code"] for e in examples}
    envelope = next(e for e in examples if e["error"]["code"] == code)
    assert envelope["status"] == "error" and envelope["data"] is None
    validate(document, media["schema"], envelope)
    # The schema pins the code to its status: another status's code is refused.
    wrong = {**envelope, "error": {**envelope["error"], "code": "no_such_code"}}
    with pytest.raises(jsonschema.ValidationError):
        validate(document, media["schema"], wrong)


def test_schema__every_example_validates_against_its_schema():
    document = api_document()
    checked = 0
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                media = response.get("content", {}).get("application/json")
                for example in (media or {}).get("examples", {}).values():
                    validate(document, media["schema"], example["value"])
                    checked += 1
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            for example in (body or {}).get("examples", {}).values():
                validate(document, body["schema"], example["value"])
                checked += 1
    assert checked >= 20


def test_schema__request_rejects_unknown_fields_and_limits():
    document = api_document()
    request = document["components"]["schemas"]["ResolveInputRequest"]
    assert request["additionalProperties"] is False
    assert request["properties"]["text"]["maxLength"] == 500
    assert request["properties"]["collection_ids"]["maxItems"] == 50


def test_schema__throttled_and_unauthenticated_declare_their_headers():
    responses = api_document()["paths"]["/v1/resolve"]["post"]["responses"]
    assert responses["429"]["headers"]["Retry-After"]["required"] is True
    assert responses["401"]["headers"]["WWW-Authenticate"]["required"] is True


# --- real responses of every kind validate ------------------------------------


@pytest.fixture
def wsgi(token: str) -> Callable[..., TestResponse]:
    """A request through the whole WSGI stack, as Schemathesis makes it."""
    client = Client(application)

    def call(method: str, path: str, body: Any = None, *, auth: bool = True, **kwargs: Any) -> TestResponse:
        headers = dict(kwargs.pop("headers", {}))
        if auth:
            headers.setdefault("Authorization", f"Token {token}")
        if body is not None and "data" not in kwargs:
            kwargs["data"] = json.dumps(body)
            kwargs.setdefault("content_type", "application/json")
        return client.open(path, method=method, headers=headers, **kwargs)

    return call


def conforms(response: TestResponse, path: str = "/v1/resolve", method: str = "POST") -> dict[str, Any]:
    api_schema()[path][method].validate_response(response)
    return json.loads(response.get_data())


RESOLVE_CASES = [
    ({"text": "Draft portfolio outline", "kind": "task"}, 200, "ok"),
    ({"text": "Team offsite planning", "kind": "task"}, 200, "needs_clarification"),
    ({"text": "bulk chore", "kind": "task"}, 200, "needs_clarification"),
    ({"text": "design", "kind": "event"}, 200, "needs_clarification"),
    ({"text": "zzzz qqqq", "kind": "task"}, 200, "needs_clarification"),
    ({"text": "x" * 501, "kind": "task"}, 400, "invalid_request"),
    ({"text": "x", "kind": "task", "collection_ids": ["c"] * 51}, 400, "invalid_request"),
    ({"text": "x", "kind": "chore"}, 400, "invalid_request"),
    ({"text": "x", "kind": "task", "extra": 1}, 400, "invalid_request"),
    ({"text": "   ", "kind": "task"}, 400, "invalid_request"),
    ({"text": "x", "kind": "task", "collection_ids": ["nope"]}, 400, "collection_not_found"),
]


@pytest.mark.parametrize("body,status,outcome", RESOLVE_CASES)
def test_schema__resolve_responses_conform(wsgi, on_radicale, body, status, outcome):
    response = wsgi("POST", "/v1/resolve", body)
    assert response.status_code == status
    envelope = conforms(response)
    assert outcome in (envelope["status"], (envelope["error"] or {}).get("code"))


@pytest.mark.parametrize("request_kwargs,status,code", [
    ({"auth": False}, 401, "not_authenticated"),
    ({"auth": False, "headers": {"Authorization": "Token not-a-token"}}, 401, "not_authenticated"),
    ({"data": "text=x", "content_type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"),
    ({"headers": {"Accept": "text/html"}}, 406, "not_acceptable"),
    ({"data": "{not json", "content_type": "application/json"}, 400, "invalid_request"),
])
def test_schema__resolve_errors_conform(wsgi, on_radicale, request_kwargs, status, code):
    response = wsgi("POST", "/v1/resolve", {"text": "Weekly sync", "kind": "event"}, **request_kwargs)
    assert response.status_code == status
    assert conforms(response)["error"]["code"] == code


def test_schema__csrf_refusal_conforms(on_radicale, token):
    user = get_user_model().objects.create_user("session-person", password="pw-session-123")
    django_client = DjangoClient()
    django_client.force_login(user)
    client = Client(application)
    client.set_cookie("sessionid", django_client.cookies["sessionid"].value)
    response = client.post("/v1/resolve", data=json.dumps({"text": "Weekly sync", "kind": "event"}),
                           content_type="application/json")
    assert response.status_code == 403
    assert conforms(response)["error"]["code"] == "permission_denied"


def test_schema__throttled_conforms(wsgi, on_radicale, throttle_rate):
    throttle_rate["resolve"] = "1/min"
    assert wsgi("POST", "/v1/resolve", {"text": "Weekly sync", "kind": "event"}).status_code == 200
    response = wsgi("POST", "/v1/resolve", {"text": "Weekly sync", "kind": "event"})
    assert response.status_code == 429
    assert conforms(response)["error"]["code"] == "throttled"


def test_schema__calendar_unavailable_conforms(wsgi, settings, radicale):
    settings.RESOLVER = radicale.settings(CALDAV_URL="http://127.0.0.1:9/", CALDAV_TIMEOUT=2)
    for path, method, body in [("/v1/resolve", "POST", {"text": "Weekly sync", "kind": "event"}),
                               ("/v1/collections", "GET", None)]:
        response = wsgi(method, path, body)
        assert response.status_code == 503
        assert conforms(response, path, method)["error"]["code"] == "calendar_unavailable"


def test_schema__internal_error_conforms(wsgi, on_radicale, monkeypatch):
    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("resolver.services.answer", explode)
    response = wsgi("POST", "/v1/resolve", {"text": "Weekly sync", "kind": "event"})
    assert response.status_code == 500
    assert conforms(response)["error"]["code"] == "internal_error"


def test_schema__reads_conform(wsgi, on_radicale):
    assert conforms(wsgi("GET", "/v1/collections"), "/v1/collections", "GET")["status"] == "ok"
    document = conforms(wsgi("GET", "/v1/schema/"), "/v1/schema/", "GET")
    assert document["openapi"] == "3.1.0"


def test_schema__judged_responses_conform(wsgi, settings, radicale):
    """The judge on: probabilities and provenance in a clarification, and a semantic resolution."""
    from resolver.domain.judgment import QUESTION_ID
    from resolver.models import ApprovedThreshold

    with JevContractServer(default=decisive(1, p=0.97)) as jev:
        settings.RESOLVER = radicale.settings(TYPESAFE_BASE_URL=jev.url, TYPESAFE_API_KEY="k")
        envelope = conforms(wsgi("POST", "/v1/resolve", {"text": "portfolio", "kind": "task"}))
        assert envelope["status"] == "needs_clarification"
        assert envelope["data"]["judgment_provenance"]["model"] == jev.model
        assert all("probability" in c and "suggested" in c for c in envelope["data"]["candidates"])

        from django.utils import timezone

        ApprovedThreshold.objects.create(
            question=QUESTION_ID, model=jev.model, fingerprint=current_fingerprint("jev"), threshold=0.9,
            cases=100, admitted_accuracy=0.99, coverage=0.5, evaluated_at=timezone.now(), active=True,
            approved_at=timezone.now(),
        )
        envelope = conforms(wsgi("POST", "/v1/resolve", {"text": "portfolio", "kind": "task"}))
        assert envelope["status"] == "ok" and envelope["data"]["method"] == "semantic"
        assert envelope["data"]["judgment_provenance"]["candidate_count"] == 2
