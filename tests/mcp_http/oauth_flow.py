"""A hosted agent's sign-in: the SDK's OAuthClientProvider, with a person in headless Chromium.

The provider does what a real client does from the first 401: discovery of
the Protected Resource Metadata named in WWW-Authenticate, the authorization
server's RFC 8414 metadata, an authorization request with PKCE (S256) and
the RFC 8707 resource, and the token exchange. The redirect handler opens
the authorization URL in Chromium, where the person signs in on the site's
login page and allows access on the consent page; the redirect back to the
client's loopback callback is intercepted to hand code, state and iss over.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@dataclass
class MemoryStorage:
    """The client's token store; `client_info` is the pre-registered client."""

    client_info: OAuthClientInformationFull | None = None
    tokens: OAuthToken | None = None
    history: list[OAuthToken] = field(default_factory=list)

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class CallbackServer:
    """The client's loopback redirect endpoint (RFC 8252 section 7.3): records what it was sent."""

    def __init__(self, redirect_uri: str) -> None:
        parts = urlsplit(redirect_uri)
        self.captured: list[str] = []
        captured = self.captured

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if urlsplit(self.path).path == parts.path:  # not the browser's /favicon.ico
                    captured.append(f"{parts.scheme}://{parts.netloc}{self.path}")
                body = b"Signed in; you may close this window."
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((parts.hostname or "127.0.0.1", parts.port or 80), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "CallbackServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class Person:
    """Who sits at the browser, and what they do on the consent page."""

    username: str
    password: str
    allow: bool = True
    pages: list[str] = field(default_factory=list)  # the page titles they saw, in order


class BrowserSignIn:
    """The provider's redirect and callback handlers, driving Chromium as `person`."""

    def __init__(self, person: Person, *, redirect_uri: str) -> None:
        self.person = person
        self.redirect_uri = redirect_uri
        self._result: AuthorizationCodeResult | None = None
        self.error: str | None = None

    async def redirect(self, authorization_url: str) -> None:

        captured: list[str] = []
        with CallbackServer(self.redirect_uri) as callback_server:
            await self._sign_in(authorization_url)
            captured = callback_server.captured
        if not captured:
            raise AssertionError(self.error or "The authorization server never redirected back to the client.")
        query = parse_qs(urlsplit(captured[-1]).query)
        if "error" in query:
            self.error = query["error"][0] + ": " + query.get("error_description", [""])[0]
        self._result = AuthorizationCodeResult(code=query.get("code", [""])[0], state=query.get("state", [None])[0],
                                               iss=query.get("iss", [None])[0])

    async def _sign_in(self, authorization_url: str) -> None:
        from playwright.async_api import async_playwright

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page()
                await page.goto(authorization_url)
                self.person.pages.append(await page.title())
                await page.fill("input[name=username]", self.person.username)
                await page.fill("input[name=password]", self.person.password)
                async with page.expect_navigation():
                    await page.click("button[type=submit]")
                self.person.pages.append(await page.title())
                if "Allow" not in self.person.pages[-1]:
                    self.error = f"no consent page; at {page.url}:\n{await page.content()}"
                    raise AssertionError(self.error)
                button = "button[name=allow]" if self.person.allow else "#authorizationForm button:not([name=allow])"
                async with page.expect_navigation(url=lambda url: url.startswith(self.redirect_uri)):
                    await page.click(button)
            finally:
                await browser.close()

    async def callback(self) -> AuthorizationCodeResult:
        assert self._result is not None
        return self._result


def provider(mcp_url: str, *, client_id: str, redirect_uri: str, person: Person,
             storage: MemoryStorage | None = None) -> tuple[OAuthClientProvider, MemoryStorage, BrowserSignIn]:
    storage = storage or MemoryStorage()
    if storage.client_info is None:
        storage.client_info = OAuthClientInformationFull(client_id=client_id, redirect_uris=[redirect_uri],
                                                         token_endpoint_auth_method="none",
                                                         grant_types=["authorization_code", "refresh_token"])
    sign_in = BrowserSignIn(person, redirect_uri=redirect_uri)
    metadata = OAuthClientMetadata(redirect_uris=[redirect_uri], token_endpoint_auth_method="none",
                                   grant_types=["authorization_code", "refresh_token"], client_name="Test agent")
    auth = OAuthClientProvider(server_url=mcp_url, client_metadata=metadata, storage=storage,
                               redirect_handler=sign_in.redirect, callback_handler=sign_in.callback)
    return auth, storage, sign_in


def http_client(auth: Any = None, *, token: str | None = None, keepalive: bool = True) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    limits = None if keepalive else httpx2.Limits(max_keepalive_connections=0)
    kwargs: dict[str, Any] = {"auth": auth, "headers": headers, "timeout": httpx2.Timeout(60.0)}
    if limits is not None:
        kwargs["limits"] = limits
    return httpx2.AsyncClient(**kwargs)
