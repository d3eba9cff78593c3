"""The MCP door with per-user accounts: `manage.py mcp --user NAME` reads only NAME's accounts.

The server runs as an agent starts it (a subprocess, settings from the
environment), on a database where the accounts were connected with
`manage.py calendar_accounts add` (password on stdin), against the household's
Radicales.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.accounts.conftest import STRONG_KEY, Household

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _manage(env: dict[str, str], *args: str, stdin: str | None = None) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, input=stdin, text=True,
                   stdout=subprocess.DEVNULL, timeout=120)


@pytest.fixture(scope="module")
def mcp_household(household: Household) -> Iterator[dict[str, str]]:
    root = Path(tempfile.mkdtemp(prefix="mcp-accounts-"))
    try:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "DJANGO_SETTINGS_MODULE": "lifeproject.settings",
            "SECRET_KEY": STRONG_KEY,
            # The settings' own account is alice's: a fallback to it would show as a leak to bob.
            "CALDAV_URL": household.a.url,
            "CALDAV_USERNAME": household.a.instance.username,
            "CALDAV_PASSWORD": household.a.instance.password,
            "CALDAV_TIMEOUT": "5",
            "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
            "CACHE_URL": "locmemcache://",
            "RESOLVER_SITE_URL": "http://resolver.test",
            "RESOLVER_ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
            "RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES": "true",
            "TYPESAFE_API_KEY": "",
            "TYPESAFE_BASE_URL": "",
            "LOG_LEVEL": "WARNING",
        }
        _manage(env, "migrate", "--no-input")
        _manage(env, "shell", "-c", "from django.contrib.auth import get_user_model; "
                                    "[get_user_model().objects.create_user(n) for n in ('alice', 'bob', 'carol')]")
        for user, (url, username, password), label in (("alice", household.alice, "Home"),
                                                       ("bob", household.bob_a, "Home"),
                                                       ("bob", household.bob_b, "Work")):
            _manage(env, "calendar_accounts", "add", "--user", user, "--url", url, "--username", username,
                    "--password-stdin", "--label", label, stdin=password + "\n")
        yield env
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _call(env: dict[str, str], user: str, tool: str, arguments: dict[str, Any]) -> Any:
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp", "--user", user],
                                   env=env, cwd=str(ROOT))

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(main)


def test_mcp__each_user_resolves_in_their_own_accounts(mcp_household):
    alice = _call(mcp_household, "alice", "resolve_reference", {"text": "Quarterly report", "kind": "task"})
    assert alice.is_error is False and alice.structured_content["data"]["uid"] == "alice-report"
    bob = _call(mcp_household, "bob", "resolve_reference", {"text": "Quarterly report", "kind": "task"})
    data = bob.structured_content["data"]
    assert bob.structured_content["status"] == "needs_clarification"
    assert {c["uid"] for c in data["candidates"]} == {"bob-report"} and len(data["candidates"]) == 2
    secret = _call(mcp_household, "bob", "resolve_reference", {"text": "Alice secret errand", "kind": "task"})
    assert secret.structured_content["data"]["candidates"] == []
    collections = _call(mcp_household, "bob", "list_collections", {})
    assert sorted(c["collection_id"] for c in collections.structured_content["data"]["collections"]) == [
        "home/personal", "home/work", "work/work"]


def test_mcp__no_account_is_a_tool_error_with_its_code(mcp_household):
    carol = _call(mcp_household, "carol", "resolve_reference", {"text": "Quarterly report", "kind": "task"})
    assert carol.is_error is True and carol.structured_content["error"]["code"] == "no_calendar_account"
