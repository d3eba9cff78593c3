"""The distribution on its own: built, installed into a fresh virtual environment, added to a
project made by `django-admin startproject` exactly as the README says, and resolving.

Nothing of this repository is on the new project's path: the app is imported
from the fresh environment (checked), which has no system site packages, so a
runtime dependency missing from pyproject.toml fails here. Versions are held to
requirements.txt (as constraints, which install nothing by themselves); pip's
own cache keeps repeated runs quick.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import Iterator

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Add the resolver to your project"
MCP_SECTION = "### MCP over HTTP"
CLIENT_ID = "fresh-agent"
CALLBACK = "/callback"

pytestmark = pytest.mark.slow


def readme_blocks() -> dict[str, str]:
    """The section's Python blocks, appended to the file each names: settings.py, urls.py, then
    "MCP over HTTP"'s settings.py, urls.py and asgi.py."""
    text = (ROOT / "README.md").read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    middle = text.index(MCP_SECTION, start, end)
    blocks = re.findall(r"```python\n(.*?)```", text[start:middle], flags=re.S)
    assert len(blocks) == 2, "the section shows settings.py and urls.py, one block each"
    mcp = re.findall(r"```python\n(.*?)```", text[middle:end], flags=re.S)
    assert len(mcp) == 3, "MCP over HTTP shows settings.py, urls.py and asgi.py, one block each"
    return {"settings.py": blocks[0] + "\n" + mcp[0], "urls.py": blocks[1] + "\n" + mcp[1], "asgi.py": mcp[2]}


