"""The authorization server against abuse (issue 26 point 4), over HTTP to django-oauth-toolkit's own views.

The site runs as pytest-django's live server; the person's browser is a
`requests` session carrying a signed-in session cookie. Client ID Metadata
Documents come from a recording fetcher (the real one fetches only public
https addresses, which a loopback test cannot have): what matters here is
whether, and from where, the site asks for one.
"""
from __future__ import annotations

import base64
import hashlib
import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import AccessToken, Application, RefreshToken, set_token_value

from resolver.models import DocumentClient
from resolver.oauth import clients
from resolver.oauth.views import STAFF

pytestmark = pytest.mark.django_db(transaction=True)

DOCUMENT_CLIENT = "https://agent.example/oauth/client.json"
CALLBACK = "https://agent.example/callback"
STAFF_CLIENT = "staff-agent"
STAFF_CALLBACK = "http://127.0.0.1:9/callback"
VERIFIER = "v" * 64
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).decode().rstrip("=")


def document(client_id: str, name: str = "Hosted agent") -> dict:
    callback = CALLBACK.replace("agent.example", urlsplit(client_id).hostname)
    return {"client_id": client_id, "client_name": name, "redirect_uris": [callback],
            "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"]}


class RecordingFetcher:
    """Stands for the https fetch: records every URL it is asked for; knows any *.example document."""

    calls: list[str] = []
    names: dict[str, str] = {}

    def fetch(self, client_id: str):
        RecordingFetcher.calls.append(client_id)
        if not urlsplit(client_id).hostname.endswith(".example"):
            raise CIMDError("not found")
        return document(client_id, RecordingFetcher.names.get(client_id, "Hosted agent")), 300


@pytest.fixture
def site(live_server, settings):
    RecordingFetcher.calls = []
    RecordingFetcher.names = {}
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": True,
                                "CIMD_METADATA_FETCHER": "tests.oauth.test_hardening.RecordingFetcher"}
    settings.RESOLVER = {**settings.RESOLVER, "SITE_URL": live_server.url}
    return live_server


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice", password="pw-alice-1")


@pytest.fixture
def browser(site, alice) -> requests.Session:
    """Alice's browser, signed in to the live site."""
    django_client = Client()
    django_client.force_login(alice)
    session = requests.Session()
    session.cookies.set("sessionid", django_client.cookies["sessionid"].value)
    yield session
    session.close()  # no kept-alive connection outlives the test in the live server's threads


@pytest.fixture
def staff_app():
    return Application.objects.create(name="Official Calendar App", client_id=STAFF_CLIENT,
                                      client_type=Application.CLIENT_PUBLIC,
                                      authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                                      redirect_uris=STAFF_CALLBACK, algorithm="")


def authorize(site, browser, client_id: str, redirect_uri: str, **extra) -> requests.Response:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": "s1",
              "scope": "read", "code_challenge": CHALLENGE, "code_challenge_method": "S256",
              "resource": site.url + "/mcp", **extra}
    return browser.get(site.url + "/oauth/authorize/", params=params, allow_redirects=False, timeout=30)


def live_token(user, application) -> AccessToken:
    token = AccessToken(user=user, application=application, expires=timezone.now() + timedelta(hours=1),
                        scope="read", resource=["http://x/mcp"])
    set_token_value(token, f"tok-{application.pk}")
    token.save()
    return token


# Consent always shown, unless staff marked the application trusted.

def test_consent__approval_prompt_auto_in_the_query_cannot_skip_it(site, browser, alice, staff_app):
    live_token(alice, staff_app)  # what django-oauth-toolkit's "auto" looks for before it skips
    response = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK, approval_prompt="auto")
    assert response.status_code == 200, response.headers.get("Location")
    assert 'id="authorizationForm"' in response.text and "code=" not in response.headers.get("Location", "")


def test_consent__an_application_staff_marked_trusted_skips_it(site, browser, staff_app):
    staff_app.skip_authorization = True  # the admin's "Skip authorization"
    staff_app.save()
    response = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK)
    assert response.status_code == 302
    location = response.headers["Location"]
    assert location.startswith(STAFF_CALLBACK) and parse_qs(urlsplit(location).query)["code"][0]


