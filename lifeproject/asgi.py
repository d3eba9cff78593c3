"""The site as one ASGI app: Django, and the MCP endpoint beside it (README "MCP over HTTP").

`/mcp` and its Protected Resource Metadata go to the MCP app
(resolver/mcp/http.py); every other path to Django's ASGI handler, so the
API, the pages, the admin and the OAuth authorization server are unchanged.
The lifespan is this outer app's: it runs the MCP transport's task group,
which a mounted app would never get to start.

Production: `gunicorn lifeproject.asgi:application` (gunicorn.conf.py picks
the uvicorn worker for it). The demo: `bin/run`.
"""
from __future__ import annotations

import os

from django.core.asgi import get_asgi_application
from starlette.types import Receive, Scope, Send

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
django_application = get_asgi_application()  # sets Django up before the MCP app reads the settings

from resolver.mcp.http import McpHttp  # noqa: E402


class Site:
    def __init__(self) -> None:
        self.django = django_application
        self.mcp = McpHttp()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and self.mcp.handles(scope["path"]):
            await self.mcp(scope, receive, send)
        else:
            await self.django(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        started = False
        try:
            async with self.mcp.lifespan():
                await send({"type": "lifespan.startup.complete"})
                started = True
                await receive()  # lifespan.shutdown
        except Exception as err:
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": type(err).__name__})
            raise
        await send({"type": "lifespan.shutdown.complete"})


application = Site()
