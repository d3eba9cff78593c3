"""OAuth 2.1 at the MCP endpoint, as the MCP authorization spec asks, against the production command.

Discovery from the 401, Protected Resource Metadata (RFC 9728), authorization
server metadata (RFC 8414), the authorization code flow with PKCE S256 through
the site's login and consent pages in Chromium, refresh with rotation, and the
tokens the resource server refuses.
"""
from __future__ import annotations

import re
import time

import anyio
import pytest
import requests

from tests.mcp_http import oauth_flow
from tests.mcp_http.conftest import CLIENT_ID, sign_in
from tests.mcp_http import wire

EXACT = {"text": "Draft portfolio outline", "kind": "task"}


def challenge(response: requests.Response) -> dict[str, str]:
    header = response.headers.get("WWW-Authenticate", "")
    assert header.startswith("Bearer "), header
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def test_discovery__no_token_is_401_naming_the_resource_metadata(site):
    response = wire.call(site.mcp_url, None, "resolve_reference", EXACT)
    assert response.status_code == 401
    assert challenge(response)["resource_metadata"] == f"{site.url}/.well-known/oauth-protected-resource/mcp"


def test_metadata__protected_resource_names_this_resource_and_the_site_as_its_server(site):
    metadata = requests.get(f"{site.url}/.well-known/oauth-protected-resource/mcp", timeout=30).json()
    assert metadata["resource"] == site.mcp_url
    assert metadata["authorization_servers"] == [site.url + "/"]
    assert metadata["scopes_supported"] == ["read"]
    assert metadata["bearer_methods_supported"] == ["header"]


