"""The API's limits and request log at /mcp: body limit, per-user throttle shared with the API, log lines."""
from __future__ import annotations

import anyio
import pytest
import requests
from django.contrib.auth import get_user_model
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver.mcp.http import Throttle
from tests.mcp_http import wire

EXACT = {"text": "Draft portfolio outline", "kind": "task"}


def test_body_limit__over_max_body_bytes_is_413_before_anything_runs(site):
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    response = wire.call(site.mcp_url, token, "resolve_reference", {**EXACT, "padding": "x" * 70_000})
    assert response.status_code == 413


def test_body_limit__the_same_text_limit_as_the_api(site):
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    result = wire.call(site.mcp_url, token, "resolve_reference", {"text": "x" * 5000, "kind": "task"}).json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "invalid_request"


def test_rebinding__another_host_is_421_and_a_foreign_origin_403(site):
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    host = requests.post(site.mcp_url, json=body, headers={**headers, "Host": "attacker.example"}, timeout=30)
    assert host.status_code == 421
    origin = requests.post(site.mcp_url, json=body, headers={**headers, "Origin": "https://attacker.example"},
                           timeout=30)
    assert origin.status_code == 403


def _through_throttle(user_id: object) -> int:
    statuses: list[int] = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    token = AccessToken(token="t", client_id="c", scopes=["read"], claims={"user_id": user_id})
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "user": AuthenticatedUser(token)}
    anyio.run(Throttle(app), scope, receive, send)
    return statuses[0]


@pytest.mark.django_db
def test_throttle__one_bucket_per_person_across_the_api_and_mcp(monkeypatch, radicale, settings):
    """Two requests a minute: one over the API and one over MCP use them up; the next MCP request is 429."""
    settings.RESOLVER = radicale.settings()
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"resolve": "2/min"})
    user = get_user_model().objects.create_user("throttled")
    other = get_user_model().objects.create_user("unthrottled")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert api.post("/v1/resolve", EXACT, format="json").status_code == 200
    assert _through_throttle(user.pk) == 200
    assert _through_throttle(user.pk) == 429
    assert _through_throttle(other.pk) == 200  # someone else's bucket is their own


def test_logs__one_line_per_mcp_request_without_tokens_or_references(site):
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    reference = "Draft portfolio outline"
    assert wire.call(site.mcp_url, token, "resolve_reference", {"text": reference, "kind": "task"}).status_code == 200
    assert wire.call(site.mcp_url, "not-a-token", "resolve_reference", EXACT).status_code == 401
    lines = [line for line in site.server.log_lines() if line.get("door") == "mcp"]
    ok = [line for line in lines if line.get("envelope_status") == "ok"]
    assert ok and ok[-1]["route"] == "mcp" and ok[-1]["http_status"] == 200
    assert ok[-1]["resolution_method"] == "deterministic" and ok[-1]["request_id"].startswith("req_")
    assert any(line["http_status"] == 401 for line in lines)
    everything = site.server.stderr
    for secret in (token, "not-a-token", reference, site.deployment.env["SECRET_KEY"],
                   site.deployment.env["CALDAV_PASSWORD"]):
        assert secret not in everything


@pytest.mark.parametrize("depth", [40, 30_000])
def test_deep_arguments__invalid_request_like_every_door(site, depth):
    # 40: the SDK could decode it; 30,000: its decoder gives up (a JSON-RPC parse error) unless cut first.
    token = site.deployment.mint_token("alice", resource=[site.mcp_url])
    arguments = '{"text": ' + "[" * depth + "]" * depth + ', "kind": "task"}'
    body = ('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "resolve_reference", '
            '"arguments": ARGS, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", '
            '"io.modelcontextprotocol/clientInfo": {"name": "deep", "version": "1"}, '
            '"io.modelcontextprotocol/clientCapabilities": {}}}}').replace("ARGS", arguments)
    headers = {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": wire.VERSION, "Mcp-Method": "tools/call",
               "Mcp-Name": "resolve_reference", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    response = requests.post(site.mcp_url, data=body.encode(), headers=headers, timeout=60)
    assert response.status_code == 200, response.text[:300]
    answer = response.json()
    assert answer["id"] == 5 and answer["result"]["isError"] is True
    error = answer["result"]["structuredContent"]["error"]
    assert (error["code"], error["details"]) == ("invalid_request", {"field": "body", "max_depth": 32})


# --- forwarded headers, on the servers as started ---------------------------------------


def _started(command: list[str], env: dict[str, str], port: int):
    import subprocess
    import time

    from tests.mcp_http.conftest import REPO

    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        try:
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
            return process
        except requests.RequestException:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"{command} did not start")


def _throttled_of_40(url: str) -> int:
    """POST /oauth/token/ forty times from 127.0.0.1, each with an X-Forwarded-For of its own."""
    return [requests.post(f"{url}/oauth/token/", data={"client_id": "x"}, timeout=30,
                          headers={"X-Forwarded-For": f"198.51.100.{n}"}).status_code
            for n in range(40)].count(429)


@pytest.mark.parametrize("server", ["bin/run", "gunicorn"])
@pytest.mark.parametrize("trusted, throttled", [("", 30), ("127.0.0.1", 0)])
def test_forwarded_for__believed_only_from_a_named_proxy(deployment, tmp_path, server, trusted, throttled):
    import sys

    from lifeproject.dev import uvicorn_command
    from lifeproject.embedded_radicale import free_port

    port = free_port()
    env = {**deployment.site_env(f"http://127.0.0.1:{port}"), "RESOLVER_OAUTH_THROTTLE_RATE": "10/min",
           "CACHE_URL": f"filecache://{tmp_path / 'cache'}", "RESOLVER_TRUSTED_PROXIES": trusted,
           # The servers' own default (127.0.0.1) is what made the header believed: set, to show it is not read.
           "FORWARDED_ALLOW_IPS": "127.0.0.1", "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1"}
    if server == "bin/run":
        if trusted:
            pytest.skip("bin/run trusts no proxy: the demo is reached directly")
        command = uvicorn_command(port)
    else:
        command = [sys.executable, "-m", "gunicorn", "lifeproject.asgi:application"]
    process = _started(command, env, port)
    try:
        assert _throttled_of_40(f"http://127.0.0.1:{port}") == throttled
    finally:
        process.terminate()
        process.wait(timeout=30)
