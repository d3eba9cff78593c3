"""Per-user accounts over /mcp: the token's user is whose calendar is read, and nobody else's.

The production command with `RESOLVER_ACCOUNT_BACKEND=resolver.accounts.PerUserAccounts`
against the household of tests/accounts (alice's and bob's own collections,
titles shared between them); tokens for alice and bob on the same site.
"""
from __future__ import annotations

from lifeproject.embedded_radicale import free_port
from tests.accounts.conftest import household  # noqa: F401  (the fixture)
from tests.mcp_http import wire
from tests.mcp_http.conftest import run_python, start_asgi


def test_per_user__each_token_reads_its_own_persons_calendar_only(deployment, site, household):  # noqa: F811
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**deployment.site_env(url), "RESOLVER_ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
           "RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES": "True"}
    alice_account, bob_account = household.alice, household.bob_a
    run_python(env, f"""
from django.contrib.auth import get_user_model
from resolver import accounts
users = get_user_model().objects
accounts.add_account(user=users.get(username="alice"), url={alice_account[0]!r}, username={alice_account[1]!r},
                     password={alice_account[2]!r}, label="Home")
accounts.add_account(user=users.get(username="bob"), url={bob_account[0]!r}, username={bob_account[1]!r},
                     password={bob_account[2]!r}, label="Home")
""")
    server = start_asgi(env, port=port, workers=1, log_dir=deployment.root / "per-user")
    try:
        mcp_url = url + "/mcp"
        alice = deployment.mint_token("alice", resource=[mcp_url])
        bob = deployment.mint_token("bob", resource=[mcp_url])

        def resolve(token: str, text: str) -> dict:
            result = wire.call(mcp_url, token, "resolve_reference", {"text": text, "kind": "task"}).json()["result"]
            return result["structuredContent"]

        own = resolve(alice, "Alice secret errand")
        assert own["status"] == "ok" and own["data"]["uid"] == "alice-secret"
        shared_title = resolve(alice, "Quarterly report")
        assert shared_title["status"] == "ok" and shared_title["data"]["uid"] == "alice-report"
        bobs = resolve(bob, "Quarterly report")
        assert bobs["status"] == "ok" and bobs["data"]["uid"] == "bob-report"
        # Bob cannot reach alice's item, by title or by anything else.
        leak = resolve(bob, "Alice secret errand")
        assert leak["status"] == "needs_clarification"
        assert all(c["uid"].startswith("bob-") for c in leak["data"]["candidates"])
        assert "alice-secret" not in str(leak)
    finally:
        server.stop()
