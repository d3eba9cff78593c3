"""The throttling service (resolver/throttling.py): every door counts through `take`; DRF's class adapts it."""
from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.throttling import ScopedRateThrottle

from resolver import throttling


@pytest.fixture(autouse=True)
def two_a_minute(monkeypatch):
    # DRF copies DEFAULT_THROTTLE_RATES onto its class on first import; the service reads it there.
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"resolve": "2/min"})
    cache.clear()
    yield
    cache.clear()


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_take__allows_the_rate_then_advises_the_wait():
    clock = Clock()
    assert throttling.take(7, clock=clock).allowed
    clock.now += 10
    assert throttling.take(7, clock=clock).allowed
    refused = throttling.take(7, clock=clock)
    assert (refused.allowed, refused.wait_seconds) == (False, 50.0)  # DRF's arithmetic: the oldest ages out
    clock.now += 50
    assert throttling.take(7, clock=clock).allowed


def test_take__drfs_cache_key_and_history():
    """The API's bucket as DRF keeps it: `throttle_<scope>_<ident>`, newest first."""
    clock = Clock()
    throttling.take(7, clock=clock)
    clock.now += 1
    throttling.take(7, clock=clock)
    assert cache.get("throttle_resolve_7") == [1001.0, 1000.0]


def test_take__falls_back_to_the_apps_setting(monkeypatch, settings):
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {})
    settings.RESOLVER = {**settings.RESOLVER, "THROTTLE_RATE": "1/hour"}
    assert throttling.rate_for("resolve") == "1/hour"
    assert throttling.take("x").allowed and not throttling.take("x").allowed


def test_rate_wait__one_bucket_with_the_api_adapter(rf):
    """A refusal through the adapter's bucket is a refusal for `rate_wait`, and the other way round."""
    from django.contrib.auth.models import AnonymousUser

    class View:
        throttle_scope = "resolve"

    class User(AnonymousUser):
        pk = 42
        is_authenticated = True

    request = rf.post("/v1/resolve")
    request.user = User()
    assert throttling.ResolveThrottle().allow_request(request, View())
    assert throttling.rate_wait(42) is None
    adapter = throttling.ResolveThrottle()
    assert not adapter.allow_request(request, View())
    assert adapter.wait() is not None and 0 < adapter.wait() <= 60
    assert 0 < throttling.rate_wait(42) <= 60


def test_resolve_throttle__a_view_without_a_scope_is_not_counted(rf):
    class View:
        pass

    assert all(throttling.ResolveThrottle().allow_request(rf.get("/"), View()) for _ in range(5))
    assert cache.get("throttle_resolve_127.0.0.1") is None


def test_check_rate__throttled_with_retry_after():
    from resolver.domain.errors import Throttled

    throttling.check_rate(5)
    throttling.check_rate(5)
    with pytest.raises(Throttled) as raised:
        throttling.check_rate(5)
    assert raised.value.details["reason"] == "rate" and 1 <= raised.value.details["retry_after_seconds"] <= 60
