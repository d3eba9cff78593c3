"""No authorization code, token, password or Authorization header in any log line, at any level (resolver/redaction.py).

The host here is the worst case: root logging at DEBUG, written by a handler
of its own that knows nothing of the app's filter.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import re
from typing import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client
from oauth2_provider.models import Application

from resolver.oauth import resource
from resolver.redaction import REDACTED, RedactSecrets, redact
from tests.support.loopback_http import LoopbackHTTP, send

CALLBACK = "https://agent.test/cb"
VERIFIER = "v" * 64
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).decode().rstrip("=")


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@pytest.fixture
def root_at_debug() -> Iterator[Lines]:
    root = logging.getLogger()
    handler = Lines()
    saved = root.level
    # Loggers the project's LOGGING names keep their own levels; everything else follows root.
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    for name in ("oauthlib", "oauth2_provider", "urllib3", "requests", "django"):
        logging.getLogger(name).setLevel(logging.NOTSET)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)


@pytest.mark.parametrize("line, secret", [
    ("Created authorization code grant {'code': 'AbC123xyz', 'state': 's'} for request", "AbC123xyz"),
    ('"POST /oauth/token/?code=abcdef123&state=x HTTP/1.1" 200', "abcdef123"),
    ("grant_type=refresh_token&refresh_token=R3fr3shT0k&client_id=agent", "R3fr3shT0k"),
    ("{'access_token': 'acc355', 'expires_in': 300, 'refresh_token': 'r3fr'}", "acc355"),
    ("{'access_token': 'acc355', 'expires_in': 300, 'refresh_token': 'r3fr'}", "r3fr"),
    ("headers={'Authorization': 'Basic dXNlcjpwYXNz', 'Depth': '1'}", "dXNlcjpwYXNz"),
    ("Authorization: Bearer abc.def.ghi", "abc.def.ghi"),
    ('{"password": "pa\\"ss", "user": "x"}', 'pa\\"ss'),
    ("url: http://alice:s3cretpw@127.0.0.1:5232/dav/", "s3cretpw"),
    ("Token(token='t0k3nvalue', user=1)", "t0k3nvalue"),
    ("client_secret=shh-123&x=1", "shh-123"),
    ("Validating refresh token nFBbxIwjP4nODQH4yDDZPI6XSYRPWN for client <Application: Agent>.",
     "nFBbxIwjP4nODQH4yDDZPI6XSYRPWN"),
    ("Invalid refresh token, nFBbxIwjP4nODQH4yDDZPI6XSYRPWN, for client", "nFBbxIwjP4nODQH4yDDZPI6XSYRPWN"),
])
def test_redact__each_form_of_a_secret(line, secret):
    clean = redact(line)
    assert secret not in clean and REDACTED in clean


def test_redact__ordinary_lines_unchanged():
    for line in ('{"door":"api","error_code":"invalid_request","http_status":400}', "resolved in 12 ms",
                 "calendar_unavailable (timeout) for collection work"):
        assert redact(line) == line


def test_filter__extra_fields_named_after_a_secret_lose_their_value():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "login %s", ("password=hunter22",), None)
    record.password = "hunter22"
    record.url = "https://u:hunter22@host/"
    assert RedactSecrets().filter(record) is True
    assert "hunter22" not in record.getMessage() and record.password == REDACTED and "hunter22" not in record.url


@pytest.mark.django_db
def test_oauth_code_flow_at_debug__no_code_or_token_in_any_line(root_at_debug):
    user = get_user_model().objects.create_user("alice", password="alice-site-password")
    Application.objects.create(name="Agent", client_id="agent", client_type=Application.CLIENT_PUBLIC,
                               authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                               redirect_uris=CALLBACK, algorithm="")
    browser = Client()
    browser.force_login(user)
    params = {"response_type": "code", "client_id": "agent", "redirect_uri": CALLBACK, "state": "s",
              "scope": "read", "code_challenge": CHALLENGE, "code_challenge_method": "S256",
              "resource": resource.resource_url()}
    page = browser.get("/oauth/authorize/", params)
    assert page.status_code == 200
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.content.decode()))
    allowed = browser.post("/oauth/authorize/", {**fields, "allow": "Authorize"})
    code = parse_qs(urlsplit(allowed["Location"]).query)["code"][0]
    token = Client().post("/oauth/token/", {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
                                            "client_id": "agent", "code_verifier": VERIFIER,
                                            "resource": resource.resource_url()})
    assert token.status_code == 200, token.content
    first = token.json()
    refreshed = Client().post("/oauth/token/", {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
                                                "client_id": "agent"})
    assert refreshed.status_code == 200, refreshed.content
    second = refreshed.json()

    logged = root_at_debug.text
    assert "oauthlib" in logged and REDACTED in logged  # oauthlib did log the grant, its code redacted
    for secret in (code, VERIFIER, first["access_token"], first["refresh_token"], second["access_token"],
                   second["refresh_token"], "alice-site-password"):
        assert secret not in logged


def test_outgoing_requests_at_debug__no_query_secret_or_authorization(root_at_debug):
    server = LoopbackHTTP(lambda handler: send(handler, 200, b"{}", "application/json"))
    try:
        url = f"http://127.0.0.1:{server.port}/callback?code=c0de-abc123&state=s"
        requests.get(url, headers={"Authorization": "Bearer b3arer-t0ken"}, timeout=10)
        requests.get(f"http://caldav-user:dav-passw0rd@127.0.0.1:{server.port}/dav/", timeout=10)
    finally:
        server.stop()
    logged = root_at_debug.text
    assert "urllib3" in logged  # the request lines were logged
    for secret in ("c0de-abc123", "b3arer-t0ken", "dav-passw0rd"):
        assert secret not in logged
