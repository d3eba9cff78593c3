"""The MCP door over Streamable HTTP: the same tools at /mcp, for hosted agents, signed in with OAuth.

`McpHttp` assembles, from the official SDK's parts, what its
`streamable_http_app()` would, with two layers of ours in between:

    request log (the host's hook)  ->  bearer authentication (resolver/oauth/resource.py)
                 ->  401 + WWW-Authenticate: Bearer resource_metadata="..." without a valid token
                 ->  the resolve rate, per user  ->  body limit  ->  the stateless transport

and the RFC 9728 Protected Resource Metadata beside it. The tools are the
stdio door's (`resolver/mcp/tools.py`): same schemas, annotations, envelopes
and person-in-the-loop choice; only the user comes from the token instead of
`--user`.

Stateless: no session, nothing kept between requests, so any worker answers
any request. A 2026-07-28 multi-round-trip retry carries its `requestState`,
sealed (AES-GCM) under a key derived from SECRET_KEY and bound to the tool,
its arguments and the token's user by the SDK's `RequestStateBoundary`: a
state minted by one worker opens in another, and never for another person.
"""
from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, Protocol

import anyio.to_thread
import mcp_types as types
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import create_protected_resource_routes
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from resolver import jsonbound, services
from resolver.conf import resolver_settings
from resolver.envelope import clarification_link
from resolver.mcp import server as mcp_server
from resolver.mcp.tools import RESOLVE, Tools
from resolver.oauth import resource

# The key of the person's visit to the clarification page in a 2026-07-28 retry.
OPEN_PAGE = "open_page"
STATE_KEY_SALT = "resolver.mcp.request_state"
# How long a person has to answer before the retry's sealed state expires.
STATE_TTL_SECONDS = 900.0


def state_keys() -> list[bytes]:
    """The request-state key ring: derived from SECRET_KEY (then its fallbacks), the same in every worker."""
    from django.conf import settings
    from django.utils.crypto import salted_hmac

    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return [salted_hmac(STATE_KEY_SALT, "request-state", secret=s, algorithm="sha256").digest() for s in secrets]


class DjangoTokenVerifier:
    """The SDK's TokenVerifier over the site's own token table (resolver.oauth.resource)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        grant = await anyio.to_thread.run_sync(_verify_in_thread, token, resource.resource_url())
        if grant is None:
            return None
        return AccessToken(token=grant.token, client_id=grant.client_id, scopes=list(grant.scopes),
                           expires_at=grant.expires_at, resource=grant.resource, subject=str(grant.user_id),
                           claims={"iss": resource.issuer_url(), "user_id": grant.user_id})


@contextlib.contextmanager
def _request_connections() -> Iterator[None]:
    """Django's per-request connection hygiene, for ORM work in the event loop's worker threads.

    Outside Django's handler no request_started/finished signal fires, so a
    thread would keep its database connection for its whole life (and keep
    using it after the database restarted); this closes it as a request does.
    """
    from django.db import close_old_connections

    close_old_connections()
    try:
        yield
    finally:
        close_old_connections()


def _verify_in_thread(token: str, resource_url: str) -> resource.Grant | None:
    with _request_connections():
        return resource.verify_access_token(token, resource=resource_url)


def _token_user() -> Any:
    """The token's (active) user, read once per request: the caller whose calendar and pages these are."""
    from django.contrib.auth import get_user_model

    with _request_connections():
        return get_user_model()._default_manager.get(pk=token_user_id(), is_active=True)


def token_user_id() -> object:
    """The user of the request's bearer token (set by the auth middleware for this request)."""
    token = get_access_token()
    if token is None or not token.claims or "user_id" not in token.claims:
        raise PermissionError("No authenticated user for this MCP request.")
    return token.claims["user_id"]


