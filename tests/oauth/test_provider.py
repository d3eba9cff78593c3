"""resolver/oauth/provider.py: the `OAUTH2_PROVIDER` a host sets, with what the MCP door relies on.

How the authorization server behaves with it, over HTTP, is in
tests/oauth/test_hardening.py and tests/mcp_http/test_oauth.py.
"""
from __future__ import annotations

from django.utils.module_loading import import_string

from resolver.oauth.provider import ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS, oauth2_provider_settings


def test_provider__code_with_pkce_only_one_read_scope_and_rotating_refresh_tokens() -> None:
    settings = oauth2_provider_settings("https://resolver.example")
    assert settings["PKCE_REQUIRED"] is True
    assert settings["OAUTH2_RESPONSE_TYPES_SUPPORTED"] == ["code"]
    assert settings["OAUTH2_GRANT_TYPES_SUPPORTED"] == ["authorization_code", "refresh_token"]
    assert list(settings["SCOPES"]) == ["read"] == settings["DEFAULT_SCOPES"]
    assert settings["ROTATE_REFRESH_TOKEN"] is True and settings["REFRESH_TOKEN_REUSE_PROTECTION"] is True
    assert all(value is True for key, value in settings.items() if key.startswith("COMPLIANT_BCP_RFC9700_"))


def test_provider__the_issuer_is_the_site_with_one_trailing_slash() -> None:
    assert oauth2_provider_settings("https://resolver.example")["OIDC_ISS_ENDPOINT"] == "https://resolver.example/"
    assert oauth2_provider_settings("https://resolver.example/")["OIDC_ISS_ENDPOINT"] == "https://resolver.example/"


def test_provider__lifetimes_and_client_id_metadata_documents_are_the_hosts() -> None:
    default = oauth2_provider_settings("https://resolver.example")
    assert (default["ACCESS_TOKEN_EXPIRE_SECONDS"], default["REFRESH_TOKEN_EXPIRE_SECONDS"]) == (
        ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS) == (300, 30 * 24 * 3600)
    assert default["CIMD_ENABLED"] is True
    chosen = oauth2_provider_settings("https://resolver.example", access_token_seconds=60, refresh_token_seconds=600,
                                      client_id_metadata_documents=False)
    assert (chosen["ACCESS_TOKEN_EXPIRE_SECONDS"], chosen["REFRESH_TOKEN_EXPIRE_SECONDS"]) == (60, 600)
    assert chosen["CIMD_ENABLED"] is False


def test_provider__the_classes_it_names_import() -> None:
    settings = oauth2_provider_settings("https://resolver.example")
    for path in (settings["OAUTH2_VALIDATOR_CLASS"], settings["CIMD_METADATA_FETCHER"],
                 *settings["CIMD_REGISTRATION_PERMISSION_CLASSES"]):
        assert isinstance(import_string(path), type), path
