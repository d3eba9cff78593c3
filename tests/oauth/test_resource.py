"""Which bearer tokens the MCP endpoint accepts (resolver/oauth/resource.py), on the token table itself."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, set_token_value

from resolver.oauth import resource

pytestmark = pytest.mark.django_db

RESOURCE = "https://resolver.test/mcp"


@pytest.fixture
def user():
    return get_user_model().objects.create_user("alice")


@pytest.fixture
def application():
    return Application.objects.create(name="Agent", client_id="agent", client_type=Application.CLIENT_PUBLIC,
                                      authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                                      redirect_uris="https://agent.test/cb", algorithm="")


def mint(user, application, *, raw="tok-abc", resource_list=(RESOURCE,), seconds=300, scope="read"):
    token = AccessToken(user=user, application=application, expires=timezone.now() + timedelta(seconds=seconds),
                        scope=scope, resource=list(resource_list))
    set_token_value(token, raw)
    token.save()
    return token


def test_verify__a_token_for_this_resource_grants_its_user(user, application):
    mint(user, application)
    grant = resource.verify_access_token("tok-abc", resource=RESOURCE)
    assert grant is not None and grant.user_id == user.pk and grant.client_id == "agent"
    assert grant.scopes == ("read",) and grant.resource == RESOURCE
    assert "tok-abc" not in repr(grant)


def test_verify__tokens_are_stored_as_hashes_only(user, application):
    mint(user, application)
    assert AccessToken.objects.get().token == ""


@pytest.mark.parametrize("kwargs", [
    {"resource_list": ("https://other.test/mcp",)},
    {"resource_list": ("https://resolver.test/mcp/extra",)},
    {"resource_list": ()},
    {"seconds": -1},
    {"scope": "write"},
])
def test_verify__refused(user, application, kwargs):
    mint(user, application, **kwargs)
    assert resource.verify_access_token("tok-abc", resource=RESOURCE) is None


def test_verify__unknown_or_oversized_token(user, application):
    mint(user, application)
    assert resource.verify_access_token("tok-abd", resource=RESOURCE) is None
    assert resource.verify_access_token("", resource=RESOURCE) is None
    assert resource.verify_access_token("t" * 10_000, resource=RESOURCE) is None


def test_verify__inactive_user_or_revoked_token(user, application):
    token = mint(user, application)
    user.is_active = False
    user.save()
    assert resource.verify_access_token("tok-abc", resource=RESOURCE) is None
    user.is_active = True
    user.save()
    token.revoke()
    assert resource.verify_access_token("tok-abc", resource=RESOURCE) is None


def test_urls__from_the_site_url(settings):
    settings.RESOLVER = {"SITE_URL": "https://calendar.example.org/"}
    assert resource.resource_url() == "https://calendar.example.org/mcp"
    assert resource.issuer_url() == "https://calendar.example.org/"
    assert resource.resource_metadata_url() == "https://calendar.example.org/.well-known/oauth-protected-resource/mcp"