# The consent page: verified origin, then claimed name, then the resource.

def test_consent_page__a_staff_client_is_introduced_as_the_staffs_and_its_name_comes_after(site, browser, staff_app):
    page = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK).text
    headline = re.search(r"<h1>(.*?)</h1>", page, flags=re.S).group(1)
    assert headline == f"An application {STAFF} asks to read your calendar" and "Official Calendar App" not in headline
    assert (page.index("Verified origin") < page.index("Calls itself") < page.index("Official Calendar App")
            < page.index("Asks for"))
    assert f"<code>{site.url}/mcp</code> (this site's MCP endpoint)" in page


def test_consent_page__a_document_client_is_introduced_by_its_host_not_its_claimed_name(site, browser):
    client_id = "https://evil.example/client.json"
    RecordingFetcher.names[client_id] = "Official Calendar App"
    page = authorize(site, browser, client_id, "https://evil.example/callback").text
    headline = re.search(r"<h1>(.*?)</h1>", page, flags=re.S).group(1)
    assert 'from <code class="origin">evil.example</code>' in headline and "Official Calendar App" not in headline
    assert page.index("evil.example") < page.index("Official Calendar App")


def test_consent_page__another_resource_is_named_as_not_this_sites(site, browser, staff_app):
    page = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK, resource="https://elsewhere.example/mcp").text
    assert "<code>https://elsewhere.example/mcp</code> (<strong>not</strong> this site's MCP endpoint)" in page


# Client ID Metadata Documents: only for a signed-in person on the authorize page.

def test_cimd__the_token_endpoint_never_fetches_an_unknown_url_client(site):
    response = requests.post(site.url + "/oauth/token/", data={
        "grant_type": "authorization_code", "code": "x", "redirect_uri": CALLBACK, "client_id": DOCUMENT_CLIENT,
        "code_verifier": VERIFIER}, timeout=30)
    assert response.status_code in (400, 401) and response.json()["error"] == "invalid_client"
    assert RecordingFetcher.calls == [] and not Application.objects.filter(client_id=DOCUMENT_CLIENT).exists()


def test_cimd__the_revoke_endpoint_never_fetches_an_unknown_url_client(site):
    response = requests.post(site.url + "/oauth/revoke/", data={"token": "x", "client_id": DOCUMENT_CLIENT},
                             timeout=30)
    assert response.status_code in (400, 401)
    assert RecordingFetcher.calls == [] and not Application.objects.filter(client_id=DOCUMENT_CLIENT).exists()


def test_cimd__an_anonymous_visit_to_the_authorize_page_fetches_nothing(site):
    response = authorize(site, requests.Session(), DOCUMENT_CLIENT, CALLBACK)
    assert response.status_code == 302 and "/accounts/login/" in response.headers["Location"]
    assert RecordingFetcher.calls == [] and not Application.objects.filter(client_id=DOCUMENT_CLIENT).exists()


def test_cimd__a_signed_in_person_on_the_authorize_page_fetches_it_once_then_the_token_endpoint_knows_it(
        site, browser):
    page = authorize(site, browser, DOCUMENT_CLIENT, CALLBACK)
    assert page.status_code == 200 and RecordingFetcher.calls == [DOCUMENT_CLIENT]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    allowed = browser.post(site.url + "/oauth/authorize/", data={**fields, "allow": "Authorize"},
                           headers={"Referer": page.url}, allow_redirects=False, timeout=30)
    code = parse_qs(urlsplit(allowed.headers["Location"]).query)["code"][0]
    token = requests.post(site.url + "/oauth/token/", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "client_id": DOCUMENT_CLIENT,
        "code_verifier": VERIFIER, "resource": site.url + "/mcp"}, timeout=30)
    assert token.status_code == 200, token.text
    assert RecordingFetcher.calls == [DOCUMENT_CLIENT]  # the stored row served the token endpoint


# Rows from documents: bounded, and gone when unused.