def clean_env(**extra: str) -> dict[str, str]:
    # pytest-django exports this project's settings module; the new project has its own.
    env = {k: v for k, v in os.environ.items()
           if k not in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


def run(args: list[str | Path], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900,
        input: str | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env or clean_env(), capture_output=True, text=True,
                          timeout=timeout, input=input)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def constraints(path: Path) -> Path:
    """requirements.txt as a constraints file: pins without extras (pip refuses extras there)."""
    lines = [re.sub(r"\[[^\]]*\]", "", line) for line in (ROOT / "requirements.txt").read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist built from the files it declares, then the wheel built from that sdist."""
    work = tmp_path_factory.mktemp("build")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "resolver", source / "resolver", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    run([sys.executable, "-m", "build", "--outdir", work / "dist", source], cwd=work)
    wheels = list((work / "dist").glob("django_caldav_resolver-*.whl"))
    assert len(wheels) == 1 and list((work / "dist").glob("django_caldav_resolver-*.tar.gz"))
    return wheels[0]


@pytest.fixture(scope="module")
def fresh_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    pins = constraints(env_dir / "constraints.txt")
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "-c", pins, f"{wheel}[mcp-http]"], cwd=env_dir)
    return python


@pytest.fixture(scope="module")
def site(fresh_python: Path, radicale, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A startproject site with the README's blocks, migrated, a user with a token and an OAuth client,
    served by uvicorn (every door: the API, the page, /mcp and the OAuth server)."""
    base = tmp_path_factory.mktemp("site")
    bin_dir = fresh_python.parent
    run([bin_dir / "django-admin", "startproject", "mysite", base], cwd=base)
    blocks = readme_blocks()
    for name, block in blocks.items():
        target = base / "mysite" / name
        target.write_text(target.read_text() + "\n" + block)
    port, callback_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    redirect_uri = f"http://127.0.0.1:{callback_port}{CALLBACK}"
    env = clean_env(CALDAV_URL=radicale.url, CALDAV_USERNAME=radicale.instance.username,
                    CALDAV_PASSWORD=radicale.instance.password, RESOLVER_SITE_URL=url,
                    DJANGO_SUPERUSER_PASSWORD="a fresh project's password", DJANGO_SUPERUSER_EMAIL="u@example.com")
    manage = [fresh_python, base / "manage.py"]
    run([*manage, "check"], cwd=base, env=env)
    run([*manage, "migrate", "--noinput"], cwd=base, env=env)
    run([*manage, "createsuperuser", "--noinput", "--username", "ada"], cwd=base, env=env)
    token = run([*manage, "drf_create_token", "ada"], cwd=base, env=env).split()[2]
    # A pre-registered public client, as staff would add it in the admin.
    run([*manage, "shell", "-c", (
        "from oauth2_provider.models import Application as A; "
        f"A.objects.create(name='Fresh agent', client_id={CLIENT_ID!r}, client_type=A.CLIENT_PUBLIC, "
        f"authorization_grant_type=A.GRANT_AUTHORIZATION_CODE, redirect_uris={redirect_uri!r}, algorithm='')")],
        cwd=base, env=env)
    where = run([fresh_python, "-c", "import resolver; print(resolver.__file__)"], cwd=base, env=env)
    server = subprocess.Popen([str(bin_dir / "uvicorn"), "mysite.asgi:application", "--host", "127.0.0.1",
                               "--port", str(port), "--no-access-log"],
                              cwd=base, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            try:
                requests.get(url + "/accounts/login/", timeout=2)
                break
            except requests.ConnectionError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                time.sleep(0.2)
        yield {"url": url, "token": token, "env": env, "python": fresh_python, "base": base,
               "resolver_file": where.strip(), "redirect_uri": redirect_uri}
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_package__only_the_app_is_installed(site):
    """The app comes from the fresh environment; the demo project and the tests do not come at all."""
    python = site["python"]
    assert Path(site["resolver_file"]).is_relative_to(python.parent.parent)
    probe = ("import importlib.util as u; "
             "print([n for n in ('lifeproject', 'tests', 'bench') if u.find_spec(n)])")
    assert run([python, "-c", probe], cwd=python.parent).strip() == "[]"
    files = run([python, "-c", "import resolver, pathlib; p = pathlib.Path(resolver.__file__).parent; "
                 "print('\\n'.join(str(f.relative_to(p)) for f in p.rglob('*') if f.suffix != '.pyc'))"],
                cwd=python.parent).split()
    for wanted in ("templates/resolver/base.html", "templates/registration/login.html", "static/resolver/resolver.css",
                   "data/stopwords/english.txt", "evaluation/data/starter.jsonl", "migrations/0001_initial.py",
                   # The relevance model and the case set its certificate is earned on (docs/evaluation.md).
                   "data/relevance/model.json", "evaluation/data/reference_match/a/references.jsonl",
                   "evaluation/data/reference_match/b/items.jsonl"):
        assert wanted in files


def test_package__resolves_through_the_api_with_a_token(site):
    headers = {"Authorization": f"Token {site['token']}"}
    ok = requests.post(site["url"] + "/v1/resolve", json={"text": "Draft portfolio outline", "kind": "task"},
                       headers=headers, timeout=60)
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["status"] == "ok" and body["data"]["uid"] == "t-portfolio"
    assert body["data"]["method"] == "deterministic" and body["data"]["etag"]

    ambiguous = requests.post(site["url"] + "/v1/resolve", json={"text": "portfolio", "kind": "task"},
                              headers=headers, timeout=60).json()
    assert ambiguous["status"] == "needs_clarification"
    assert ambiguous["data"]["clarification_url"].startswith(site["url"] + "/resolve/clarify/")

    collections = requests.get(site["url"] + "/v1/collections", headers=headers, timeout=60).json()
    assert {"work", "personal"} <= {c["collection_id"] for c in collections["data"]["collections"]}


def test_package__the_api_refuses_anonymous_callers_and_form_bodies(site):
    """The host's REST_FRAMEWORK defaults (AllowAny, form parsers) do not apply to the app's views."""
    anonymous = requests.post(site["url"] + "/v1/resolve", json={"text": "x", "kind": "task"}, timeout=30)
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "not_authenticated"
    form = requests.post(site["url"] + "/v1/resolve", data={"text": "x", "kind": "task"},
                         headers={"Authorization": f"Token {site['token']}"}, timeout=30)
    assert form.status_code == 415 and form.json()["error"]["code"] == "unsupported_media_type"
    schema = requests.get(site["url"] + "/v1/schema/", headers={"Authorization": f"Token {site['token']}"},
                          timeout=60)
    assert schema.status_code == 200 and "ResolveInputRequest" in schema.json()["components"]["schemas"]


def _csrf(session: requests.Session, html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, html[:2000]
    return match.group(1)


def test_package__resolves_through_the_page_after_signing_in(site):
    url = site["url"]
    session = requests.Session()
    first = session.get(url + "/resolve/", timeout=30)
    assert first.url.startswith(url + "/accounts/login/")  # the page needs a signed-in person
    signed_in = session.post(first.url, data={"username": "ada", "password": "a fresh project's password",
                                              "csrfmiddlewaretoken": _csrf(session, first.text), "next": "/resolve/"},
                             headers={"Referer": first.url}, timeout=30)
    assert signed_in.url == url + "/resolve/" and "Signed in as <bdi>ada</bdi>" in signed_in.text

    found = session.post(url + "/resolve/", data={"text": "Draft portfolio outline", "kind": "task",
                                                  "csrfmiddlewaretoken": _csrf(session, signed_in.text)},
                         headers={"Referer": url + "/resolve/"}, timeout=60)
    assert found.status_code == 200 and "Draft portfolio outline" in found.text and "t-portfolio" not in found.url

    form = session.get(url + "/resolve/", timeout=30)
    asked = session.post(url + "/resolve/", data={"text": "portfolio", "kind": "task",
                                                  "csrfmiddlewaretoken": _csrf(session, form.text)},
                         headers={"Referer": url + "/resolve/"}, timeout=60)
    assert asked.url.startswith(url + "/resolve/clarify/")
    assert "Draft portfolio outline" in asked.text and "Review portfolio slides" in asked.text
    item_id = re.search(r'name="item_id" value="([^"]+)"', asked.text).group(1)
    picked = session.post(asked.url, data={"item_id": item_id, "csrfmiddlewaretoken": _csrf(session, asked.text)},
                          headers={"Referer": asked.url}, timeout=60)
    assert picked.status_code == 200 and "user_selected" in picked.text



def test_package__resolves_through_the_command(site):
    manage = [site["python"], site["base"] / "manage.py"]
    out = run([*manage, "resolve", "--text", "Draft portfolio outline", "--kind", "task"], cwd=site["base"],
              env=site["env"])
    item_id, etag, href = out.strip().split("\t")
    assert item_id.startswith("itm_") and etag and href.endswith(".ics")


class FormSignIn:
    """The person at the authorization URL, with a plain HTTP session: the login form, then the consent form."""

    def __init__(self, site: dict[str, object]) -> None:
        self.site = site
        self.pages: list[str] = []
        self.redirected: str | None = None

    async def redirect(self, authorization_url: str) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self._sign_in, authorization_url)

    def _sign_in(self, authorization_url: str) -> None:
        session = requests.Session()
        login = session.get(authorization_url, timeout=30)
        self.pages.append(re.search(r"<title>([^<]*)", login.text).group(1))
        consent = session.post(login.url, data={"username": "ada", "password": "a fresh project's password",
                                                "csrfmiddlewaretoken": _csrf(session, login.text),
                                                "next": re.search(r'name="next" value="([^"]*)"', login.text).group(1)
                                                .replace("&amp;", "&")},
                               headers={"Referer": login.url}, timeout=30)
        self.pages.append(re.search(r"<title>([^<]*)", consent.text).group(1))
        fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', consent.text))
        fields = {k: v.replace("&amp;", "&") for k, v in fields.items()}
        allowed = session.post(consent.url, data={**fields, "allow": "Authorize"}, allow_redirects=False,
                               headers={"Referer": consent.url}, timeout=30)
        assert allowed.status_code == 302, allowed.text[:2000]
        self.redirected = allowed.headers["Location"]

    async def callback(self):
        from urllib.parse import parse_qs, urlsplit

        from mcp.shared.auth import AuthorizationCodeResult

        assert self.redirected and self.redirected.startswith(str(self.site["redirect_uri"])), self.redirected
        query = parse_qs(urlsplit(self.redirected).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                       iss=query.get("iss", [None])[0])


def test_package__resolves_through_mcp_over_http_after_the_oauth_flow(site):
    """The SDK's client from a first tokenless request: discovery, PKCE, sign-in, consent, token, the tool."""
    import anyio
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    from tests.mcp_http import oauth_flow

    mcp_url = f"{site['url']}/mcp"
    anonymous = requests.post(mcp_url, json={}, headers={"Accept": "application/json, text/event-stream"},
                              timeout=30)
    assert anonymous.status_code == 401
    assert f'resource_metadata="{site["url"]}/.well-known/oauth-protected-resource/mcp"' in \
        anonymous.headers["WWW-Authenticate"]

    person = FormSignIn(site)
    redirect_uri = str(site["redirect_uri"])
    storage = oauth_flow.MemoryStorage(client_info=OAuthClientInformationFull(
        client_id=CLIENT_ID, redirect_uris=[redirect_uri], token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"]))
    metadata = OAuthClientMetadata(redirect_uris=[redirect_uri], token_endpoint_auth_method="none",
                                   grant_types=["authorization_code", "refresh_token"], client_name="Fresh agent")
    auth = OAuthClientProvider(server_url=mcp_url, client_metadata=metadata, storage=storage,
                               redirect_handler=person.redirect, callback_handler=person.callback)

    async def main():
        async with oauth_flow.http_client(auth) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http), read_timeout_seconds=60) as client:
                return await client.call_tool("resolve_reference", {"text": "Draft portfolio outline", "kind": "task"})

    result = anyio.run(main)
    assert [page.split(" · ")[0] for page in person.pages] == ["Sign in", "Allow access"]
    assert storage.tokens is not None and storage.tokens.scope == "read"
    assert result.is_error is False
    envelope = result.structured_content
    assert envelope["status"] == "ok" and envelope["data"]["uid"] == "t-portfolio"
    assert envelope["data"]["method"] == "deterministic"
