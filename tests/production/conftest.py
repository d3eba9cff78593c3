"""Fixtures for the production-shape tests.

Tests marked `services` need the machine's PostgreSQL and Redis. The
`services` fixture probes them once: where they are absent the test skips
with the reason, unless LIFEPROJECT_REQUIRE_SERVICES=1, where it fails.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Iterator

import pytest

from tests.production import servers


@pytest.fixture(autouse=True)
def isolated_cache(settings, monkeypatch) -> Iterator[None]:
    """Here the cache is the configured one (the file cache, or Redis in the services run).

    It replaces the suite's per-test in-memory cache (tests/conftest.py),
    which would hide the backend these tests are about. Isolation comes from
    a key prefix of each test's own, never from clearing a shared Redis.
    """
    from rest_framework.throttling import ScopedRateThrottle

    configured = dict(settings.CACHES["default"])
    prefix = f"{configured.get('KEY_PREFIX', '')}t{secrets.token_hex(4)}"
    settings.CACHES = {"default": {**configured, "KEY_PREFIX": prefix}}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"resolve": "100000/min"})
    yield


@dataclass(frozen=True)
class Services:
    database_url: str  # a fresh database of this test's own
    cache_url: str  # Redis, with a key prefix of this test's own
    cache_prefix: str


@pytest.fixture(scope="session")
def services_problem() -> str | None:
    return servers.postgres_problem() or servers.redis_problem()


@pytest.fixture
def services(services_problem: str | None) -> Iterator[Services]:
    if services_problem is not None:
        if servers.REQUIRE_SERVICES:
            pytest.fail(f"LIFEPROJECT_REQUIRE_SERVICES=1 but {services_problem}")
        pytest.skip(services_problem)
    prefix = f"lp-test-{secrets.token_hex(4)}"
    with servers.fresh_database() as url:
        try:
            yield Services(database_url=url, cache_url=servers.redis_cache_url(prefix), cache_prefix=prefix)
        finally:
            servers.clear_redis_prefix(prefix)