def test_metadata__authorization_server_offers_the_code_flow_with_s256_only(site):
    metadata = requests.get(f"{site.url}/.well-known/oauth-authorization-server", timeout=30).json()
    assert metadata["issuer"] == site.url + "/"
    assert metadata["authorization_endpoint"] == f"{site.url}/oauth/authorize/"
    assert metadata["token_endpoint"] == f"{site.url}/oauth/token/"
    assert metadata["revocation_endpoint"] == f"{site.url}/oauth/revoke/"
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["scopes_supported"] == ["read"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["client_id_metadata_document_supported"] is True
    assert "registration_endpoint" not in metadata


@pytest.mark.browser
def test_flow__login_and_consent_in_chromium_then_an_exact_reference(alice):
    session, first = alice
    assert [page.split(" · ")[0] for page in session.person.pages] == ["Sign in", "Allow access"]
    tokens = session.storage.tokens
    assert tokens is not None and tokens.refresh_token and tokens.scope == "read"
    assert 0 < (tokens.expires_in or 0) <= 3600
    assert first.is_error is False
    envelope = first.structured_content
    assert envelope["status"] == "ok" and envelope["data"]["uid"] == "t-portfolio"
    assert envelope["data"]["method"] == "deterministic"


@pytest.mark.browser
def test_flow__refresh_rotates_both_tokens_and_the_old_access_token_is_refused(site):
    # A sign-in of its own: the end of this test revokes the whole token family.
    session, _, _ = sign_in(site, "alice")
    old = session.storage.tokens
    auth = session.provider()

    async def main() -> None:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with oauth_flow.http_client(auth) as http:
            await auth._initialize()
            auth.context.token_expiry_time = time.time() - 1  # as if the access token had run out
            async with Client(streamable_http_client(session.site.mcp_url, http_client=http)) as client:
                result = await client.call_tool("resolve_reference", EXACT)
                assert result.structured_content["status"] == "ok"

    pages_before = len(session.person.pages)
    anyio.run(main)
    new = session.storage.tokens
    assert len(session.person.pages) == pages_before  # no browser: a refresh, not a new sign-in
    assert new.access_token != old.access_token and new.refresh_token != old.refresh_token
    assert wire.call(session.site.mcp_url, old.access_token, "resolve_reference", EXACT).status_code == 401
    assert wire.call(session.site.mcp_url, new.access_token, "resolve_reference", EXACT).status_code == 200
    # The rotated-out refresh token is spent.
    spent = requests.post(f"{session.site.url}/oauth/token/", data={
        "grant_type": "refresh_token", "refresh_token": old.refresh_token, "client_id": CLIENT_ID}, timeout=30)
    assert spent.status_code == 400 and spent.json()["error"] == "invalid_grant"
    # Reuse of a spent refresh token is taken as theft: the whole family is revoked.
    again = requests.post(f"{session.site.url}/oauth/token/", data={
        "grant_type": "refresh_token", "refresh_token": new.refresh_token, "client_id": CLIENT_ID}, timeout=30)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


@pytest.mark.browser
def test_flow__denied_consent_issues_no_token(site):
    from mcp.client.auth.exceptions import OAuthFlowError

    with pytest.raises(BaseException) as raised:
        sign_in(site, "bob", allow=False)
    flat = [raised.value, *getattr(raised.value, "exceptions", [])]
    assert any(isinstance(e, OAuthFlowError) or "access_denied" in str(e) for e in flat), raised.value


def test_authorize__without_s256_pkce_is_refused(site):
    """Plain PKCE, or none, never reaches the consent page: the client is told why."""
    browser = requests.Session()
    login = browser.get(f"{site.url}/accounts/login/", timeout=30)
    assert login.status_code == 200
    browser.post(f"{site.url}/accounts/login/", data={
        "username": "bob", "password": "bob-pw-3f0a2", "csrfmiddlewaretoken": browser.cookies["csrftoken"],
        "next": "/resolve/"}, headers={"Referer": f"{site.url}/accounts/login/"}, timeout=30)
    base = {"response_type": "code", "client_id": CLIENT_ID, "redirect_uri": site.redirect_uri, "state": "s1",
            "scope": "read", "resource": site.mcp_url}
    for extra in ({"code_challenge": "a" * 43, "code_challenge_method": "plain"}, {}):
        response = browser.get(f"{site.url}/oauth/authorize/", params={**base, **extra}, allow_redirects=False,
                               timeout=30)
        if response.status_code == 200:  # the consent page; the refusal comes when a code would be issued
            fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', response.text))
            fields["allow"] = "Authorize"
            response = browser.post(f"{site.url}/oauth/authorize/", data=fields, allow_redirects=False, timeout=30,
                                    headers={"Referer": response.url})
        assert response.status_code == 302, response.text[:500]
        location = response.headers["Location"]
        assert location.startswith(site.redirect_uri) and "error=invalid_request" in location
        assert "code=" not in location


@pytest.mark.parametrize("case", ["another_resource", "no_resource", "expired", "no_read_scope"])
def test_refused__tokens_not_issued_for_this_resource_now(site, case):
    mint = site.deployment.mint_token
    token = {
        "another_resource": lambda: mint("alice", resource=["https://elsewhere.example/mcp"]),
        "no_resource": lambda: mint("alice", resource=[]),
        "expired": lambda: mint("alice", resource=[site.mcp_url], expires_in=-5),
        "no_read_scope": lambda: mint("alice", resource=[site.mcp_url], scope="write"),
    }[case]()
    response = wire.call(site.mcp_url, token, "resolve_reference", EXACT)
    assert response.status_code == 401
    assert challenge(response)["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert "status" not in response.text  # no envelope: nothing was resolved


def test_refused__revoked_token(site):
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    assert wire.call(site.mcp_url, token, "resolve_reference", EXACT).status_code == 200
    revoked = requests.post(f"{site.url}/oauth/revoke/", data={"token": token, "client_id": CLIENT_ID}, timeout=30)
    assert revoked.status_code == 200
    assert wire.call(site.mcp_url, token, "resolve_reference", EXACT).status_code == 401


def test_refused__token_in_the_query_string_is_not_read(site):
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    response = requests.post(f"{site.mcp_url}?access_token={token}", json={}, timeout=30,
                             headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
