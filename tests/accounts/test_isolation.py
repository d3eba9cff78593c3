"""Isolation through every door: alice and bob have tasks with the same titles, carol has no account.

Nobody reads, resolves, picks or learns of another person's items: not through
the API, the page, a clarification token, the command, the caches, the
provenance log or /healthz (the MCP door: test_isolation_mcp.py).
"""
from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from resolver.calendars.caldav import readers

pytestmark = pytest.mark.django_db


def _api(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def _resolve(token: str, text: str, **extra: object) -> tuple[int, dict]:
    response = _api(token).post("/v1/resolve", {"text": text, "kind": "task", **extra}, format="json")
    return response.status_code, response.json()


def _uids(envelope: dict) -> set[str]:
    data = envelope["data"] or {}
    if envelope["status"] == "ok":
        return {data["uid"]}
    return {c["uid"] for c in data.get("candidates", [])}


# --- the API ------------------------------------------------------------------------------


def test_api__same_title_resolves_to_each_persons_own(people):
    status, alice = _resolve(people.tokens["alice"], "Quarterly report")
    assert status == 200 and alice["status"] == "ok"
    assert alice["data"]["uid"] == "alice-report" and alice["data"]["collection_id"] == "home/work"
    status, bob = _resolve(people.tokens["bob"], "Quarterly report")
    # Bob's own two copies (server A and server B), and never alice's.
    assert status == 200 and bob["status"] == "needs_clarification"
    assert bob["data"]["reason"] == "duplicate_titles"
    assert sorted(c["collection_id"] for c in bob["data"]["candidates"]) == ["home/work", "work/work"]
    assert _uids(bob) == {"bob-report"}
    assert len({c["item_id"] for c in bob["data"]["candidates"]}) == 2


def test_api__anothers_title_id_or_collection_is_not_there(people):
    _, alice = _resolve(people.tokens["alice"], "Alice secret errand")
    secret_id = alice["data"]["item_id"]
    for text in ("Alice secret errand", "secret errand", secret_id, "alice-secret"):
        status, bob = _resolve(people.tokens["bob"], text)
        assert status == 200 and bob["status"] == "needs_clarification", text
        assert bob["data"]["reason"] == "no_candidates" and bob["data"]["candidates"] == []
        assert "alice" not in json.dumps(bob).lower()
    status, wrong = _resolve(people.tokens["alice"], "Quarterly report", collection_ids=["work/work"])
    assert status == 400 and wrong["error"]["code"] == "collection_not_found"
    assert wrong["error"]["details"]["collection_ids"] == ["work/work"]


def test_api__collections_are_each_persons_own(people):
    alice = _api(people.tokens["alice"]).get("/v1/collections").json()
    bob = _api(people.tokens["bob"]).get("/v1/collections").json()
    assert sorted(c["collection_id"] for c in alice["data"]["collections"]) == ["home/personal", "home/work"]
    assert sorted(c["collection_id"] for c in bob["data"]["collections"]) == ["home/personal", "home/work",
                                                                               "work/work"]


def test_api__no_account_is_its_own_error_never_anothers_calendar(people):
    status, carol = _resolve(people.tokens["carol"], "Quarterly report")
    assert status == 409 and carol["status"] == "error" and carol["data"] is None
    assert carol["error"]["code"] == "no_calendar_account"
    listing = _api(people.tokens["carol"]).get("/v1/collections")
    assert listing.status_code == 409 and listing.json()["error"]["code"] == "no_calendar_account"


# --- clarification tokens and the page ----------------------------------------------------------


def _page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_token__bobs_clarification_is_not_found_for_alice(people):
    _, bob = _resolve(people.tokens["bob"], "Quarterly report")
    url = bob["data"]["clarification_url"]
    path = url[url.index("/resolve/clarify/"):]
    item_id = bob["data"]["candidates"][0]["item_id"]
    alice = _page(people.alice)
    assert alice.get(path).status_code == 404
    picked = alice.post(path, {"item_id": item_id})
    assert picked.status_code == 404 and "bob-report" not in picked.content.decode()
    own = _page(people.bob).post(path, {"item_id": item_id})
    assert own.status_code == 200 and "user_selected" in own.content.decode()


def test_page__search_reads_only_ones_own(people):
    alice = _page(people.alice)
    found = alice.post("/resolve/", {"text": "Quarterly report", "kind": "task"})
    assert found.status_code == 200 and "home/work" in found.content.decode()
    bob = _page(people.bob)
    asked = bob.post("/resolve/", {"text": "Quarterly report", "kind": "task"})
    assert asked.status_code == 303
    page = bob.get(asked["Location"]).content.decode()
    assert page.count('name="item_id"') == 2 and "work/work" in page
    nothing = bob.post("/resolve/", {"text": "Alice secret errand", "kind": "task"})
    # Bob's own words come back to him (the form, "You typed"); no item of alice's does.
    assert "Alice secret errand" not in bob.get(nothing["Location"]).content.decode().replace(
        'value="Alice secret errand"', "").replace("You typed <bdi><q>Alice secret errand</q></bdi>", "")


def test_page__no_account_says_so(people):
    response = _page(people.carol).post("/resolve/", {"text": "Quarterly report", "kind": "task"})
    assert response.status_code == 409 and "not connected a calendar account" in response.content.decode()


def test_page__no_account_links_to_the_accounts_page_in_the_message(people):
    body = _page(people.carol).post("/resolve/", {"text": "Quarterly report", "kind": "task"}).content.decode()
    notice = body.split('class="notice notice-error" role="alert">', 1)[1].split("</div>", 1)[0]
    assert '<a href="/resolve/accounts/" data-field="error_link">Connect a calendar account</a>' in notice


def test_page__a_question_whose_account_was_removed_links_to_the_accounts_page(people):
    from resolver import accounts

    alice = _page(people.alice)
    asked = alice.post("/resolve/", {"text": "report", "kind": "task"})
    assert asked.status_code == 303
    for account in accounts.accounts_of(people.alice):
        accounts.remove_account(user=people.alice, account_id=account.pk)
    page = alice.get(asked["Location"])
    body = page.content.decode()
    assert page.status_code == 409 and "not connected a calendar account" in body
    assert '<a href="/resolve/accounts/">Connect a calendar account</a>' in body


@pytest.mark.parametrize("user_args, expected", [
    (("--user", "carol"), "To connect one: printf '%s\\n' \"$APP_PASSWORD\" | python manage.py calendar_accounts add "
                          "--user carol --url URL --username NAME --password-stdin"),
    ((), "Per-user accounts read only a user's own accounts: give --user USERNAME. To connect one: printf '%s\\n' "
         "\"$APP_PASSWORD\" | python manage.py calendar_accounts add --user USERNAME --url URL --username NAME "
         "--password-stdin"),
])
def test_command__no_account_names_the_command_that_connects_one(people, user_args, expected):
    err = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("resolve", "--text", "Quarterly report", "--kind", "task", *user_args,
                     stdout=io.StringIO(), stderr=err)
    assert exited.value.code == 2
    assert err.getvalue().splitlines()[-2:] == [
        "error: no_calendar_account: You have not connected a calendar account. Add one at the accounts page.",
        expected]


# --- the command --------------------------------------------------------------------------


def _command(*args: str) -> tuple[int, dict]:
    out = io.StringIO()
    try:
        call_command("resolve", *args, "--json", stdout=out, stderr=io.StringIO())
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code)
    return code, json.loads(out.getvalue())


