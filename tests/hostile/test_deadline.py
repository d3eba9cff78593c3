"""Every bound holds against a hostile server and a hostile person (issue 38): one deadline per request.

Three breaks, each through the documented doors (API, pages, both commands, the MCP tool handler):

1. A chunked answer whose chunk-size line (its extension) or trailer comes a byte
   at a time: inside one read http.client reads that line socket read after
   socket read, each in time. The request must end with calendar_unavailable /
   timeout and hang up on the server before it finished sending (`cut`, `sent`).
   The same for a name whose lookup never comes back in time.
2. Steps that run one after another in a door share one deadline: the second
   sees the first's (the same `Deadline` object), and a first step that spent
   it leaves the second nothing (it never connects).
3. The judge's budget is capped by what is left of the request's.

Then the per-person bounds every door that reads CalDAV has: the rate (one
bucket with /v1/resolve) and the requests in flight (throttled / in_flight,
429 and Retry-After).

No test asserts a duration: each asserts the outcome code and what the
scripted peer saw (the client hung up while it was still sending, or a
second server was never contacted).
"""
from __future__ import annotations

import io
import json
from types import SimpleNamespace

import anyio
import mcp_types as types
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from resolver import accounts, clarifications, deadline, services
from resolver.domain.errors import AccountRejected, CalendarUnavailable, CandidateGone
from resolver.domain.items import Kind
from resolver.models import CalendarAccount
from tests.support.slow_peers import ChunkTrickler, SilentServer, SlowDNS

pytestmark = pytest.mark.django_db

STRONG_KEY = "k" * 10 + "Qx7!vR2#pL9@wN4$zT6%yB8^mC1&hJ3*fD5(gS0)eA" + "u" * 10
# The budget is short, the socket timeout long: only the deadline can end the exchange.
BUDGET = {"CALDAV_TIMEOUT": 5.0, "RESOLUTION_BUDGET_SECONDS": 1.0, "SITE_URL": "http://testserver"}
WHERE = ["size", "trailer"]


@pytest.fixture(params=WHERE)
def trickler(request):
    with ChunkTrickler(where=request.param) as server:
        yield server


@pytest.fixture
def shared(settings, trickler):
    """The settings' one account is the trickler."""
    settings.RESOLVER = {"CALDAV_URL": trickler.url, "CALDAV_USERNAME": "u", "CALDAV_PASSWORD": "p", **BUDGET}
    return trickler


@pytest.fixture
def per_user(settings):
    settings.SECRET_KEY = STRONG_KEY
    settings.RESOLVER = {"ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
                         "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": True, **BUDGET}


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice")


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def page_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def saved_account(user, url: str, slug: str) -> CalendarAccount:
    account = CalendarAccount(user=user, slug=slug, url=url, username="u")
    account.save()
    account.set_password("p")
    account.save()
    return account


def assert_cut(server: ChunkTrickler) -> None:
    """The client hung up while the line was still coming, not after the server had sent it all."""
    assert server.cut.wait(10)
    assert server.sent < server.max_bytes and not server.finished.is_set()


def assert_timeout(error: dict) -> None:
    assert error["code"] == "calendar_unavailable" and error["details"]["reason"] == "timeout", error


def token_for(user) -> str:
    claims = clarifications.ClarificationClaims(request_id="req_deadline", kind=Kind.TASK, collection_ids=(),
                                                candidate_ids=("itm_a", "itm_b"), user_id=str(user.pk))
    return clarifications.issue(claims)


def call_tool(caller: services.Caller, name: str, arguments: dict | None = None, ctx=None, **params) -> dict:
    """The MCP door's own tool handler (resolver/mcp/tools.py), in process; its envelope back."""
    from resolver.mcp.tools import Tools

    request = types.CallToolRequestParams(name=name, arguments=arguments, **params)
    outcome = anyio.run(lambda: Tools(caller=caller).call(ctx, request))
    return outcome.structured_content


# --- 1. a chunk-size line or a trailer trickled a byte at a time ------------------------------------


def test_api_resolve__trickled_chunk_line_ends_at_the_deadline(shared, alice):
    response = api_for(alice).post("/v1/resolve", {"text": "Quarterly report", "kind": "task"}, format="json")
    assert response.status_code == 503
    assert_timeout(response.json()["error"])
    assert_cut(shared)


