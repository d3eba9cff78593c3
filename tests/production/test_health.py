"""GET /healthz: 200 when everything answers, 503 naming what did not; no auth, no secrets."""
from __future__ import annotations

import json

import pytest

from lifeproject.embedded_radicale import free_port

pytestmark = pytest.mark.django_db


def test_healthz__ok_without_authentication(client, radicale, settings):
    settings.RESOLVER = radicale.settings()
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok" and body["failed"] == []
    for check in body["checks"].values():
        assert check["ok"] is True and check["latency_ms"] >= 0
    assert "no-store" in response["Cache-Control"]


def test_healthz__caldav_down_is_503_naming_it(client, radicale, settings):
    settings.RESOLVER = radicale.settings(CALDAV_URL=f"http://127.0.0.1:{free_port()}/", CALDAV_TIMEOUT=2.0)
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "error" and body["failed"] == ["caldav"]
    assert body["checks"]["caldav"] == {"ok": False, "latency_ms": body["checks"]["caldav"]["latency_ms"],
                                        "reason": "unreachable"}
    assert body["checks"]["database"]["ok"] and body["checks"]["cache"]["ok"]


def test_healthz__wrong_caldav_password_says_so_without_secrets(client, radicale, settings):
    settings.RESOLVER = radicale.settings(CALDAV_PASSWORD="not-the-password-4711")
    response = client.get("/healthz")
    text = response.content.decode()
    assert response.status_code == 503 and response.json()["checks"]["caldav"]["reason"] == "unauthorized"
    for secret in ("not-the-password-4711", radicale.instance.password, radicale.instance.username, radicale.url):
        assert secret not in text


def test_healthz__cache_that_drops_writes_is_503(client, radicale, settings):
    settings.RESOLVER = radicale.settings()
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["failed"] == ["cache"]


def test_healthz__database_failure_is_503(client, radicale, settings, monkeypatch):
    from lifeproject import health

    def broken() -> None:
        raise RuntimeError("connection to server at 10.0.0.9 failed: password authentication failed")

    settings.RESOLVER = radicale.settings()
    monkeypatch.setitem(health.CHECKS, "database", broken)
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["failed"] == ["database"]
    # The reason is the exception's type: its message could quote a connection string.
    assert body["checks"]["database"]["reason"] == "RuntimeError"
    assert "10.0.0.9" not in json.dumps(body)


def test_healthz__only_safe_methods(client, radicale, settings):
    settings.RESOLVER = radicale.settings()
    assert client.post("/healthz").status_code == 405
    assert client.head("/healthz").status_code == 200