class HttpTools:
    """The stdio door's tools, bound per request to the token's user.

    The caller is the token's user: their calendar, their page links (the one
    door contract, `services.Caller`). Where the client can show a form,
    `Tools` asks the person (2026-07-28: `input_required`, the pick re-read
    live on the retry). A 2026-07-28 client that
    declares URL-mode elicitation only is sent to the signed clarification
    page for that person instead; everything else gets the clarification
    envelope, whose `clarification_url` the agent can show.
    """

    async def call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        user = await anyio.to_thread.run_sync(_token_user)
        tools = Tools(caller=services.Caller(door="mcp", user=user, base_url=resolver_settings.SITE_URL))
        outcome = await tools.call(ctx, params)
        if params.name != RESOLVE or not isinstance(outcome, types.CallToolResult):
            return outcome
        return _page_instead(ctx, params, outcome)


def _page_instead(ctx: Any, params: types.CallToolRequestParams,
                  outcome: types.CallToolResult) -> types.CallToolResult | types.InputRequiredResult:
    envelope = outcome.structured_content or {}
    url = clarification_link(envelope)
    if (url is None or ctx.session.protocol_version not in MODERN_PROTOCOL_VERSIONS or not _url_only(ctx)
            or OPEN_PAGE in (params.input_responses or {})):
        return outcome
    question = types.ElicitRequest(params=types.ElicitRequestURLParams(
        message="Which one do you mean? Choose on this page; it shows the item you pick as it is now.", url=url))
    return types.InputRequiredResult(input_requests={OPEN_PAGE: question}, request_state=envelope["request_id"])


def _url_only(ctx: Any) -> bool:
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    return declared is not None and declared.url is not None and declared.form is None


class Throttle:
    """The resolve rate (`resolver.throttling.rate_wait`: per user, in the default cache) on POST /mcp.

    One bucket per person across every door: the throttling service counts
    the API's requests in the same bucket, so an agent cannot double its rate
    by switching doors.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            user = scope.get("user")
            if isinstance(user, AuthenticatedUser):
                wait = await anyio.to_thread.run_sync(_throttle_wait, user.access_token.claims["user_id"])
                if wait is not None:
                    await _too_many(send, wait)
                    return
        await self.app(scope, receive, send)


def _throttle_wait(user_id: object) -> float | None:
    """None when the request may go on, else the seconds to wait (the throttling service, every door's bucket)."""
    from resolver.throttling import rate_wait

    return rate_wait(user_id)


async def _too_many(send: Send, wait: float) -> None:
    seconds = max(1, int(wait + 0.999))
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": "Request was throttled.",
        "data": {"code": "throttled", "retry_after_seconds": seconds}}}).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(seconds).encode())]})
    await send({"type": "http.response.body", "body": body})


class DepthBound:
    """A POST body with whatever lies deeper than RESOLVER["MAX_JSON_DEPTH"] allows cut, before the SDK decodes it.

    The SDK's decoder gives up past its recursion limit with a JSON-RPC parse
    error, before any tool is called; cut (resolver/jsonbound.py), the message
    decodes and the tool call answers `invalid_request`, as every door does.
    The body is read up to RESOLVER["MAX_BODY_BYTES"]; a bigger one is handed
    on as it came, for the transport's own size limit to refuse.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        limit = int(resolver_settings.MAX_BODY_BYTES)
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more, other = 0, True, None
        while more and size <= limit:
            message = await receive()
            if message["type"] != "http.request":
                other = message  # the client went away: handed on after what was read
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        if not more and other is None:
            body = jsonbound.cut(body, jsonbound.max_json_depth() + jsonbound.MCP_WRAPPING)
        pending: list[Message] = [{"type": "http.request", "body": body, "more_body": more or other is not None}]
        if other is not None:
            pending.append(other)

        async def replay() -> Message:
            return pending.pop(0) if pending else await receive()

        await self.app(scope, replay, send)


class RequestLogHook(Protocol):
    """Where the host writes its request log (RESOLVER["REQUEST_LOG"], a dotted path to an object or module).

    `collecting()` is entered around each request: inside it, the resolution
    record (`resolver.services.log_outcome`) may be folded into the yielded
    dict instead of being written on its own. `write_line(...)` is called once
    the response is out, with that dict. The demo's is lifeproject/request_log.py.
    """

    def collecting(self) -> contextlib.AbstractContextManager[dict[str, Any]]: ...

    def write_line(self, *, door: str, http_method: str | None, route: str, http_status: int, duration_ms: float,
                   fields: dict[str, Any]) -> None: ...


def request_log_hook() -> RequestLogHook | None:
    """The host's request log, or None: then the resolution record is written on its own, as by the command."""
    from django.core.exceptions import ImproperlyConfigured
    from django.utils.module_loading import import_string

    path = resolver_settings.REQUEST_LOG
    if not path:
        return None
    try:
        hook = import_string(path)
    except ImportError as err:
        raise ImproperlyConfigured(f"RESOLVER['REQUEST_LOG'] = {path!r} does not import: {err}") from err
    if not (callable(getattr(hook, "collecting", None)) and callable(getattr(hook, "write_line", None))):
        raise ImproperlyConfigured(f"RESOLVER['REQUEST_LOG'] = {path!r} has no collecting() and write_line().")
    return hook


