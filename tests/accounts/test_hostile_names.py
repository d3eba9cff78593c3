"""A server's calendar names cannot forge output: commands escape them, JSON escapes them, pages isolate them.

A scripted CalDAV server on loopback names its calendar with CR, LF, a tab,
U+009B (the 8-bit CSI a terminal acts on) and U+202E (right-to-left
override), and tries to print a fake account line under the real one.
"""
from __future__ import annotations

import io
import json
import re
import sys
from typing import Iterator

import pytest
from django.core.management import call_command
from django.test import Client

from tests.accounts.conftest import STRONG_KEY
from tests.support.scripted_dav import PASSWORD, USER, ScriptedDAV

pytestmark = pytest.mark.django_db

FORGED = "99\tevil\tattacker at https://evil.example/\t5 collections"
HOSTILE_NAME = f"Work\r\n{FORGED}\n  evil/x\u009b2J\u202eredro"
# Nothing a terminal acts on, nothing that reorders a line (tab is the output's own separator).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
ESCAPED = "Work\\x0d\\x0a99\\x09evil\\x09attacker at https://evil.example/\\x095 collections\\x0a  evil/x\\x9b2J\\u202eredro"


@pytest.fixture
def hostile(settings) -> Iterator[ScriptedDAV]:
    server = ScriptedDAV()
    server.display_name = HOSTILE_NAME
    settings.SECRET_KEY = STRONG_KEY
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
                         "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": True, "SITE_URL": "http://testserver"}
    try:
        yield server
    finally:
        server.stop()


def _call(*args: str, stdin: str = "") -> str:
    out = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        call_command("calendar_accounts", *args, stdout=out, stderr=io.StringIO())
    finally:
        sys.stdin = saved
    return out.getvalue()


def _add(server: ScriptedDAV, username: str = "frank") -> str:
    return _call("add", "--user", username, "--url", server.url, "--username", USER, "--password-stdin",
                 "--label", "Home", stdin=PASSWORD + "\n")


def test_add_and_list__the_name_is_escaped_and_forges_no_line(hostile, django_user_model):
    django_user_model.objects.create_user("frank")
    added = _add(hostile)
    listed = _call("list", "--user", "frank")
    for out in (added, listed):
        assert not RAW.search(out), repr(out)
        lines = out.splitlines()
        assert len(lines) == 2, lines  # the account, its one collection: no line of the server's
        assert lines[1] == f"  home/work\t{ESCAPED}"
        assert not any(line.startswith("99\t") for line in lines)


def test_list_json__c1_and_bidi_escaped_and_the_name_intact(hostile, django_user_model):
    django_user_model.objects.create_user("frank")
    _add(hostile)
    out = _call("list", "--user", "frank", "--json")
    assert not RAW.search(out), repr(out)
    assert "\\u009b" in out and "\\u202e" in out
    (account,) = json.loads(out)["accounts"]
    assert account["collections"] == [{"collection_id": "home/work", "display_name": HOSTILE_NAME}]


def test_accounts_page__the_name_is_isolated(hostile, django_user_model):
    frank = django_user_model.objects.create_user("frank")
    _add(hostile)
    client = Client()
    client.force_login(frank)
    page = client.get("/resolve/accounts/").content.decode()
    shown = re.search(r'<bdi data-field="display_name">(.*?)</bdi>', page, re.S)
    assert shown is not None and "\u202e" in shown.group(1)  # the text as the server wrote it, isolated
    assert page.count("\u202e") == 1


def test_api__an_unknown_collection_is_quoted_escaped(hostile, django_user_model):
    from rest_framework.authtoken.models import Token

    frank = django_user_model.objects.create_user("frank")
    _add(hostile)
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=frank).key}")
    asked = "home/\u202ekrow\u009b"
    response = client.post("/v1/resolve", {"text": "x", "kind": "task", "collection_ids": [asked]},
                           content_type="application/json")
    assert response.status_code == 400
    assert b"\xe2\x80\xae" not in response.content and b"\xc2\x9b" not in response.content
    error = response.json()["error"]
    assert error["code"] == "collection_not_found"
    assert "`home/\\u202ekrow\\x9b`" in error["message"] and not RAW.search(error["message"])
    assert error["details"]["collection_ids"] == [asked]  # the value itself, JSON-escaped, unchanged


def test_api__an_unknown_field_is_quoted_escaped(hostile, django_user_model):
    from rest_framework.authtoken.models import Token

    frank = django_user_model.objects.create_user("frank")
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=frank).key}")
    response = client.post("/v1/resolve", {"text": "x", "kind": "task", "a\u202eb\nc": 1},
                           content_type="application/json")
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert error["message"].startswith("Unknown field `a\\u202eb\\x0ac`;")
