"""The site as one ASGI app: the host's Django, and the MCP endpoint beside it (README "MCP over HTTP").

A host project's `asgi.py` is two lines::

    from django.core.asgi import get_asgi_application
    from resolver.asgi import application
    application = application(get_asgi_application())

`/mcp` and its Protected Resource Metadata go to the MCP app
(resolver/mcp/http.py); every other path to the Django app given, so the
API, the pages, the admin and the OAuth authorization server are the host's
as before. The lifespan is this outer app's: it runs the MCP transport's task
group, which a mounted app would never get to start.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


class Site:
    """Routes `/mcp` and its metadata to the MCP app, everything else to `django`; owns the lifespan.

    Build it after Django is set up (`get_asgi_application()` does that): the
    MCP app reads the settings when it is made.
    """

    def __init__(self, django: Any) -> None:
        from resolver.mcp.http import McpHttp

        self.django = django
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


def application(django: Any = None) -> Site:
    """The whole site: `django` (the host's ASGI app; by default `get_asgi_application()`) plus `/mcp`."""
    if django is None:
        from django.core.asgi import get_asgi_application

        django = get_asgi_application()
    return Site(django)
