"""Client ID Metadata Documents: a client named by an https URL, its metadata fetched (here: a fixed fetcher)."""
from __future__ import annotations

import base64
import hashlib

import pytest
from django.contrib.auth import get_user_model
from oauth2_provider.cimd import CIMDError

pytestmark = pytest.mark.django_db

CLIENT = "https://agent.example/oauth/client.json"
CALLBACK = "https://agent.example/callback"
DOCUMENTS = {CLIENT: {"client_id": CLIENT, "client_name": "Hosted agent", "redirect_uris": [CALLBACK],
                      "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                      "response_types": ["code"]}}


class FixedFetcher:
    """Stands for the SSRF-hardened https fetch: the document of a known URL, else unknown."""

    def fetch(self, client_id):
        if client_id not in DOCUMENTS:
            raise CIMDError("not found")
        return DOCUMENTS[client_id], 300


@pytest.fixture
def signed_in(client, settings):
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_ENABLED": True,
                                "CIMD_METADATA_FETCHER": "tests.oauth.test_client_id_metadata.FixedFetcher"}
    user = get_user_model().objects.create_user("alice", password="pw-alice-1")
    client.force_login(user)
    return client


def authorize(client, **overrides):
    verifier = "v" * 64
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    params = {"response_type": "code", "client_id": CLIENT, "redirect_uri": CALLBACK, "state": "s",
              "scope": "read", "code_challenge": challenge, "code_challenge_method": "S256",
              "resource": "http://127.0.0.1:8000/mcp", **overrides}
    return client.get("/oauth/authorize/", params)


def test_cimd__a_url_client_reaches_the_consent_page_named_by_its_document(signed_in):
    response = authorize(signed_in)
    assert response.status_code == 200
    page = response.content.decode()
    # Led by the host the document came from; the name is the client's own claim, shown after it.
    assert "An application from <code class=\"origin\">agent.example</code> asks to read your calendar" in page
    assert page.index("agent.example") < page.index("Hosted agent") and CLIENT in page
    assert CALLBACK in page


def test_cimd__a_redirect_uri_outside_the_document_is_refused_without_redirecting(signed_in):
    response = authorize(signed_in, redirect_uri="https://evil.example/callback")
    assert response.status_code == 400 and not response.has_header("Location")
    assert "Mismatching redirect URI" in response.content.decode()


def test_cimd__an_unknown_url_client_is_refused(signed_in):
    response = authorize(signed_in, client_id="https://unknown.example/client.json")
    assert response.status_code == 400 and not response.has_header("Location")
    assert "Invalid client_id" in response.content.decode()