def document_app(client_id: str, *, updated_days_ago: float = 0) -> Application:
    application = Application.objects.create(
        name="old", client_id=client_id, client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE, redirect_uris=CALLBACK, algorithm="",
        registration_source=Application.RegistrationSource.CIMD)
    Application.objects.filter(pk=application.pk).update(updated=timezone.now() - timedelta(days=updated_days_ago))
    return application


def test_cimd__no_new_row_beyond_the_bound_while_every_row_is_in_use(site, browser, alice, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_MAX_CLIENTS": 1}
    live_token(alice, document_app("https://busy.example/client.json"))  # in use: not purged
    response = authorize(site, browser, DOCUMENT_CLIENT, CALLBACK)
    assert response.status_code == 503 and "temporarily_unavailable" in response.text
    assert int(response.headers["Retry-After"]) >= 1
    assert RecordingFetcher.calls == [] and not Application.objects.filter(client_id=DOCUMENT_CLIENT).exists()


def test_cimd__an_unused_old_row_makes_room(site, browser, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_MAX_CLIENTS": 1}
    document_app("https://idle.example/client.json", updated_days_ago=8)
    assert authorize(site, browser, DOCUMENT_CLIENT, CALLBACK).status_code == 200
    assert list(Application.objects.values_list("client_id", flat=True)) == [DOCUMENT_CLIENT]


def test_purge__only_unused_document_rows_older_than_the_limit_go(alice, staff_app):
    Application.objects.filter(pk=staff_app.pk).update(updated=timezone.now() - timedelta(days=100))
    idle = document_app("https://idle.example/c.json", updated_days_ago=8)
    recent = document_app("https://recent.example/c.json", updated_days_ago=1)
    with_token = document_app("https://token.example/c.json", updated_days_ago=8)
    live_token(alice, with_token)
    with_refresh = document_app("https://refresh.example/c.json", updated_days_ago=8)
    RefreshToken.objects.create(user=alice, application=with_refresh, token="r-1")
    assert clients.purge_unused() == 1
    remaining = set(Application.objects.values_list("client_id", flat=True))
    assert remaining == {STAFF_CLIENT, recent.client_id, with_token.client_id, with_refresh.client_id}
    assert idle.client_id not in remaining


# Throttles on the unauthenticated endpoints, per client address.

@pytest.mark.parametrize("path", ["/oauth/token/", "/oauth/revoke/"])
def test_throttle__the_endpoint_answers_429_with_retry_after_past_the_rate(site, settings, path):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_THROTTLE_RATE": "3/min"}
    answers = [requests.post(site.url + path, data={"client_id": STAFF_CLIENT, "token": "x"}, timeout=30)
               for _ in range(4)]
    assert 429 not in [a.status_code for a in answers[:3]]
    last = answers[3]
    assert last.status_code == 429 and last.json()["error"] == "throttled" and int(last.headers["Retry-After"]) >= 1


def test_throttle__counts_each_client_address_apart_and_ignores_forwarded_for(settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_THROTTLE_RATE": "2/min"}
    client = Client()
    for _ in range(2):
        assert client.post("/oauth/token/", {"client_id": "x"}, REMOTE_ADDR="203.0.113.1").status_code != 429
    # A forwarded-for header of the client's choosing does not make a new address.
    assert client.post("/oauth/token/", {"client_id": "x"}, REMOTE_ADDR="203.0.113.1",
                       HTTP_X_FORWARDED_FOR="198.51.100.7").status_code == 429
    assert client.post("/oauth/token/", {"client_id": "x"}, REMOTE_ADDR="203.0.113.2").status_code != 429


# The consent page itself.

def consent_fields(page: requests.Response) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))


def test_consent_page__is_never_stored_by_a_cache(site, browser, staff_app):
    response = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK)
    assert response.status_code == 200 and "no-store" in response.headers["Cache-Control"]


@pytest.mark.parametrize("tampered", ["no-such-client", "https://tampered.example/client.json", ""])
def test_consent_post__a_tampered_client_id_is_400_and_fetches_nothing(site, browser, staff_app, tampered):
    page = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK)
    fields = {**consent_fields(page), "client_id": tampered}
    response = browser.post(site.url + "/oauth/authorize/", data={**fields, "allow": "Authorize"},
                            headers={"Referer": page.url}, allow_redirects=False, timeout=30)
    assert response.status_code == 400 and "Location" not in response.headers
    assert "no-store" in response.headers["Cache-Control"]
    assert RecordingFetcher.calls == [] and not Application.objects.filter(client_id=tampered).exists()


