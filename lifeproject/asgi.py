"""The site as one ASGI app: Django, and the MCP endpoint beside it (README "MCP over HTTP").

The composition is the app's (resolver/asgi.py), as for any host project:
`/mcp` and its metadata to the MCP app, every other path to Django.

Production: `gunicorn lifeproject.asgi:application` (gunicorn.conf.py picks
the uvicorn worker for it). The demo: `bin/run`.
"""
from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
django_application = get_asgi_application()  # sets Django up before the MCP app reads the settings

from resolver.asgi import Site, application as site  # noqa: E402

application: Site = site(django_application)
