"""The MCP endpoint as an OAuth protected resource: its identifier and the tokens it accepts.

A token is accepted only when it was issued by this site's authorization
server for exactly this resource (RFC 8707 `resource`, which the token keeps
as its audience), is unexpired and unrevoked, carries the read scope, and
belongs to an active user through a usable client. A token issued without a
resource indicator is refused too: it could have been meant for any server.
The token's user is the person whose calendar is read.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from resolver.conf import resolver_settings

MCP_PATH = "/mcp"
READ_SCOPE = "read"
PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"


def site_origin() -> str:
    return resolver_settings.SITE_URL.rstrip("/")


def issuer_url() -> str:
    """The authorization server: the site itself, as OAUTH2_PROVIDER["OIDC_ISS_ENDPOINT"] spells it.

    With the root's slash: clients compare RFC 9207's `iss` as plain strings
    against the issuer they parsed as a URL, which always has that slash.
    """
    return site_origin() + "/"


def resource_url() -> str:
    """The canonical URI of the MCP endpoint: the `resource` a client must ask its token for."""
    return site_origin() + MCP_PATH


def resource_metadata_url() -> str:
    """RFC 9728 section 3.1: the well-known prefix inserted between the origin and the resource's path."""
    return site_origin() + PROTECTED_RESOURCE_WELL_KNOWN + MCP_PATH


@dataclass(frozen=True)
class Grant:
    """What a valid bearer token grants: whose calendar, through which client, until when."""

    user_id: object
    client_id: str
    scopes: tuple[str, ...]
    expires_at: int
    resource: str
    token: str = field(repr=False)  # kept only to hand to the SDK's auth context; never logged


def verify_access_token(token: str, *, resource: str) -> Grant | None:
    """The grant of a bearer token valid for `resource`, or None. Synchronous: uses the ORM."""
    from oauth2_provider.models import get_access_token_model

    if not token or len(token) > 512:
        return None
    # Tokens are stored as their SHA-256 only (COMPLIANT_BCP_RFC9700_TOKEN_STORAGE).
    checksum = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    access_token: Any = (get_access_token_model().objects.select_related("application", "user")
                         .filter(token_checksum=checksum).first())
    if access_token is None or not access_token.is_valid([READ_SCOPE]):
        return None
    if resource not in (access_token.resource or []):
        return None
    user = access_token.user
    application = access_token.application
    if user is None or not user.is_active or application is None or not application.is_usable(None):
        return None
    return Grant(user_id=user.pk, client_id=application.client_id, scopes=tuple(access_token.scope.split()),
                 expires_at=int(access_token.expires.timestamp()), resource=resource, token=token)