# A resource is fixed at authorization (RFC 8707); a reused code revokes what it produced (RFC 6749 4.1.2).

def code_for(site, browser, **extra) -> str:
    page = authorize(site, browser, STAFF_CLIENT, STAFF_CALLBACK, **extra)
    assert page.status_code == 200, page.text
    allowed = browser.post(site.url + "/oauth/authorize/", data={**consent_fields(page), "allow": "Authorize"},
                           headers={"Referer": page.url}, allow_redirects=False, timeout=30)
    return parse_qs(urlsplit(allowed.headers["Location"]).query)["code"][0]


def exchange(site, code: str, **extra) -> requests.Response:
    return requests.post(site.url + "/oauth/token/", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": STAFF_CALLBACK, "client_id": STAFF_CLIENT,
        "code_verifier": VERIFIER, **extra}, timeout=30)


def refresh(site, refresh_token: str, **extra) -> requests.Response:
    return requests.post(site.url + "/oauth/token/", data={
        "grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": STAFF_CLIENT, **extra}, timeout=30)


def mcp_accepts(site, access_token: str) -> bool:
    from resolver.oauth import resource

    return resource.verify_access_token(access_token, resource=site.url + "/mcp") is not None


def test_resource__named_at_the_token_endpoint_but_not_at_authorization_is_refused(site, browser, staff_app):
    code = code_for(site, browser, resource=None)  # the consent page said: no particular resource
    refused = exchange(site, code, resource=site.url + "/mcp")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"
    assert not AccessToken.objects.exists()


def test_resource__named_on_refresh_but_not_at_authorization_is_refused(site, browser, staff_app):
    token = exchange(site, code_for(site, browser, resource=None))
    assert token.status_code == 200, token.text
    assert not mcp_accepts(site, token.json()["access_token"])  # a token for no resource: not /mcp's
    refused = refresh(site, token.json()["refresh_token"], resource=site.url + "/mcp")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"
    assert not any(site.url + "/mcp" in (t.resource or []) for t in AccessToken.objects.all())


def test_resource__named_at_authorization_is_honoured_at_the_token_endpoint_and_on_refresh(site, browser, staff_app):
    token = exchange(site, code_for(site, browser), resource=site.url + "/mcp")
    assert token.status_code == 200, token.text
    assert mcp_accepts(site, token.json()["access_token"])
    again = refresh(site, token.json()["refresh_token"], resource=site.url + "/mcp")
    assert again.status_code == 200, again.text and mcp_accepts(site, again.json()["access_token"])
    other = refresh(site, again.json()["refresh_token"], resource="https://elsewhere.example/mcp")
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"


def test_code__a_reused_code_is_refused_and_revokes_every_token_it_produced(site, browser, staff_app):
    code = code_for(site, browser)
    first = exchange(site, code)
    assert first.status_code == 200, first.text
    rotated = refresh(site, first.json()["refresh_token"])  # the family goes on after a refresh
    assert rotated.status_code == 200 and mcp_accepts(site, rotated.json()["access_token"])
    reused = exchange(site, code)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert not mcp_accepts(site, first.json()["access_token"])
    assert not mcp_accepts(site, rotated.json()["access_token"])
    assert refresh(site, rotated.json()["refresh_token"]).status_code == 400
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()


def test_code__another_codes_tokens_are_untouched_by_a_reuse(site, browser, staff_app):
    kept = exchange(site, code_for(site, browser))
    code = code_for(site, browser)
    assert exchange(site, code).status_code == 200
    assert exchange(site, code).status_code == 400
    assert mcp_accepts(site, kept.json()["access_token"])


# Document fetches on the authorize page: throttled per person and per client address.

