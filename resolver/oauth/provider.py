"""The authorization server's settings: django-oauth-toolkit's `OAUTH2_PROVIDER`, as the MCP door needs it.

A host sets `OAUTH2_PROVIDER = oauth2_provider_settings(SITE_URL)` (README
"MCP over HTTP"): authorization code with PKCE S256 only, the site's login
and the app's consent page, one read-only scope, tokens bound to the resource
they were requested for (RFC 8707), short-lived access tokens and rotating
refresh tokens. Keys a host adds to the returned dict win.
"""
from __future__ import annotations

from typing import Any

ACCESS_TOKEN_SECONDS = 300
REFRESH_TOKEN_SECONDS = 30 * 24 * 3600


def oauth2_provider_settings(site_url: str, *, access_token_seconds: int = ACCESS_TOKEN_SECONDS,
                             refresh_token_seconds: int = REFRESH_TOKEN_SECONDS,
                             client_id_metadata_documents: bool = True) -> dict[str, Any]:
    """`OAUTH2_PROVIDER` for the site at `site_url` (its public origin, RESOLVER["SITE_URL"])."""
    return {
        "SCOPES": {"read": "Read your tasks and calendar events (never change them)"},
        "DEFAULT_SCOPES": ["read"],
        "PKCE_REQUIRED": True,
        "ACCESS_TOKEN_EXPIRE_SECONDS": access_token_seconds,
        "REFRESH_TOKEN_EXPIRE_SECONDS": refresh_token_seconds,
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_REUSE_PROTECTION": True,
        "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
        "REQUEST_APPROVAL_PROMPT": "force",
        "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
        "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
        # The issuer is the site, whatever Host a request names (RFC 8414 metadata, RFC 9207 `iss`).
        "OIDC_ISS_ENDPOINT": site_url.rstrip("/") + "/",
        # Clients identified by an https URL, their document fetched under the site's address policy
        # and cut at CIMD_FETCH_TIMEOUT_SECONDS in all (resolver/oauth/documents.py) ...
        "CIMD_ENABLED": client_id_metadata_documents,
        "CIMD_METADATA_FETCHER": "resolver.oauth.documents.DocumentFetcher",
        # ... only while a signed-in person is on the authorize page, bounded (resolver/oauth/clients.py),
        # whose in-flight bound waits for a slot instead of refusing at once (so the toolkit's is off).
        "CIMD_REGISTRATION_PERMISSION_CLASSES": ("resolver.oauth.clients.SignedInPersonOnly",),
        "CIMD_MAX_CONCURRENT_FETCHES": 0,
        # A resource fixed at authorization; a reused code revokes its tokens (resolver/oauth/validator.py).
        "OAUTH2_VALIDATOR_CLASS": "resolver.oauth.validator.Validator",
        # RFC 9700: S256 only, no implicit or password grant, `iss` in the authorization response,
        # token hashes at rest, bearer tokens only in the Authorization header.
        "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
        "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
        "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
        "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
        "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
        "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
        "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    }
