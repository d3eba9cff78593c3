"""Real processes for the production-shape tests and the load script.

- `Services`: the machine's PostgreSQL and Redis, probed once. Tests that need
  them skip with the reason when they are absent, or fail when
  LIFEPROJECT_REQUIRE_SERVICES=1 (CI sets it, so a missing service is a red
  build, not a silently skipped one).
- `fresh_database()`: a PostgreSQL database of its own, dropped afterwards, so
  concurrent runs never share tables.
- `GunicornServer`: `gunicorn lifeproject.wsgi` with this repository's
  gunicorn.conf.py on a free loopback port, started with a given environment.
"""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator
from urllib.parse import urlsplit, urlunsplit

import requests

from lifeproject.embedded_radicale import free_port

REPO = Path(__file__).resolve().parent.parent.parent

POSTGRES_URL = os.environ.get("LIFEPROJECT_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("LIFEPROJECT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REQUIRE_SERVICES = os.environ.get("LIFEPROJECT_REQUIRE_SERVICES", "") == "1"


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))


def postgres_problem() -> str | None:
    """None when PostgreSQL answers, else why not."""
    import psycopg

    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except Exception as err:  # any failure means: not available here
        return f"PostgreSQL at {_redacted(POSTGRES_URL)} is not reachable ({type(err).__name__})"
    return None


def redis_problem() -> str | None:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3, socket_timeout=3).ping()
    except Exception as err:
        return f"Redis at {_redacted(REDIS_URL)} is not reachable ({type(err).__name__})"
    return None


def database_url(name: str) -> str:
    parts = urlsplit(POSTGRES_URL)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


@contextmanager
def fresh_database(prefix: str = "lifeproject_t") -> Iterator[str]:
    """A new, empty PostgreSQL database; yields its URL and drops it afterwards."""
    import psycopg

    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(name)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_cache_url(prefix: str) -> str:
    """The Redis cache URL with a key prefix of its own (see lifeproject/settings.py)."""
    separator = "&" if "?" in REDIS_URL else "?"
    return f"{REDIS_URL}{separator}key_prefix={prefix}"


def clear_redis_prefix(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
    if keys:
        client.delete(*keys)


def base_env(**overrides: str) -> dict[str, str]:
    """The environment for a child process: production-like, with the given overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST_"))}
    env.update({
        "DJANGO_SETTINGS_MODULE": "lifeproject.settings",
        "DEBUG": "False",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONPATH": str(REPO),
    })
    env.update(overrides)
    return env


def run_python(env: dict[str, str], code: str, *, timeout: float = 120) -> str:
    """Run `code` after django.setup() in a new process; returns its stdout (raises on failure)."""
    script = "import django\ndjango.setup()\n" + code
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"child process failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


@dataclass
class GunicornServer:
    process: subprocess.Popen[bytes]
    port: int
    log_dir: Path
    _files: list[IO[bytes]] = field(default_factory=list, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def stdout(self) -> str:
        return (self.log_dir / "gunicorn.out").read_text(encoding="utf-8", errors="replace")

    @property
    def stderr(self) -> str:
        return (self.log_dir / "gunicorn.err").read_text(encoding="utf-8", errors="replace")

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


def start_gunicorn(env: dict[str, str], *, workers: int, log_dir: Path, ready_timeout: float = 60,
                   app: str = "lifeproject.wsgi") -> GunicornServer:
    """gunicorn with the repository's gunicorn.conf.py; returns once /healthz answers.

    `app="lifeproject.asgi:application"`: the ASGI site on uvicorn workers (gunicorn.conf.py).
    """
    port = free_port()
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(workers)}
    log_dir.mkdir(parents=True, exist_ok=True)
    out = open(log_dir / "gunicorn.out", "wb")
    err = open(log_dir / "gunicorn.err", "wb")
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", app], cwd=REPO, env=env,
                               stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    server = GunicornServer(process=process, port=port, log_dir=log_dir, _files=[out, err])
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()
            raise RuntimeError(f"gunicorn exited ({process.returncode}):\n{server.stderr[-3000:]}")
        try:
            requests.get(f"{server.url}/healthz", timeout=10)
            return server
        except requests.RequestException:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"gunicorn did not answer within {ready_timeout} s:\n{server.stderr[-3000:]}")
