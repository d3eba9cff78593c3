"""The authorization server's endpoints: authorize, token, revoke, and RFC 8414 metadata.

Included at the site's root (README "MCP over HTTP"; the demo's lifeproject/urls.py) in django-oauth-toolkit's
namespace, which its views reverse. Only what the MCP door needs is routed:
no implicit, password, client-credentials or device grant, no self-service
application pages (clients are pre-registered in the admin or identified by
a Client ID Metadata Document), no introspection (the resource server is this
same site and reads the token table).
"""
from __future__ import annotations

from django.urls import path
from oauth2_provider import views

from resolver.oauth.views import ConsentView, throttled

app_name = "oauth2_provider"

urlpatterns = [
    # The app's consent page and rules (resolver/oauth/views.py), whatever order INSTALLED_APPS has.
    path("oauth/authorize/", ConsentView.as_view(), name="authorize"),
    # Unauthenticated: throttled per client address.
    path("oauth/token/", throttled(views.TokenView.as_view()), name="token"),
    path("oauth/revoke/", throttled(views.RevokeTokenView.as_view()), name="revoke-token"),
    # RFC 8414 section 3: at the origin's well-known URL (the issuer has no path).
    path(".well-known/oauth-authorization-server", views.OAuthServerMetadataView.as_view(),
         name="oauth-server-metadata"),
]
