"""The key scenarios, on whichever database and cache the settings name.

In the ordinary run these use the embedded default (SQLite and the file
cache). `test_services.py::test_key_scenarios__on_postgresql_and_redis` runs
this same file again in a child pytest with DATABASE_URL and CACHE_URL
pointing at PostgreSQL and Redis and LIFEPROJECT_TEST_SERVICES=1, so each
scenario is proven on both. The whole suite can be run that way too:

    LIFEPROJECT_TEST_SERVICES=1 DATABASE_URL=postgres://... CACHE_URL=redis://... pytest tests
"""
from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver import provenance
from resolver.domain.judgment import QUESTION_ID
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint
from tests.support.jev_contract_server import DEFAULT_MODEL, JevContractServer, decisive

pytestmark = pytest.mark.django_db

ON_SERVICES = os.environ.get("LIFEPROJECT_TEST_SERVICES", "") == "1"


@pytest.fixture
def jev():
    with JevContractServer() as server:
        yield server


@pytest.fixture
def api(radicale, settings, jev) -> APIClient:
    settings.RESOLVER = radicale.settings(TYPESAFE_BASE_URL=jev.url, JUDGMENT_BUDGET_SECONDS=3.0)
    user = get_user_model().objects.create_user("scenario-agent", password="pw-scenario-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def approve(threshold: float) -> ApprovedThreshold:
    now = datetime.now(timezone.utc)
    return ApprovedThreshold.objects.create(
        question=QUESTION_ID, model=DEFAULT_MODEL, fingerprint=current_fingerprint("jev"), threshold=threshold,
        cases=400, admitted_accuracy=0.99, coverage=0.7, risk_upper_bound=0.02, evaluated_at=now,
        active=True, approved_at=now,
    )


def test_scenario__backends_in_use():
    """The run is on the backends it claims: PostgreSQL + Redis, or SQLite + file cache."""
    backend = django_settings.CACHES["default"]["BACKEND"]
    if ON_SERVICES:
        assert connection.vendor == "postgresql"
        assert backend == "django.core.cache.backends.redis.RedisCache"
    else:
        assert connection.vendor == "sqlite"
        assert backend == "django.core.cache.backends.filebased.FileBasedCache"


def test_scenario__exact_reference_over_the_api(api, jev):
    response = api.post("/v1/resolve", {"text": "Draft portfolio outline", "kind": "task"}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok" and body["data"]["uid"] == "t-portfolio"
    assert body["data"]["method"] == "deterministic"
    assert jev.systemone_requests == []


def test_scenario__approved_threshold_resolves_and_provenance_is_cached(api, jev):
    approve(0.8)
    jev.push(decisive(1, p=0.95))
    response = api.post("/v1/resolve", {"text": "portfolio", "kind": "task"}, format="json")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok" and body["data"]["method"] == "semantic"
    entry = provenance.get(body["request_id"])
    assert entry is not None and entry["decision"] == "ok"
    assert body["data"]["item_id"] in entry["number_to_item_id"].values()


def test_scenario__ambiguous_reference_asks(api, jev):
    response = api.post("/v1/resolve", {"text": "Team offsite planning", "kind": "task"}, format="json")
    body = response.json()
    assert body["status"] == "needs_clarification"
    assert {c["uid"] for c in body["data"]["candidates"]} == {"t-offsite-work", "t-offsite-personal"}


def test_scenario__invalid_reference_is_an_error_envelope(api):
    response = api.post("/v1/resolve", {"text": "x", "kind": "meeting"}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_request"


def test_scenario__healthz_all_green(client, radicale, settings):
    settings.RESOLVER = radicale.settings()
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok" and body["failed"] == []
    assert set(body["checks"]) == {"database", "cache", "caldav"}
