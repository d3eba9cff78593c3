"""Every /v1/ error is an envelope, whatever answers it (DRF, Django, a middleware), DEBUG on or off."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db

ENVELOPE_KEYS = {"schema_version", "request_id", "status", "data", "warnings", "error"}
SECRET = "s3cr3t-in-the-cache-url"


@pytest.fixture(params=[False, True], ids=["debug-off", "debug-on"])
def debug(request, settings) -> bool:
    settings.DEBUG = request.param
    # A password in a setting: Django's technical pages would list it.
    settings.CACHE_PASSWORD_PROBE = f"redis://:{SECRET}@127.0.0.1:6379/0"
    return request.param


@pytest.fixture
def token() -> str:
    user = get_user_model().objects.create_user("agent", password="pw-agent-123")
    return Token.objects.create(user=user).key


def _envelope(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = json.loads(response.content)
    assert set(body) == ENVELOPE_KEYS and body["status"] == "error" and body["error"]["code"] == code
    assert SECRET not in response.content.decode() and "Traceback" not in response.content.decode()
    return body


@pytest.mark.parametrize("path", ["/v1/resolve", "/v1/collections", "/v1/nope"])
def test_disallowed_host__is_an_envelope(debug, token, path):
    response = Client(raise_request_exception=False).post(
        path, "{}", content_type="application/json", HTTP_HOST="evil.example", HTTP_AUTHORIZATION=f"Token {token}")
    assert _envelope(response, 400, "invalid_request")["error"]["details"] == {"field": "host"}


def test_too_large_body__declared_is_an_envelope_with_the_limit(debug, token, settings):
    limit = settings.RESOLVER.get("MAX_BODY_BYTES", 65536) if isinstance(settings.RESOLVER, dict) else 65536
    body = json.dumps({"text": "x" * (limit + 10), "kind": "task"})
    response = Client().post("/v1/resolve", body, content_type="application/json",
                             HTTP_AUTHORIZATION=f"Token {token}")
    assert _envelope(response, 400, "invalid_request")["error"]["details"] == {"field": "body", "max_bytes": limit}


def test_too_large_body__a_form_over_djangos_own_limit_is_an_envelope(debug, token, settings):
    """A form body over DATA_UPLOAD_MAX_MEMORY_SIZE: refused by media type, unread, never Django's page."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = Client(raise_request_exception=False).post(
        "/v1/resolve", {"text": "x" * 5000, "kind": "task"}, HTTP_AUTHORIZATION=f"Token {token}")
    _envelope(response, 415, "unsupported_media_type")


def test_unknown_path_and_method__are_envelopes(debug, token):
    client = Client()
    _envelope(client.get("/v1/nope", HTTP_AUTHORIZATION=f"Token {token}"), 404, "not_found")
    _envelope(client.get("/v1/resolve", HTTP_AUTHORIZATION=f"Token {token}"), 405, "method_not_allowed")


def test_page_with_a_foreign_host__no_technical_page_by_default(settings):
    """DEBUG is off unless bin/run turns it on: a foreign Host gets a plain 400, not the settings."""
    from django.conf import settings as live

    from lifeproject import settings as project

    assert project.env("DEBUG") is False  # the project's default, whatever the test runner sets
    response = Client(raise_request_exception=False).get("/resolve/", HTTP_HOST="evil.example")
    assert response.status_code == 400 and b"ALLOWED_HOSTS" not in response.content and not live.DEBUG


def test_root__redirects_to_the_page():
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"] == "/resolve/"
