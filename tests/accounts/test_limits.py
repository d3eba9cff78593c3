"""Limits for people (issue 26, point 3): accounts per person, and a throttle on account checks
per person and per client address, with `throttled` and Retry-After like the API's."""
from __future__ import annotations

import pytest
from django.test import Client

from resolver import accounts
from resolver.domain.errors import AccountRejected, Throttled
from resolver.models import CalendarAccount
from resolver.throttling import AttemptLimiter, parse_rate
from tests.support.network import Listener

pytestmark = pytest.mark.django_db


def test_max_per_user__refused_before_any_check(per_user, settings, django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_MAX_PER_USER": 1}
    user = django_user_model.objects.create_user("frank")
    url, username, password = per_user.alice
    accounts.add_account(user=user, url=url, username=username, password=password)
    with Listener() as listener, pytest.raises(AccountRejected) as caught:
        accounts.add_account(user=user, url=f"http://127.0.0.1:{listener.port}/", username="u", password="p")
    assert caught.value.details["reason"] == "too_many_accounts" and "1 accounts" in caught.value.message
    assert listener.untouched and CalendarAccount.objects.filter(user=user).count() == 1


def test_check_rate__per_person_then_throttled_without_contacting_the_server(per_user, settings, django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_CHECK_RATE": "2/hour"}
    user = django_user_model.objects.create_user("mallory")
    url, username, _ = per_user.alice
    for guess in ("guess one", "guess two"):
        with pytest.raises(AccountRejected) as caught:
            accounts.add_account(user=user, url=url, username=username, password=guess)
        assert caught.value.details["reason"] == "unauthorized"
    with Listener() as listener, pytest.raises(Throttled) as caught:
        accounts.add_account(user=user, url=f"http://127.0.0.1:{listener.port}/", username=username,
                             password="guess three")
    assert caught.value.code == "throttled" and caught.value.http_status == 429
    assert 0 < caught.value.details["retry_after_seconds"] <= 3600
    assert listener.untouched and not CalendarAccount.objects.exists()


def test_page__throttled_per_client_address_with_retry_after(per_user, settings, django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_CHECK_RATE": "2/hour"}
    url, username, _ = per_user.alice
    statuses = []
    for name in ("m1", "m2", "m3"):  # three people, one address
        client = Client(REMOTE_ADDR="198.51.100.7")
        client.force_login(django_user_model.objects.create_user(name))
        response = client.post("/resolve/accounts/", {"url": url, "username": username, "password": "guess"})
        statuses.append(response.status_code)
    assert statuses == [400, 400, 429]
    assert int(response["Retry-After"]) > 0 and "Too many account checks" in response.content.decode()
    # Another address is not held back by this one.
    client = Client(REMOTE_ADDR="198.51.100.8")
    client.force_login(django_user_model.objects.create_user("m4"))
    assert client.post("/resolve/accounts/", {"url": url, "username": username, "password": "g"}).status_code == 400


def test_attempt_limiter__sliding_window():
    from django.core.cache import cache

    now = [1000.0]
    limiter = AttemptLimiter("t", "2/minute", cache=cache, clock=lambda: now[0])
    limiter.attempt(["k"])
    now[0] += 10
    limiter.attempt(["k"])
    with pytest.raises(Throttled) as caught:
        limiter.attempt(["k"])
    assert caught.value.details["retry_after_seconds"] == 50
    now[0] += 51
    limiter.attempt(["k"])  # the first attempt left the window


@pytest.mark.parametrize("rate, expected", [("10/hour", (10, 3600)), ("3/s", (3, 1)), ("5/day", (5, 86400))])
def test_parse_rate(rate, expected):
    assert parse_rate(rate) == expected