class RequestLog:
    """One line per request through the host's hook: route, method, status, duration, the resolution's fields.

    Never the body, a header or the token: the hook is given only these.
    """

    def __init__(self, app: Any, *, route: str, hook: RequestLogHook) -> None:
        self.app = app
        self.route = route
        self.hook = hook

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status: list[int] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        with self.hook.collecting() as fields:
            try:
                await self.app(scope, receive, sending)
            finally:
                self.hook.write_line(door="mcp", http_method=scope.get("method"), route=self.route,
                                     http_status=status[0] if status else 500,
                                     duration_ms=round((time.perf_counter() - started) * 1000, 3), fields=fields)


class McpHttp:
    """The MCP endpoint and its metadata as one Starlette app; one per process.

    `lifespan()` must be entered by the outermost ASGI app (resolver/asgi.py):
    mounted apps get no lifespan of their own.
    """

    def __init__(self) -> None:
        from urllib.parse import urlsplit

        from django.core.exceptions import ImproperlyConfigured

        site = urlsplit(resolver_settings.SITE_URL)
        if site.scheme not in ("http", "https") or not site.netloc or site.path.strip("/"):
            # The resource's identifier, the issuer and the page links all derive from it.
            raise ImproperlyConfigured("MCP over HTTP needs RESOLVER_SITE_URL: the site's origin, e.g. https://host.")
        server = mcp_server.build_server(HttpTools())  # type: ignore[arg-type]  # duck-typed like Tools
        server.middleware.append(RequestStateBoundary(
            RequestStateSecurity(keys=state_keys(), ttl=STATE_TTL_SECONDS), default_audience=resource.resource_url()))
        self.session_manager = StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=True,
            security_settings=_transport_security(), max_request_body_size=int(resolver_settings.MAX_BODY_BYTES))
        resource_url = AnyHttpUrl(resource.resource_url())
        endpoint = RequireAuthMiddleware(Throttle(DepthBound(StreamableHTTPASGIApp(self.session_manager))),
                                         required_scopes=[resource.READ_SCOPE],
                                         resource_metadata_url=AnyHttpUrl(resource.resource_metadata_url()))
        metadata_routes = create_protected_resource_routes(
            resource_url=resource_url, authorization_servers=[AnyHttpUrl(resource.issuer_url())],
            scopes_supported=[resource.READ_SCOPE], resource_name="lifeproject resolver")
        self.app = Starlette(
            routes=[Route(resource.MCP_PATH, endpoint=endpoint), *metadata_routes],
            middleware=[
                Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(DjangoTokenVerifier(), resource_server_url=resource_url)),
                Middleware(AuthContextMiddleware),
            ],
        )
        self.paths = frozenset([resource.MCP_PATH, *(route.path for route in metadata_routes)])
        self.request_log = request_log_hook()

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.session_manager.run():
            yield

    def handles(self, path: str) -> bool:
        return path in self.paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.request_log is None:
            await self.app(scope, receive, send)
            return
        route = "mcp" if scope.get("path") == resource.MCP_PATH else "mcp-metadata"
        await RequestLog(self.app, route=route, hook=self.request_log)(scope, receive, send)


def _transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection: the Host must be the site's, a browser's Origin the site's origin."""
    from urllib.parse import urlsplit

    site = urlsplit(resolver_settings.SITE_URL)
    origin = f"{site.scheme}://{site.netloc}"
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=[site.netloc],
                                     allowed_origins=[origin])
