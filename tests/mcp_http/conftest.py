"""The MCP door over HTTP as a hosted agent meets it: the production command on loopback.

`site` is `gunicorn lifeproject.asgi:application` (gunicorn.conf.py, two
uvicorn workers) over a migrated SQLite file, a file cache shared by the
workers, and a Radicale of its own seeded with the scenario items. Two users
(alice, bob) and one pre-registered public OAuth client exist. Tokens come
from the real OAuth flow (tests/mcp_http/oauth_flow.py) or, for the
refusal cases, are minted in the database by a child process.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Awaitable, Callable, Iterator

import anyio
import mcp_types as types
import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from lifeproject.embedded_radicale import free_port
from lifeproject.seeding import seed
from tests.conftest import RunningRadicale, start_radicale
from tests.mcp_http import oauth_flow
from tests.support.calendars import scenario_collections

REPO = Path(__file__).resolve().parents[2]
USERS = {"alice": "alice-pw-7c1e9", "bob": "bob-pw-3f0a2"}
CLIENT_ID = "test-agent"
CALLBACK_PATH = "/callback"


@dataclass
class Gunicorn:
    process: subprocess.Popen[bytes]
    url: str
    log_dir: Path
    _files: list[IO[bytes]] = field(default_factory=list, repr=False)

    @property
    def stderr(self) -> str:
        return (self.log_dir / "gunicorn.err").read_text(encoding="utf-8", errors="replace")

    def log_lines(self) -> list[dict]:
        lines = []
        for line in self.stderr.splitlines():
            if line.startswith("{"):
                try:
                    lines.append(json.loads(line))
                except ValueError:
                    continue
        return lines

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        for handle in self._files:
            handle.close()


def start_asgi(env: dict[str, str], *, port: int, workers: int, log_dir: Path, timeout: float = 90) -> Gunicorn:
    """The production command, `gunicorn lifeproject.asgi:application`; returns once /healthz answers."""
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(workers)}
    log_dir.mkdir(parents=True, exist_ok=True)
    out = open(log_dir / "gunicorn.out", "wb")
    err = open(log_dir / "gunicorn.err", "wb")
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "lifeproject.asgi:application"], cwd=REPO,
                               env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    server = Gunicorn(process=process, url=f"http://127.0.0.1:{port}", log_dir=log_dir, _files=[out, err])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()
            raise RuntimeError(f"gunicorn exited ({process.returncode}):\n{server.stderr[-3000:]}")
        try:
            requests.get(f"{server.url}/healthz", timeout=10)
            return server
        except requests.RequestException:
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"gunicorn did not answer within {timeout} s:\n{server.stderr[-3000:]}")


def run_python(env: dict[str, str], code: str) -> str:
    script = "import django\ndjango.setup()\n" + code
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"child process failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


@dataclass
class Deployment:
    """One database, one Radicale, and the environment every server process of the test gets."""

    root: Path
    radicale: RunningRadicale
    env: dict[str, str] = field(repr=False)

    def site_env(self, site_url: str) -> dict[str, str]:
        return {**self.env, "RESOLVER_SITE_URL": site_url}

    def mint_token(self, username: str, *, resource: list[str], expires_in: int = 300, scope: str = "read") -> str:
        """An access token written straight into the token table (for the refusal cases)."""
        token = secrets.token_urlsafe(30)
        run_python(self.env, f"""
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, set_token_value
token = AccessToken(user=get_user_model().objects.get(username={username!r}),
                    application=Application.objects.get(client_id={CLIENT_ID!r}),
                    expires=timezone.now() + timedelta(seconds={expires_in}), scope={scope!r},
                    resource={resource!r})
set_token_value(token, {token!r})
token.save()
""")
        return token


@dataclass
class Site:
    deployment: Deployment
    server: Gunicorn
    callback_port: int

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.callback_port}{CALLBACK_PATH}"


@pytest.fixture(scope="package")
def deployment() -> Iterator[Deployment]:
    root = Path(tempfile.mkdtemp(prefix="mcp-http-"))
    radicale = start_radicale(root / "radicale")
    try:
        instance = radicale.instance
        seed(instance.url, instance.username, instance.password, scenario_collections())
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))}
        env.update({
            "DJANGO_SETTINGS_MODULE": "lifeproject.settings",
            "PYTHONPATH": str(REPO),
            "DEBUG": "False",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "CALDAV_URL": instance.url,
            "CALDAV_USERNAME": instance.username,
            "CALDAV_PASSWORD": instance.password,
            "CALDAV_TIMEOUT": "5",
            "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
            # Shared by the workers (and both servers of the two-server test): the throttle counts.
            "CACHE_URL": f"filecache://{root / 'cache'}",
            "TYPESAFE_API_KEY": "",
            "TYPESAFE_BASE_URL": "",
            "RESOLVER_JUDGE": "off",
            "RESOLVER_THROTTLE_RATE": "100000/min",
            # Long enough to outlast the package's tests; expiry is tested with minted tokens.
            "MCP_ACCESS_TOKEN_SECONDS": "3600",
        })
        subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=REPO, env=env, check=True,
                       stdout=subprocess.DEVNULL, timeout=300)
        yield Deployment(root=root, radicale=radicale, env=env)
    finally:
        radicale.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="package")
def site(deployment: Deployment) -> Iterator[Site]:
    port, callback_port = free_port(), free_port()
    env = deployment.site_env(f"http://127.0.0.1:{port}")
    users = "\n".join(f"get_user_model().objects.create_user({name!r}, password={pw!r})" for name, pw in USERS.items())
    run_python(env, f"""
