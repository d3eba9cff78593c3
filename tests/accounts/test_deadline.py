"""One deadline for every request that reads CalDAV (issue 26, point 2), the header phase included.

A server that sends its status line and headers one byte a second never lets a
per-read timeout fire; every door must still end at RESOLVER_RESOLUTION_BUDGET_SECONDS
with calendar_unavailable / timeout, and the accounts page must list what it could read.
"""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver import accounts, services
from resolver.domain.errors import CalendarUnavailable
from resolver.models import CalendarAccount
from tests.support.network import HeaderTrickler

pytestmark = pytest.mark.django_db


@pytest.fixture
def trickler():
    with HeaderTrickler() as server:
        yield server


@pytest.fixture
def shared_trickler(settings, trickler):
    """The settings account points at the trickler; the budget is short, the socket timeout long."""
    settings.RESOLVER = {"CALDAV_URL": trickler.url, "CALDAV_USERNAME": "u", "CALDAV_PASSWORD": "p",
                         "CALDAV_TIMEOUT": 5.0, "RESOLUTION_BUDGET_SECONDS": 1.0, "SITE_URL": "http://testserver"}
    return trickler


def test_api_collections__header_trickle_ends_at_the_deadline(shared_trickler, django_user_model):
    user = django_user_model.objects.create_user("alice")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    response = client.get("/v1/collections")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "calendar_unavailable" and error["details"]["reason"] == "timeout"
    assert shared_trickler.cut.wait(10)  # hung up mid-headers, not after the server gave up


def test_api_resolve__tls_handshake_trickle_ends_at_the_deadline(settings, django_user_model):
    """A server trickling its TLS handshake record a byte at a time: each read is in time, the whole is not."""
    with HeaderTrickler(tls=True, max_bytes=8) as server:  # 3.2 s, then it closes: past the budget, within the timeout
        settings.RESOLVER = {"CALDAV_URL": server.url, "CALDAV_USERNAME": "u", "CALDAV_PASSWORD": "p",
                             "CALDAV_TIMEOUT": 5.0, "RESOLUTION_BUDGET_SECONDS": 1.0,
                             "SITE_URL": "http://testserver"}
        user = django_user_model.objects.create_user("alice")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        response = client.post("/v1/resolve", {"text": "Quarterly report", "kind": "task"}, format="json")
        assert response.status_code == 503
        error = response.json()["error"]
        assert error["code"] == "calendar_unavailable" and error["details"]["reason"] == "timeout"
        assert server.cut.wait(10)  # hung up mid-handshake, not after the server gave up


def test_mcp_list_collections__header_trickle_ends_at_the_deadline(shared_trickler):
    envelope = call_mcp_tool(services.Caller(door="mcp"), "list_collections")
    assert envelope["error"]["code"] == "calendar_unavailable" and envelope["error"]["details"]["reason"] == "timeout"
    assert shared_trickler.cut.wait(10)


def call_mcp_tool(caller: services.Caller, name: str, arguments: dict | None = None) -> dict:
    """The MCP door's own tool handler (resolver/mcp/tools.py), called in process, its envelope back."""
    import anyio
    import mcp_types as types

    from resolver.mcp.tools import Tools

    params = types.CallToolRequestParams(name=name, arguments=arguments)
    outcome = anyio.run(lambda: Tools(caller=caller).call(None, params))
    return outcome.structured_content


def test_resolve_command__header_trickle_ends_at_the_deadline(shared_trickler):
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("resolve", "--text", "Quarterly report", "--kind", "task", "--json", stdout=out,
                     stderr=io.StringIO())
    envelope = json.loads(out.getvalue())
    assert exit_.value.code == 4
    assert envelope["error"]["code"] == "calendar_unavailable" and envelope["error"]["details"]["reason"] == "timeout"
    assert shared_trickler.cut.wait(10)


def test_accounts_page__lists_what_it_read_and_says_which_it_could_not(per_user, settings, trickler,
                                                                        django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "CALDAV_TIMEOUT": 5.0, "RESOLUTION_BUDGET_SECONDS": 1.5}
    user = django_user_model.objects.create_user("alice")
    url, username, password = per_user.alice
    accounts.add_account(user=user, url=url, username=username, password=password, label="Home")
    slow = CalendarAccount(user=user, slug="slow", url=trickler.url, username="u")
    slow.save()
    slow.set_password("p")
    slow.save()
    client = Client()
    client.force_login(user)
    page = client.get("/resolve/accounts/").content.decode()
    assert "home/work" in page and "home/personal" in page
    assert "1 of 2 accounts could not be read" in page
    states = {state.account.slug: state for state in accounts.overview(user)}
    assert states["home"].error is None
    assert states["slow"].error is not None and states["slow"].error.details["reason"] == "timeout"
    assert trickler.cut.wait(10)


def test_add_account__header_trickle_ends_at_the_deadline(per_user, settings, trickler, django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "CALDAV_TIMEOUT": 5.0, "RESOLUTION_BUDGET_SECONDS": 1.0}
    user = django_user_model.objects.create_user("mallory")
    from resolver.domain.errors import AccountRejected

    with pytest.raises(AccountRejected) as caught:
        accounts.add_account(user=user, url=trickler.url, username="u", password="p")
    assert caught.value.details["reason"] == "unreachable" and not CalendarAccount.objects.exists()
    assert trickler.cut.wait(10)


def _token_for(user) -> str:
    from resolver import clarifications
    from resolver.domain.items import Kind

    claims = clarifications.ClarificationClaims(request_id="req_deadline", kind=Kind.TASK, collection_ids=(),
                                                candidate_ids=("itm_a", "itm_b"), user_id=str(user.pk))
    return clarifications.issue(claims)


@pytest.mark.parametrize("method", ["get", "post"])
def test_clarification_page_and_pick__header_trickle_ends_at_the_deadline(shared_trickler, django_user_model,
                                                                          method):
    from django.urls import reverse

    user = django_user_model.objects.create_user("alice")
    client = Client()
    client.force_login(user)
    path = reverse("resolver_web:clarify", kwargs={"token": _token_for(user)})
    response = client.get(path) if method == "get" else client.post(path, {"item_id": "itm_a"})
    assert response.status_code == 503  # the page's "cannot be read right now"
    assert shared_trickler.cut.wait(10)
