"""Every clarification envelope, from the API and the command, links to the page."""
from __future__ import annotations

import json
import re
from io import StringIO
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver.domain.codes import EXIT_CLARIFICATION
from resolver import clarifications as tokens

pytestmark = pytest.mark.django_db

OFFSITE = {"text": "Team offsite planning", "kind": "task", "collection_ids": ["work", "personal"]}
PAGE_PATH = re.compile(r"/resolve/clarify/[^/]+/")


def _api_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _command(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("resolve", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_api__clarification_carries_absolute_url_bound_to_the_client(
    radicale_live, alice, alice_client: Client, bob_client: Client
) -> None:
    response = _api_client(alice).post("/v1/resolve", OFFSITE, format="json")
    envelope = response.json()
    assert response.status_code == 200 and envelope["status"] == "needs_clarification"
    url = envelope["data"]["clarification_url"]
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc) == ("http", "testserver")
    assert PAGE_PATH.fullmatch(parts.path)
    page = alice_client.get(parts.path)
    assert page.status_code == 200
    assert envelope["data"]["candidates"][0]["item_id"] in page.content.decode()
    assert bob_client.get(parts.path).status_code == 404


def test_api__url_follows_the_host_the_client_used(radicale_live, alice) -> None:
    response = _api_client(alice).post("/v1/resolve", OFFSITE, format="json", HTTP_HOST="localhost")
    assert response.json()["data"]["clarification_url"].startswith("http://localhost/resolve/clarify/")


def test_api__token_holds_the_request_id_and_candidates(radicale_live, alice) -> None:
    envelope = _api_client(alice).post("/v1/resolve", OFFSITE, format="json").json()
    token = urlsplit(envelope["data"]["clarification_url"]).path.split("/")[-2]
    claims = tokens.read(token, user_id=alice.pk, max_age=60)
    assert claims.request_id == envelope["request_id"]
    assert list(claims.candidate_ids) == [c["item_id"] for c in envelope["data"]["candidates"]]
    assert set(claims.collection_ids) == {"work", "personal"}


def test_api__resolved_has_no_clarification_url(radicale_live, alice) -> None:
    body = {"text": "Draft portfolio outline", "kind": "task", "collection_ids": ["work"]}
    envelope = _api_client(alice).post("/v1/resolve", body, format="json").json()
    assert envelope["status"] == "ok"
    assert "clarification_url" not in envelope["data"]


def _offsite_args() -> list[str]:
    return ["--text", OFFSITE["text"], "--kind", "task", "--collection", "work", "--collection", "personal"]


def test_command__user_gets_url_from_site_url(site_live, alice, alice_client: Client) -> None:
    code, out, _ = _command(*_offsite_args(), "--json", "--user", "alice")
    assert code == EXIT_CLARIFICATION
    url = json.loads(out)["data"]["clarification_url"]
    assert url.startswith("https://resolver.example/resolve/clarify/")
    assert alice_client.get(urlsplit(url).path).status_code == 200


def test_command__site_url_may_carry_a_path_prefix(site_live, settings, alice) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "SITE_URL": "https://example.org/tools/"}
    _, out, _ = _command(*_offsite_args(), "--json", "--user", "alice")
    assert json.loads(out)["data"]["clarification_url"].startswith("https://example.org/tools/resolve/clarify/")


def test_command__text_output_prints_the_url(site_live, alice) -> None:
    code, _, err = _command(*_offsite_args(), "--user", "alice")
    assert code == EXIT_CLARIFICATION
    assert re.search(r"^clarification_url: https://resolver\.example/resolve/clarify/\S+/$", err, re.M)


def test_command__without_user_has_no_url(site_live) -> None:
    code, out, _ = _command(*_offsite_args(), "--json")
    assert code == EXIT_CLARIFICATION
    assert "clarification_url" not in json.loads(out)["data"]


def test_command__unknown_user_fails_before_resolving(site_live, alice) -> None:
    code, out, _ = _command(*_offsite_args(), "--json", "--user", "nobody")
    assert code == 2
    assert json.loads(out)["error"]["code"] == "invalid_request"


def test_command__inactive_user_is_unknown(site_live, alice) -> None:
    alice.is_active = False
    alice.save()
    code, out, _ = _command(*_offsite_args(), "--json", "--user", "alice")
    assert code == 2 and json.loads(out)["error"]["message"] == "No such user: 'alice'."


def test_command__user_without_site_url_is_refused(radicale_live, settings, alice) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "SITE_URL": ""}
    code, out, _ = _command(*_offsite_args(), "--json", "--user", "alice")
    assert code == 2
    assert "SITE_URL" in json.loads(out)["error"]["message"]


def test_command__resolved_with_user_has_no_url(site_live, alice) -> None:
    code, out, _ = _command("--text", "Draft portfolio outline", "--kind", "task", "--collection", "work",
                            "--json", "--user", "alice")
    assert code == 0
    assert "clarification_url" not in json.loads(out)["data"]


def test_settings__site_url_defaults_to_the_development_server(monkeypatch) -> None:
    from lifeproject.settings import env

    monkeypatch.delenv("RESOLVER_SITE_URL", raising=False)
    assert env("RESOLVER_SITE_URL") == "http://127.0.0.1:8000"


def test_api__the_occurrence_the_api_offered_is_the_one_the_page_picks(radicale_live, alice,
                                                                        alice_client: Client) -> None:
    """The API's candidate names a later occurrence; its link's pick answers that occurrence."""
    from datetime import datetime

    from tests.support.calendars import weekly_sync_start

    named = weekly_sync_start(2)
    envelope = _api_client(alice).post("/v1/resolve", {"text": f"sync on {named:%Y-%m-%d}", "kind": "event",
                                                       "collection_ids": ["work"], "time_zone": "Asia/Tokyo"},
                                       format="json").json()
    [candidate] = envelope["data"]["candidates"]
    assert datetime.fromisoformat(candidate["occurrence"]["start"]) == named
    path = urlsplit(envelope["data"]["clarification_url"]).path
    claims = tokens.read(path.split("/")[-2], user_id=alice.pk, max_age=60)
    assert claims.time_zone == "Asia/Tokyo"
    assert claims.occurrences == ("r:" + candidate["occurrence"]["recurrence_id"],)
    page = alice_client.post(path, {"item_id": candidate["item_id"]}).content.decode()
    assert f'<code data-field="recurrence_id">{candidate["occurrence"]["recurrence_id"]}</code>' in page