from django.contrib.auth import get_user_model
from oauth2_provider.models import Application
{users}
Application.objects.create(name="Test agent", client_id={CLIENT_ID!r}, client_type=Application.CLIENT_PUBLIC,
                           authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                           redirect_uris="http://127.0.0.1:{callback_port}{CALLBACK_PATH}", skip_authorization=False,
                           algorithm="")
""")
    server = start_asgi(env, port=port, workers=2, log_dir=deployment.root / "site")
    try:
        yield Site(deployment=deployment, server=server, callback_port=callback_port)
    finally:
        server.stop()


@dataclass
class SignedIn:
    """A person signed in through the real flow: the client's token store, and what they saw."""

    site: Site
    person: oauth_flow.Person
    storage: oauth_flow.MemoryStorage
    discovered: Any = None  # the first provider's context: the metadata a client keeps between connections

    @property
    def access_token(self) -> str:
        assert self.storage.tokens is not None
        return self.storage.tokens.access_token

    def provider(self) -> Any:
        auth, _, _ = oauth_flow.provider(self.site.mcp_url, client_id=CLIENT_ID, redirect_uri=self.site.redirect_uri,
                                         person=self.person, storage=self.storage)
        if self.discovered is not None:
            for name in ("protected_resource_metadata", "oauth_metadata", "auth_server_url"):
                setattr(auth.context, name, getattr(self.discovered, name))
        return auth

    def run(self, scenario: Callable[[Client], Awaitable[Any]], *, mode: str = "auto",
            elicitation: Callable[..., Awaitable[Any]] | None = None) -> Any:
        """Connect the SDK's client over Streamable HTTP with the OAuth provider, run `scenario(client)`."""
        auth = self.provider()

        async def main() -> Any:
            async with oauth_flow.http_client(auth) as http:
                async with Client(streamable_http_client(self.site.mcp_url, http_client=http), mode=mode,
                                  elicitation_callback=elicitation, read_timeout_seconds=60) as client:
                    return await scenario(client)

        return anyio.run(main)

    def call(self, arguments: dict[str, Any], *, tool: str = "resolve_reference", **kwargs: Any) -> types.CallToolResult:
        async def scenario(client: Client) -> types.CallToolResult:
            return await client.call_tool(tool, arguments)

        return self.run(scenario, **kwargs)


def sign_in(site: Site, username: str, *, allow: bool = True) -> tuple[SignedIn, oauth_flow.BrowserSignIn, Any]:
    """The whole flow from a first, tokenless request: returns the session, the browser, and the first result."""
    person = oauth_flow.Person(username, USERS[username], allow=allow)
    auth, storage, browser = oauth_flow.provider(site.mcp_url, client_id=CLIENT_ID, redirect_uri=site.redirect_uri,
                                                 person=person)

    async def main() -> Any:
        async with oauth_flow.http_client(auth) as http:
            async with Client(streamable_http_client(site.mcp_url, http_client=http), mode="auto",
                              read_timeout_seconds=60) as client:
                return await client.call_tool("resolve_reference", {"text": "Draft portfolio outline", "kind": "task"})

    first = anyio.run(main)
    return SignedIn(site=site, person=person, storage=storage, discovered=auth.context), browser, first


def need_chromium() -> None:
    """As tests/browser: a missing Chromium skips locally and fails under CI."""
    if os.path.exists(oauth_flow.CHROMIUM):
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{oauth_flow.CHROMIUM} is missing; browser tests must run under CI.")
    pytest.skip(f"{oauth_flow.CHROMIUM} is missing (install Debian's chromium).")


@pytest.fixture(scope="package")
def alice(site: Site) -> tuple[SignedIn, Any]:
    """Alice, signed in once for the package through login and consent in Chromium; and her first result."""
    need_chromium()
    session, _, first = sign_in(site, "alice")
    return session, first