def visit(client: Client, client_id: str, address: str):
    callback = CALLBACK.replace("agent.example", urlsplit(client_id).hostname)
    return client.get("/oauth/authorize/", {
        "response_type": "code", "client_id": client_id, "redirect_uri": callback, "state": "s", "scope": "read",
        "code_challenge": CHALLENGE, "code_challenge_method": "S256", "resource": "http://testserver/mcp"},
        REMOTE_ADDR=address)


def signed_in(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user(username))
    return client


def test_cimd_throttle__fetches_per_person_and_per_client_address(site, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_FETCH_RATE": "2/hour"}
    alice, bob = signed_in("alice"), signed_in("bob")
    assert visit(alice, "https://a1.example/c.json", "203.0.113.1").status_code == 200
    assert visit(alice, "https://a2.example/c.json", "203.0.113.1").status_code == 200
    # Alice from another address: her own count is full.
    over = visit(alice, "https://a3.example/c.json", "203.0.113.2")
    assert over.status_code == 429 and "throttled" in over.content.decode() and int(over["Retry-After"]) >= 1
    # Bob from Alice's first address: that address's count is full.
    assert visit(bob, "https://b1.example/c.json", "203.0.113.1").status_code == 429
    assert visit(bob, "https://b2.example/c.json", "203.0.113.3").status_code == 200
    assert RecordingFetcher.calls == ["https://a1.example/c.json", "https://a2.example/c.json",
                                      "https://b2.example/c.json"]


def test_cimd_throttle__a_known_fresh_client_is_never_counted(site, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_FETCH_RATE": "1/hour"}
    alice = signed_in("alice")
    for _ in range(3):
        assert visit(alice, DOCUMENT_CLIENT, "203.0.113.1").status_code == 200
    assert RecordingFetcher.calls == [DOCUMENT_CLIENT]


# One person's documents cannot lock out another person's new client.

def test_cimd_per_person__500_urls_from_one_person_leave_room_for_another_persons_client(site, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_FETCH_RATE": "100000/hour"}
    # Each new row hashes a client secret (PBKDF2, half a second): the test's 500 use a cheap hasher.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    mallory, alice = signed_in("mallory"), signed_in("alice")
    for number in range(500):
        assert visit(mallory, f"https://m{number}.mallory.example/c.json", "198.51.100.9").status_code == 200
    per_person = settings.RESOLVER.get("OAUTH_CIMD_MAX_CLIENTS_PER_PERSON", 20)
    assert DocumentClient.objects.filter(used_by__username="mallory").count() == per_person
    assert Application.objects.count() == per_person  # her least recently used ones made room for her newer
    assert visit(alice, DOCUMENT_CLIENT, "203.0.113.1").status_code == 200
    assert Application.objects.filter(client_id=DOCUMENT_CLIENT).exists()


def test_cimd_per_person__a_person_whose_clients_are_all_in_use_is_refused_alone(site, settings):
    settings.RESOLVER = {**settings.RESOLVER, "OAUTH_CIMD_MAX_CLIENTS_PER_PERSON": 3,
                         "OAUTH_CIMD_FETCH_RATE": "100000/hour"}
    mallory, alice = signed_in("mallory"), signed_in("alice")
    for number in range(3):
        client_id = f"https://m{number}.mallory.example/c.json"
        assert visit(mallory, client_id, "198.51.100.9").status_code == 200
        live_token(get_user_model().objects.get(username="mallory"), Application.objects.get(client_id=client_id))
    refused = visit(mallory, "https://m3.mallory.example/c.json", "198.51.100.9")
    assert refused.status_code == 403 and "too_many_clients" in refused.content.decode()
    assert visit(alice, DOCUMENT_CLIENT, "203.0.113.1").status_code == 200
    assert Application.objects.count() == 4


def test_purge__by_last_use_not_by_last_update(alice):
    recently_used = document_app("https://used.example/c.json", updated_days_ago=30)
    clients.used(recently_used.client_id, alice)
    idle = document_app("https://idle.example/c.json", updated_days_ago=30)
    assert clients.purge_unused() == 1
    assert set(Application.objects.values_list("client_id", flat=True)) == {recently_used.client_id}
    assert idle.client_id not in set(DocumentClient.objects.values_list("client_id", flat=True))