def test_api_collections__trickled_chunk_line_ends_at_the_deadline(shared, alice):
    response = api_for(alice).get("/v1/collections")
    assert response.status_code == 503
    assert_timeout(response.json()["error"])
    assert_cut(shared)


def test_clarification_page__trickled_chunk_line_ends_at_the_deadline(shared, alice):
    path = reverse("resolver_web:clarify", kwargs={"token": token_for(alice)})
    response = page_for(alice).get(path)
    assert response.status_code == 503  # the page's "cannot be read right now"
    assert_cut(shared)


def test_mcp_tools__trickled_chunk_line_ends_at_the_deadline(shared):
    envelope = call_tool(services.Caller(door="mcp"), "list_collections")
    assert_timeout(envelope["error"])
    assert_cut(shared)


def test_resolve_command__trickled_chunk_line_ends_at_the_deadline(shared):
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("resolve", "--text", "Quarterly report", "--kind", "task", "--json", stdout=out,
                     stderr=io.StringIO())
    assert exit_.value.code == 4
    assert_timeout(json.loads(out.getvalue())["error"])
    assert_cut(shared)


def test_accounts_page__trickled_chunk_line_ends_at_the_deadline(per_user, trickler, alice):
    saved_account(alice, trickler.url, "slow")
    page = page_for(alice).get("/resolve/accounts/")
    assert page.status_code == 200
    assert "1 of 1 account could not be read" in page.content.decode()
    assert_cut(trickler)


def test_adding_an_account__trickled_chunk_line_ends_at_the_deadline(per_user, trickler, alice):
    page = page_for(alice).post("/resolve/accounts/", {"url": trickler.url, "username": "u", "password": "p"})
    assert page.status_code == 400
    assert "could not be reached" in page.content.decode()
    assert not CalendarAccount.objects.exists()
    assert_cut(trickler)


def test_calendar_accounts_add_command__trickled_chunk_line_ends_at_the_deadline(per_user, trickler, alice,
                                                                                  monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("p\n"))
    with pytest.raises(CommandError) as caught:
        call_command("calendar_accounts", "add", "--user", "alice", "--url", trickler.url, "--username", "u",
                     "--password-stdin", stdout=io.StringIO())
    assert caught.value.returncode == 2 and "account_rejected (unreachable)" in str(caught.value)
    assert_cut(trickler)


# --- 1b. a name whose lookup does not come back --------------------------------------------------


@pytest.fixture
def slow_name(settings):
    settings.SECRET_KEY = STRONG_KEY
    settings.RESOLVER = {"ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
                         "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": False, **BUDGET}
    with SlowDNS("slow-dns.example").installed() as dns:
        yield dns


def test_adding_an_account__slow_dns_ends_at_the_deadline(slow_name, alice):
    with pytest.raises(AccountRejected) as caught:
        accounts.add_account(user=alice, url="http://slow-dns.example/", username="u", password="p")
    assert slow_name.pending() == 1  # the request stopped waiting; the lookup had not answered
    assert caught.value.details["reason"] == "unreachable" and not CalendarAccount.objects.exists()


def test_api_resolve__slow_dns_of_a_saved_account_ends_at_the_deadline(slow_name, alice):
    saved_account(alice, "http://slow-dns.example/", "slow")
    response = api_for(alice).post("/v1/resolve", {"text": "Quarterly report", "kind": "task"}, format="json")
    assert slow_name.pending() == 1
    assert response.status_code == 503
    assert_timeout(response.json()["error"])


def test_api_resolve__slow_dns_of_the_operators_own_server_ends_at_the_deadline(settings, alice):
    """The settings' CALDAV_URL is the operator's (connected by name, private allowed), but its lookup is
    still bounded by the request's deadline (resolver/watchdog.py), not by the system resolver's timeouts."""
    settings.RESOLVER = {"CALDAV_URL": "http://slow-dns.example/", "CALDAV_USERNAME": "u", "CALDAV_PASSWORD": "p",
                         **BUDGET}
    with SlowDNS("slow-dns.example", address="127.0.0.1").installed() as dns:
        response = api_for(alice).post("/v1/resolve", {"text": "Quarterly report", "kind": "task"}, format="json")
        assert dns.pending() == 1  # the request stopped waiting; the lookup had not answered
    assert response.status_code == 503
    assert_timeout(response.json()["error"])


# --- 2. consecutive steps share one deadline ------------------------------------------------------