def test_command__user_reads_their_own_accounts(people):
    code, alice = _command("--user", "alice", "--text", "Quarterly report", "--kind", "task")
    assert code == 0 and alice["data"]["uid"] == "alice-report"
    code, bob = _command("--user", "bob", "--text", "Quarterly report", "--kind", "task")
    assert code == 3 and _uids(bob) == {"bob-report"}
    code, carol = _command("--user", "carol", "--text", "Quarterly report", "--kind", "task")
    assert code == 2 and carol["error"]["code"] == "no_calendar_account"
    code, nobody = _command("--text", "Quarterly report", "--kind", "task")
    assert code == 2 and nobody["error"]["code"] == "no_calendar_account"


# --- caches, provenance, /healthz -----------------------------------------------------------------


def test_caches__one_reader_per_account_holding_only_its_own_resources(people, household):
    _resolve(people.tokens["alice"], "Quarterly report")
    _resolve(people.tokens["bob"], "Quarterly report")
    by_user = {}
    for reader in readers().readers():
        by_user.setdefault((reader.account.url, reader.account.username), reader)
    alice_key = (household.a.url, household.a.instance.username)
    assert {alice_key, (household.a.url, "bob"), (household.b.url, "bob")} <= set(by_user)
    text = repr(by_user[alice_key].__dict__)
    assert "/bob/" not in text


