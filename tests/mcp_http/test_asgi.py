"""resolver/asgi.py in-process (the composition the demo and every host use): routes, lifespan, request log."""
from __future__ import annotations

import contextlib

import anyio
import pytest


def test_site__lifespan_runs_the_mcp_transport_and_shuts_down():
    from django.core.asgi import get_asgi_application

    from resolver.asgi import application

    site = application(get_asgi_application())
    sent: list[dict] = []
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    started = anyio.Event()

    async def receive():
        message = next(incoming)
        if message["type"] == "lifespan.shutdown":
            await started.wait()
        return message

    async def send(message):
        sent.append(message)
        if message["type"] == "lifespan.startup.complete":
            # The transport's task group is running: an MCP request could be served now.
            assert site.mcp.session_manager._task_group is not None
            started.set()

    anyio.run(site, {"type": "lifespan"}, receive, send)
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


@pytest.mark.parametrize(("path", "mcp"), [
    ("/mcp", True), ("/.well-known/oauth-protected-resource/mcp", True), ("/mcp/", False), ("/mcpx", False),
    ("/v1/resolve", False), ("/.well-known/oauth-authorization-server", False), ("/oauth/token/", False),
])
def test_site__only_the_endpoint_and_its_metadata_go_to_the_mcp_app(path, mcp):
    from lifeproject.asgi import application

    assert application.mcp.handles(path) is mcp


class Recorder:
    """A host's request log (RESOLVER["REQUEST_LOG"]): records what the MCP app hands it."""

    def __init__(self) -> None:
        self.lines: list[dict] = []

    @contextlib.contextmanager
    def collecting(self):
        yield {"folded": "by the host"}

    def write_line(self, **line) -> None:
        self.lines.append(line)


RECORDER = Recorder()


def _get(app, path: str) -> tuple[int, bytes]:
    """One GET through the ASGI app, as a server would send it."""
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1:8000")], "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    anyio.run(app, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_request_log__the_hosts_hook_gets_one_line_per_request(settings):
    from resolver.asgi import application

    settings.RESOLVER = {**settings.RESOLVER, "REQUEST_LOG": "tests.mcp_http.test_asgi.RECORDER"}
    RECORDER.lines.clear()
    status, body = _get(application(), "/.well-known/oauth-protected-resource/mcp")
    assert status == 200 and b'"resource"' in body
    (line,) = RECORDER.lines
    assert line["door"] == "mcp" and line["route"] == "mcp-metadata" and line["http_method"] == "GET"
    assert line["http_status"] == 200 and line["duration_ms"] >= 0 and line["fields"] == {"folded": "by the host"}


def test_request_log__none_by_default_and_the_endpoint_still_answers(settings):
    from resolver.asgi import application

    settings.RESOLVER = {k: v for k, v in settings.RESOLVER.items() if k != "REQUEST_LOG"}
    RECORDER.lines.clear()
    site = application()
    assert site.mcp.request_log is None
    assert _get(site, "/.well-known/oauth-protected-resource/mcp")[0] == 200
    assert RECORDER.lines == []


@pytest.mark.parametrize("path", ["tests.mcp_http.test_asgi.nowhere", "tests.mcp_http.test_asgi._get"])
def test_request_log__a_hook_that_is_not_one_stops_the_start(settings, path):
    from django.core.exceptions import ImproperlyConfigured

    from resolver.asgi import application

    settings.RESOLVER = {**settings.RESOLVER, "REQUEST_LOG": path}
    with pytest.raises(ImproperlyConfigured, match="REQUEST_LOG"):
        application()
