"""lifeproject/asgi.py in-process: which app answers which path, and the lifespan the outer app owns."""
from __future__ import annotations

import anyio
import pytest


def test_site__lifespan_runs_the_mcp_transport_and_shuts_down():
    from lifeproject.asgi import Site

    site = Site()
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
