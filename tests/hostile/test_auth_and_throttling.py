"""Authentication on every /v1/ endpoint but /healthz, and throttling on /v1/resolve."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from resolver.api.views import CollectionsApi, ResolveApi
from tests.hostile.openapi import v1_paths

pytestmark = pytest.mark.django_db

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
BODY = {"text": "Weekly sync", "kind": "event"}
PUBLIC = ("/v1/healthz",)


def protected_paths() -> list[str]:
    return [p for p in v1_paths() if not p.startswith(PUBLIC)]


def test_auth__the_url_configuration_has_protected_endpoints():
    assert {"/v1/resolve", "/v1/collections", "/v1/schema/"} <= set(protected_paths())


@pytest.mark.parametrize("path", protected_paths())
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("credentials", [None, "Token not-a-real-token", "Bearer abc", "Basic ZGVtbzpkZW1v", "Token "])
def test_auth__every_endpoint_requires_authentication(on_radicale, path, method, credentials):
    client = APIClient(raise_request_exception=False)
    if credentials is not None:
        client.credentials(HTTP_AUTHORIZATION=credentials)
    response = client.generic(method, path, '{"text": "Weekly sync", "kind": "event"}',
                              content_type="application/json")
    assert response.status_code == 401, (method, path, response.status_code)
    assert response["WWW-Authenticate"] == "Token"
    if method == "HEAD":
        return
    body = response.json()
    assert body["status"] == "error" and body["data"] is None
    assert body["error"]["code"] == "not_authenticated"
    assert body["request_id"].startswith("req_")


def test_auth__healthz_if_present_is_public(anonymous, on_radicale):
    for path in (p for p in v1_paths() if p.startswith(PUBLIC)):
        assert anonymous.get(path).status_code in (200, 503)


def test_auth__a_deactivated_user_is_refused(api, on_radicale):
    from rest_framework.authtoken.models import Token

    Token.objects.select_related("user").get().user.__class__.objects.update(is_active=False)
    response = api.post("/v1/resolve", BODY, format="json")
    assert (response.status_code, response.json()["error"]["code"]) == (401, "not_authenticated")


# --- throttling ---------------------------------------------------------------------


def test_throttle__both_api_views_read_caldav_so_share_the_resolve_scope():
    """/v1/collections reads the calendar live too (issue 38): one bucket per person with /v1/resolve."""
    rest = django_settings.REST_FRAMEWORK
    assert rest["DEFAULT_THROTTLE_CLASSES"] == ["rest_framework.throttling.ScopedRateThrottle"]
    assert ResolveApi.throttle_scope == "resolve"
    assert CollectionsApi.throttle_scope == "resolve"


def test_throttle__rate_comes_from_the_environment():
    """RESOLVER_THROTTLE_RATE sets the rate; 120/min without it."""
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']['resolve'])")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "RESOLVER_THROTTLE_RATE"}
    env["DJANGO_SETTINGS_MODULE"] = "lifeproject.settings"
    default = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                             check=True)
    custom = subprocess.run([sys.executable, "-c", code], cwd=root, env={**env, "RESOLVER_THROTTLE_RATE": "7/hour"},
                            capture_output=True, text=True, check=True)
    assert (default.stdout.strip(), custom.stdout.strip()) == ("120/min", "7/hour")


def test_throttle__the_configured_rate_is_enforced(api, on_radicale, throttle_rate):
    """The default 120/min: the 121st resolution in a minute is refused, even invalid ones count."""
    configured = django_settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["resolve"]
    throttle_rate["resolve"] = configured
    allowed, _ = ScopedRateThrottle().parse_rate(configured)
    for _ in range(allowed):
        # Invalid bodies: the throttle runs before the view, and these never touch the calendar.
        assert api.post("/v1/resolve", {"kind": "task"}, format="json").status_code == 400
    response = api.post("/v1/resolve", BODY, format="json")
    assert response.status_code == 429


def test_throttle__429_envelope_with_retry_after(api, on_radicale, throttle_rate):
    throttle_rate["resolve"] = "2/min"
    assert [api.post("/v1/resolve", BODY, format="json").status_code for _ in range(2)] == [200, 200]
    response = api.post("/v1/resolve", BODY, format="json")
    assert response.status_code == 429
    body = response.json()
    assert body["status"] == "error" and body["data"] is None
    assert body["error"]["code"] == "throttled"
    wait = body["error"]["details"]["retry_after_seconds"]
    assert 1 <= wait <= 60
    assert response["Retry-After"] == str(wait)


def test_throttle__per_client(api, on_radicale, throttle_rate, db):
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    throttle_rate["resolve"] = "1/min"
    assert api.post("/v1/resolve", BODY, format="json").status_code == 200
    assert api.post("/v1/resolve", BODY, format="json").status_code == 429
    other = APIClient()
    user = get_user_model().objects.create_user("second-agent", password="pw-second-123")
    other.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert other.post("/v1/resolve", BODY, format="json").status_code == 200


def test_throttle__collections_share_the_bucket_and_anonymous_clients_are_not_counted(api, anonymous, on_radicale,
                                                                                     throttle_rate):
    throttle_rate["resolve"] = "1/min"
    for _ in range(3):
        # Authentication comes first: an anonymous client learns nothing, not even its budget.
        assert anonymous.post("/v1/resolve", BODY, format="json").status_code == 401
    assert api.get("/v1/collections").status_code == 200
    # /v1/collections reads the calendar too (issue 38): it used the person's minute.
    assert api.post("/v1/resolve", BODY, format="json").status_code == 429


def test_throttle__counts_live_in_the_cache(api, on_radicale, throttle_rate):
    from django.core.cache import cache

    throttle_rate["resolve"] = "1/min"
    assert api.post("/v1/resolve", BODY, format="json").status_code == 200
    assert api.post("/v1/resolve", BODY, format="json").status_code == 429
    cache.clear()
    assert api.post("/v1/resolve", BODY, format="json").status_code == 200