def test_accounts_page_post__adding_spends_the_budget_the_overview_then_has_none(per_user, alice):
    """Adding (the first step) is held until the deadline; the overview (the second) must not get a new one:
    the saved account's server is never even contacted."""
    with ChunkTrickler(where="size") as adding, ChunkTrickler(where="size") as listed:
        saved_account(alice, listed.url, "saved")
        page = page_for(alice).post("/resolve/accounts/", {"url": adding.url, "username": "u", "password": "p"})
        assert page.status_code == 400 and "could not be reached" in page.content.decode()
        assert "1 of 1 account could not be read" in page.content.decode()
        assert_cut(adding)
        assert listed.requests == 0


def test_accounts_page_post__both_steps_see_the_same_deadline(per_user, alice, monkeypatch):
    seen = []

    def add_account(**kwargs):
        seen.append(deadline.current())
        raise AccountRejected("no", details={"reason": "unreachable"})

    def overview(user):
        seen.append(deadline.current())
        return []

    monkeypatch.setattr(accounts, "add_account", add_account)
    monkeypatch.setattr(accounts, "overview", overview)
    page = page_for(alice).post("/resolve/accounts/", {"url": "http://x.example/", "username": "u", "password": "p"})
    assert page.status_code == 400
    assert len(seen) == 2 and seen[0] is not None and seen[0] is seen[1]


def test_clarification_page_post__pick_then_reread_share_one_deadline(shared, alice, monkeypatch):
    """The item is gone (the pick's step), then the question is shown again (a second read): one deadline."""
    seen = []

    def pick(claims, *, item_id, caller):
        seen.append(deadline.current())
        raise CandidateGone()

    def candidates(claims, *, caller):
        seen.append(deadline.current())
        raise CalendarUnavailable(details={"reason": "timeout"})

    monkeypatch.setattr(services, "pick", pick)
    monkeypatch.setattr(services, "clarification_candidates", candidates)
    path = reverse("resolver_web:clarify", kwargs={"token": token_for(alice)})
    response = page_for(alice).post(path, {"item_id": "itm_a"})
    assert response.status_code == 503
    assert len(seen) == 2 and seen[0] is not None and seen[0] is seen[1]


def test_mcp_retry__pick_then_resolving_afresh_share_one_deadline(shared, alice, monkeypatch):
    """A 2026-07-28 retry whose pick no longer stands resolves afresh: the same deadline for both steps."""
    from resolver.mcp import tools

    seen = []
    claims = clarifications.ClarificationClaims(request_id="req_x", kind=Kind.TASK, collection_ids=(),
                                                candidate_ids=("itm_a",), user_id=str(alice.pk))

    def pick(claims, *, item_id, caller):
        seen.append(deadline.current())
        raise CandidateGone()

    def answer(document, *, caller, request_id=None):
        seen.append(deadline.current())
        raise CalendarUnavailable(details={"reason": "timeout"})

    monkeypatch.setattr(services, "read_clarification", lambda token, caller: claims)
    monkeypatch.setattr(services, "pick", pick)
    monkeypatch.setattr(services, "answer", answer)
    monkeypatch.setattr(tools, "_chosen", lambda reply, envelope: "itm_a")
    ctx = SimpleNamespace(session=SimpleNamespace(
        protocol_version="2026-07-28",
        client_capabilities=SimpleNamespace(elicitation=SimpleNamespace(form={}, url=None))))
    envelope = call_tool(services.Caller(door="mcp", user=alice), "resolve_reference",
                         {"text": "report", "kind": "task"}, ctx=ctx,
                         input_responses={"pick": types.ElicitResult(action="accept", content={})},
                         request_state="state")
    assert_timeout(envelope["error"])
    assert len(seen) == 2 and seen[0] is not None and seen[0] is seen[1]


def test_services__a_step_inside_a_request_joins_its_deadline():
    with deadline.running(5.0) as outer:
        with deadline.budget() as inner:
            assert inner is outer
        assert deadline.current() is outer
    assert deadline.current() is None


# --- 3. the judge's budget is capped by what is left of the request's -----------------------------


