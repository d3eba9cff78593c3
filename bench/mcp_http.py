"""/mcp over HTTP against the API, on the production command, against the demo calendar.

    .venv/bin/python bench/mcp_http.py [--repeat 25]

Starts a Radicale with the demo items, then `gunicorn lifeproject.wsgi` (the
production command before /mcp: sync worker) and `gunicorn
lifeproject.asgi:application` (now: uvicorn worker), one worker each, on one
SQLite database, judge off. Interleaved rounds, each over a kept-alive
connection per target, time:

- `POST /v1/resolve` on the WSGI server: the baseline, what a caller ran before;
- `POST /v1/resolve` on the ASGI server: what switching the production worker costs the API;
- `tools/call resolve_reference` at `/mcp` (2026-07-28, bearer token checked against the token table);
- the two rounds of a form elicitation at `/mcp` (input_required, then the retry with the pick).

Prints medians (ms) and ratios to the baseline. Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lifeproject import embedded_radicale  # noqa: E402
from lifeproject.embedded_radicale import free_port  # noqa: E402
from lifeproject.seeding import demo_collections, seed  # noqa: E402
from tests.mcp_http.conftest import run_python, start_asgi  # noqa: E402
from tests.mcp_http.wire import FORM, VERSION  # noqa: E402
from tests.production.servers import start_gunicorn  # noqa: E402

EXACT = {"text": "Draft portfolio outline", "kind": "task"}
AMBIGUOUS = {"text": "portfolio", "kind": "task"}


def mcp_body(arguments: dict, *, input_responses: dict | None = None, state: str | None = None) -> dict:
    params: dict = {"name": "resolve_reference", "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": FORM}}}
    if input_responses is not None:
        params["inputResponses"] = input_responses
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=25, help="timed rounds (after two warm-ups)")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-mcp-http-"))
    instance, radicale = embedded_radicale.launch(root / "radicale")
    servers = []
    try:
        seed(instance.url, instance.username, instance.password, demo_collections(datetime.now(timezone.utc)))
        wsgi_port, asgi_port = free_port(), free_port()
        site = f"http://127.0.0.1:{asgi_port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))}
        env.update({
            "DJANGO_SETTINGS_MODULE": "lifeproject.settings", "PYTHONPATH": str(REPO), "DEBUG": "False",
            "SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "CALDAV_URL": instance.url, "CALDAV_USERNAME": instance.username, "CALDAV_PASSWORD": instance.password,
            "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}", "CACHE_URL": f"filecache://{root / 'cache'}",
            "RESOLVER_JUDGE": "off", "TYPESAFE_API_KEY": "", "TYPESAFE_BASE_URL": "",
            "RESOLVER_THROTTLE_RATE": "100000/min", "RESOLVER_SITE_URL": site, "LOG_LEVEL": "WARNING",
        })
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=REPO, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        oauth_token = secrets.token_urlsafe(30)
        api_token = run_python(env, f"""
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, set_token_value
from rest_framework.authtoken.models import Token
user = get_user_model().objects.create_user("bench")
app = Application.objects.create(name="bench", client_id="bench", client_type="public",
                                 authorization_grant_type="authorization-code", redirect_uris="http://127.0.0.1/cb",
                                 algorithm="")
token = AccessToken(user=user, application=app, expires=timezone.now() + timedelta(hours=1), scope="read",
                    resource=[{site + "/mcp"!r}])
set_token_value(token, {oauth_token!r})
token.save()
print(Token.objects.create(user=user).key)
""").strip()
        servers.append(start_gunicorn({**env, "WEB_CONCURRENCY": "1"}, workers=1, log_dir=root / "wsgi"))
        servers.append(start_asgi(env, port=asgi_port, workers=1, log_dir=root / "asgi"))
        wsgi_url = servers[0].url
        api_headers = {"Authorization": f"Token {api_token}"}
        mcp_headers = {"Authorization": f"Bearer {oauth_token}", "MCP-Protocol-Version": VERSION,
                       "Mcp-Method": "tools/call", "Mcp-Name": "resolve_reference",
                       "Accept": "application/json, text/event-stream"}
        wsgi_session, asgi_session = requests.Session(), requests.Session()

        def api_wsgi() -> None:
            response = wsgi_session.post(f"{wsgi_url}/v1/resolve", json=EXACT, headers=api_headers, timeout=60)
            assert response.json()["status"] == "ok", response.text

        def api_asgi() -> None:
            response = asgi_session.post(f"{site}/v1/resolve", json=EXACT, headers=api_headers, timeout=60)
            assert response.json()["status"] == "ok", response.text

        def mcp_exact() -> None:
            result = asgi_session.post(f"{site}/mcp", json=mcp_body(EXACT), headers=mcp_headers, timeout=60).json()
            assert result["result"]["structuredContent"]["status"] == "ok", result

        def mcp_elicitation() -> None:
            first = asgi_session.post(f"{site}/mcp", json=mcp_body(AMBIGUOUS), headers=mcp_headers,
                                      timeout=60).json()["result"]
            pick = first["inputRequests"]["pick"]["params"]["requestedSchema"]["properties"]["item_id"]["oneOf"][0]
            answer = {"pick": {"action": "accept", "content": {"item_id": pick["const"]}}}
            retry = asgi_session.post(f"{site}/mcp", json=mcp_body(AMBIGUOUS, input_responses=answer,
                                                                    state=first["requestState"]),
                                      headers=mcp_headers, timeout=60).json()["result"]
            assert retry["structuredContent"]["data"]["method"] == "user_selected", retry

        scenarios = {"POST /v1/resolve, WSGI (baseline)": api_wsgi, "POST /v1/resolve, ASGI": api_asgi,
                     "/mcp tools/call, exact": mcp_exact, "/mcp form elicitation, both rounds": mcp_elicitation}
        timings: dict[str, list[float]] = {name: [] for name in scenarios}
        for round_number in range(args.repeat + 2):
            for name, run in scenarios.items():
                started = time.perf_counter()
                run()
                if round_number >= 2:
                    timings[name].append((time.perf_counter() - started) * 1000)
        baseline = statistics.median(timings["POST /v1/resolve, WSGI (baseline)"])
        print(f"{args.repeat} interleaved rounds, one worker per server, demo calendar, judge off\n")
        print("| scenario | median | ratio to baseline |")
        print("|---|---:|---:|")
        for name, values in timings.items():
            median = statistics.median(values)
            print(f"| {name} | {median:.1f} ms | {median / baseline:.2f} |")
    finally:
        for server in servers:
            server.stop()
        radicale.terminate()
        radicale.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