def test_healthz__reads_no_persons_account_and_says_nothing_of_them(people, settings):
    settings.RESOLVER = {**settings.RESOLVER, "CALDAV_URL": "http://127.0.0.1:9/"}
    response = Client().get("/healthz")
    body = response.json()
    assert response.status_code == 200 and set(body["checks"]) == {"database", "cache"}
    text = json.dumps(body)
    for secret in ("alice", "bob", "home", "5232", "Quarterly"):
        assert secret not in text


def test_provenance__entries_hold_only_the_askers_item_ids(people, settings, jev_for_accounts):
    from resolver import provenance

    _, bob = _resolve(people.tokens["bob"], "report")
    assert bob["status"] == "needs_clarification" and bob["data"]["judgment_provenance"] is not None
    entry = provenance.get(bob["request_id"])
    offered = {c["item_id"] for c in bob["data"]["candidates"]}
    assert set(entry["number_to_item_id"].values()) <= offered
    _, alice = _resolve(people.tokens["alice"], "Quarterly report")
    assert alice["data"]["item_id"] not in json.dumps(entry)
    assert not re.search(r"Quarterly|Alice|Bob", json.dumps(entry))
    # The judge was shown bob's candidates only.
    assert _uids(bob) == {"bob-report"} and len(bob["data"]["candidates"]) == 2
    asked = b" ".join(r.body for r in jev_for_accounts.systemone_requests).decode("utf-8")
    assert "Quarterly report" in asked


@pytest.fixture
def jev_for_accounts(settings):
    """The scripted Jev-contract server of the suite, so that a judgment (and its provenance entry) happens."""
    from tests.support.jev_contract_server import JevContractServer

    with JevContractServer() as server:
        settings.RESOLVER = {**settings.RESOLVER, "JUDGE_BACKEND": "resolver.judges.jev.JevJudge",
                             "TYPESAFE_BASE_URL": server.url, "TYPESAFE_API_KEY": "test-key"}
        yield server


def test_command__user_needs_no_site_url_with_per_user_accounts(people, settings):
    """--user names whose calendars to read; without RESOLVER["SITE_URL"] the answer has no link."""
    settings.RESOLVER = {k: v for k, v in settings.RESOLVER.items() if k != "SITE_URL"}
    code, bob = _command("--user", "bob", "--text", "Quarterly report", "--kind", "task")
    assert code == 3 and _uids(bob) == {"bob-report"} and bob["data"].get("clarification_url") is None


def test_logs__never_carry_an_app_password(people, household, caplog, django_user_model):
    """Connecting (also with a wrong password), resolving and listing, logged at DEBUG: no password anywhere."""
    import logging

    from resolver import accounts
    from resolver.domain.errors import AccountRejected

    caplog.set_level(logging.DEBUG)
    url, username, password = household.bob_b
    with pytest.raises(AccountRejected):
        accounts.add_account(user=people.carol, url=url, username=username, password="carols wrong guess")
    accounts.add_account(user=people.carol, url=url, username=username, password=password)
    _resolve(people.tokens["carol"], "Quarterly report")
    _api(people.tokens["bob"]).get("/v1/collections")
    text = caplog.text + repr([r.__dict__ for r in caplog.records])
    for secret in (password, "carols wrong guess", household.bob_a[2], household.alice[2]):
        assert secret not in text
