"""X-Forwarded-For is believed only from a proxy the operator names (RESOLVER["TRUSTED_PROXIES"]).

Believed from anyone, a client sends a new address with every request and no
per-address throttle ever counts it twice. The servers as started (bin/run's
uvicorn, the production gunicorn) are tested in tests/mcp_http/test_limits.py, the
address rule case by case (resolver/client_address.py) in tests/test_client_address.py.
"""
from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from django.test import Client

from lifeproject.dev import uvicorn_command
from resolver.throttling import ResolveThrottle

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def _token_posts(count: int, *, remote: str = "127.0.0.1", forwarded=lambda n: f"198.51.100.{n}") -> list[int]:
    client = Client()
    return [client.post("/oauth/token/", {"client_id": "x"}, REMOTE_ADDR=remote,
                        HTTP_X_FORWARDED_FOR=forwarded(n)).status_code for n in range(count)]


@pytest.fixture
def oauth_rate(settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_THROTTLE_RATE": "10/min"}
    return settings


def test_oauth_throttle__a_new_forwarded_for_per_request_is_still_one_client(oauth_rate):
    statuses = _token_posts(40)
    assert statuses.count(429) == 30


def test_oauth_throttle__a_named_proxy_is_believed(oauth_rate):
    oauth_rate.RESOLVER = {**oauth_rate.RESOLVER, "TRUSTED_PROXIES": ["127.0.0.1"]}
    assert _token_posts(40).count(429) == 0  # forty clients behind the proxy


def test_oauth_throttle__behind_a_named_proxy_the_client_cannot_prepend_addresses(oauth_rate):
    oauth_rate.RESOLVER = {**oauth_rate.RESOLVER, "TRUSTED_PROXIES": ["10.0.0.0/8"]}
    # The client sends a made-up X-Forwarded-For; the proxy (10.0.0.5) appends the address it saw.
    statuses = _token_posts(40, remote="10.0.0.5", forwarded=lambda n: f"192.0.2.{n}, 203.0.113.9")
    assert statuses.count(429) == 30


def test_oauth_throttle__a_header_from_a_stranger_is_ignored_even_with_a_proxy_named(oauth_rate):
    oauth_rate.RESOLVER = {**oauth_rate.RESOLVER, "TRUSTED_PROXIES": ["10.0.0.0/8"]}
    assert _token_posts(40, remote="203.0.113.50").count(429) == 30


def test_drf_throttle__the_apps_rule_not_drfs(rf, settings):
    request = rf.post("/v1/resolve", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert ResolveThrottle().get_ident(request) == "127.0.0.1"
    assert settings.REST_FRAMEWORK["NUM_PROXIES"] == 0  # DRF's own throttles: REMOTE_ADDR


def test_servers__trust_no_proxy_by_default(monkeypatch):
    assert "--no-proxy-headers" in uvicorn_command(8000)  # bin/run
    monkeypatch.delenv("RESOLVER_TRUSTED_PROXIES", raising=False)
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "127.0.0.1")  # gunicorn's and uvicorn's own default: not used
    assert runpy.run_path(str(ROOT / "gunicorn.conf.py"))["forwarded_allow_ips"] == ""
    monkeypatch.setenv("RESOLVER_TRUSTED_PROXIES", "10.0.0.0/8")
    assert runpy.run_path(str(ROOT / "gunicorn.conf.py"))["forwarded_allow_ips"] == "10.0.0.0/8"
