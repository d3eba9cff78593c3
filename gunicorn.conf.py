"""Gunicorn for lifeproject: `gunicorn lifeproject.asgi:application` reads this file from the working directory.

The ASGI app is the whole site plus the MCP endpoint at /mcp (lifeproject/asgi.py)
and runs on uvicorn workers; `gunicorn lifeproject.wsgi` still serves the site
without /mcp on the sync or threaded workers.

Every value can be changed through the environment, so one image serves every
host; docs/performance.md lists the production environment and the figures
behind these defaults. Gunicorn reads `GUNICORN_CMD_ARGS` too, for anything else.
"""
from __future__ import annotations

import multiprocessing
import os
import sys


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")

# A resolution spends most of its time waiting for the CalDAV server, so a
# worker per core plus one keeps the cores busy; WEB_CONCURRENCY is the
# conventional override. Each worker holds its own CalDAV and database
# connections; all shared state is in PostgreSQL and Redis.
workers = _int("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1)
# Threads > 1 switches to the threaded worker: the CalDAV client is per thread.
threads = _int("GUNICORN_THREADS", 1)
worker_class = "gthread" if threads > 1 else "sync"
# The ASGI app (named on the command line) needs an ASGI worker: uvicorn's, one
# event loop per worker; Django's synchronous views and the resolver run in its
# thread pool, the MCP transport on the loop.
if any(arg.startswith("lifeproject.asgi") for arg in sys.argv[1:]):
    worker_class = "uvicorn_worker.UvicornWorker"

# The slowest legitimate request: CalDAV timeout (10 s by default) plus the
# judgment budget (8 s) plus parsing. A worker silent for longer is stuck.
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)

# Recycle workers now and then, staggered, so a slow leak never becomes an outage.
max_requests = _int("GUNICORN_MAX_REQUESTS", 2000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 200)

# Each worker imports the app itself: nothing (database connections, the
# CalDAV sessions) is created before the fork and shared by accident.
preload_app = False

# The app writes one JSON line per request (lifeproject/request_log.py) on
# stderr; gunicorn's own access log would only repeat it without the timings.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")

# Heartbeat files in memory, not on a disk that may be slow or read-only.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# Trust X-Forwarded-For and -Proto only from the proxies the operator names, the
# same list the app follows (RESOLVER_TRUSTED_PROXIES, resolver/client_address.py).
# None by default: believed from anyone, or from 127.0.0.1 when the site is reached
# through a local port forward, the header lets a client pick a new address for
# every request and step round the per-address throttles.
forwarded_allow_ips = os.environ.get("RESOLVER_TRUSTED_PROXIES", "").strip()

# The control socket is an admin interface on the host: off unless a path is given.
_control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET", "").strip()
control_socket_disable = not _control_socket
if _control_socket:
    control_socket = _control_socket
