"""django-oauth-toolkit's request validator, with what RFC 8707 and RFC 6749 ask of the token endpoint.

- A resource is fixed at authorization (RFC 8707 section 2.2): the token
  endpoint and refresh honour only the resources the authorization named.
  django-oauth-toolkit refuses a resource beyond the grant's, but lets a grant
  (or refresh token) made without one take any resource at the token
  endpoint; here that is `invalid_target`, so a consent given for no resource
  never becomes a token for `/mcp`.
- A reused authorization code revokes the tokens it produced (RFC 6749
  section 4.1.2). The refresh token family a code starts is named after the
  code (an HMAC of it under SECRET_KEY), so a second use of the code, which
  finds no grant, revokes that family and its access tokens; the tokens
  rotated from it share the family.
- Issuing a token counts as a use of a document client (clients.py).
"""
from __future__ import annotations

import hashlib
import hmac
import uuid
from typing import Any

from django.conf import settings
from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors


def code_family(code: str) -> uuid.UUID:
    """The refresh token family an authorization code starts: known only to whoever holds the code."""
    digest = hmac.new(settings.SECRET_KEY.encode(), b"resolver.oauth.code-family:" + code.encode("utf-8", "replace"),
                      hashlib.sha256).digest()
    return uuid.UUID(bytes=digest[:16])


def _not_granted(request: Any, what: str) -> errors.CustomOAuth2Error:
    return errors.CustomOAuth2Error(
        error="invalid_target",
        description=f"The resource was not named when access was allowed ({what}); ask for it at authorization.",
        request=request)


class Validator(OAuth2Validator):
    def _check_and_set_request_resource(self, request: Any) -> None:
        super()._check_and_set_request_resource(request)
        if not request.resource:
            return
        if request.grant_type == "authorization_code":
            grant = get_grant_model().objects.filter(code=request.code, application=request.client).first()
            if grant is None or not grant.resource:
                raise _not_granted(request, "the authorization named none")
        elif request.grant_type == "refresh_token":
            refresh = getattr(request, "refresh_token_instance", None)
            if refresh is None or not refresh.resource:
                raise _not_granted(request, "the refresh token's authorization named none")

    def validate_code(self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        if code and not get_grant_model().objects.filter(code=code).exists():
            # Used before (or never issued): whatever it produced is revoked.
            get_refresh_token_model().revoke_family(code_family(code))
        return False

    def _create_refresh_token(self, request: Any, refresh_token_code: str, access_token: Any,
                              previous_refresh_token: Any) -> Any:
        refresh = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        if previous_refresh_token is None and request.grant_type == "authorization_code" and request.code:
            refresh.token_family = code_family(request.code)
            refresh.save(update_fields=["token_family"])
        return refresh

    def _save_bearer_token(self, token: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        saved = super()._save_bearer_token(token, request, *args, **kwargs)
        from resolver.oauth import clients

        clients.used(getattr(request.client, "client_id", None))
        return saved