@pytest.mark.parametrize("backend", ["jev", "openai"])
def test_judge__budget_capped_by_the_request_deadline(backend):
    from resolver.domain.judgment import CandidateFacts, JudgmentUnavailable, build_question
    from resolver.judges.jev import JevJudge
    from resolver.judges.openai import OpenAIJudge

    question = build_question(reference="report", kind="task",
                              candidates=[CandidateFacts(title=f"Report {n}", collection="work", status=None)
                                          for n in (1, 2)])
    with SilentServer(hold=3.0) as server:
        # Its own budget and read timeout outlast the server's hold (uncapped, the server would hang up
        # first); the request's deadline does not.
        judge = (JevJudge if backend == "jev" else OpenAIJudge)(
            base_url=server.url, api_key="k", model="m", connect_timeout=5.0, read_timeout=9.0, budget_seconds=20.0)
        with deadline.running(0.5):
            judgment = judge.judge(question, request_id="req_judge")
        assert isinstance(judgment, JudgmentUnavailable) and judgment.reason == "timeout"
        assert server.cut.wait(10)  # hung up while the server still held the request


# --- per-person bounds on every door that reads CalDAV ---------------------------------------------


@pytest.fixture
def one_in_flight(settings, alice):
    """Alice may have one request in flight, and has one running already."""
    settings.RESOLVER = {"CALDAV_URL": "http://127.0.0.1:9/", **BUDGET, "MAX_IN_FLIGHT_PER_PERSON": 1}
    with services.in_flight(services.Caller(door="api", user=alice)):
        yield


def assert_in_flight_refused(response) -> None:
    assert response.status_code == 429
    assert response["Retry-After"] == "1"


def test_in_flight__api_resolve_and_collections(one_in_flight, alice):
    api = api_for(alice)
    for response in (api.post("/v1/resolve", {"text": "report", "kind": "task"}, format="json"),
                     api.get("/v1/collections")):
        assert_in_flight_refused(response)
        error = response.json()["error"]
        assert error["code"] == "throttled"
        assert error["details"] == {"reason": "in_flight", "max_in_flight": 1, "retry_after_seconds": 1}


def test_in_flight__pages(one_in_flight, alice, settings):
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts"}
    client = page_for(alice)
    clarify = reverse("resolver_web:clarify", kwargs={"token": token_for(alice)})
    for response in (client.get(clarify), client.post(clarify, {"item_id": "itm_a"}),
                     client.get("/resolve/accounts/"),
                     client.post(reverse("resolver_web:search"), {"text": "report", "kind": "task"})):
        assert_in_flight_refused(response)
        assert "Too many of your requests are running at once" in response.content.decode()
    assert client.get(reverse("resolver_web:search")).status_code == 200  # the empty form reads nothing


def test_in_flight__mcp_tools(one_in_flight, alice):
    envelope = call_tool(services.Caller(door="mcp", user=alice), "list_collections")
    assert envelope["error"]["code"] == "throttled" and envelope["error"]["details"]["reason"] == "in_flight"


def test_in_flight__released_after_each_request(settings, alice):
    settings.RESOLVER = {"CALDAV_URL": "http://127.0.0.1:9/", **BUDGET, "MAX_IN_FLIGHT_PER_PERSON": 1}
    api = api_for(alice)
    for _ in range(3):  # one at a time: never more than one in flight
        response = api.get("/v1/collections")
        assert response.status_code == 503  # nothing listens there; not throttled
    assert call_tool(services.Caller(door="mcp", user=alice), "list_collections")["error"]["code"] == \
        "calendar_unavailable"


def test_in_flight__another_person_is_not_affected(one_in_flight, django_user_model):
    bob = django_user_model.objects.create_user("bob")
    assert api_for(bob).get("/v1/collections").status_code == 503


@pytest.fixture
def one_per_minute(settings, monkeypatch):
    settings.RESOLVER = {"CALDAV_URL": "http://127.0.0.1:9/", **BUDGET,
                         "ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts"}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"resolve": "1/min"})


@pytest.mark.parametrize("door", ["collections", "clarification", "accounts", "search"])
def test_rate__every_door_shares_the_resolve_bucket(one_per_minute, alice, door):
    """One request through /v1/resolve uses the person's minute; every other door that reads CalDAV is then 429."""
    first = api_for(alice).post("/v1/resolve", {"text": "report", "kind": "task"}, format="json")
    assert first.status_code != 429
    client = page_for(alice)
    if door == "collections":
        response = api_for(alice).get("/v1/collections")
        assert response.json()["error"]["code"] == "throttled"
    elif door == "clarification":
        response = client.get(reverse("resolver_web:clarify", kwargs={"token": token_for(alice)}))
    elif door == "accounts":
        response = client.get("/resolve/accounts/")
    else:
        response = client.post(reverse("resolver_web:search"), {"text": "report", "kind": "task"})
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
