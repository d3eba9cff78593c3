"""The production environment as settings see it: URLs mapped to the right backends, gunicorn's file."""
from __future__ import annotations

import json
import runpy
import subprocess
import sys

import pytest

from tests.production import servers

REDIS = "django.core.cache.backends.redis.RedisCache"

# Read by lifeproject.settings with a default these tests check. A run of the
# suite on PostgreSQL and Redis sets the first two for every test; the child
# starts without them so that only `env` decides.
DEFAULTED_ENV = ("DATABASE_URL", "CACHE_URL", "STATIC_ROOT")


def settings_for(**env: str) -> dict:
    """Import lifeproject.settings in a fresh process with `env`; returns DATABASES and CACHES."""
    child_env = {name: value for name, value in servers.base_env(**env).items()
                 if name in env or name not in DEFAULTED_ENV}
    code = ("import json, lifeproject.settings as s\n"
            "print(json.dumps({'db': s.DATABASES['default'], 'cache': s.CACHES['default'],"
            " 'middleware': s.MIDDLEWARE, 'static': s.STORAGES['staticfiles']['BACKEND']}, default=str))")
    result = subprocess.run([sys.executable, "-c", code], cwd=servers.REPO, env=child_env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/1", "rediscache://127.0.0.1:6379/1"])
def test_cache_url__redis_schemes_use_djangos_own_backend(url):
    cache = settings_for(CACHE_URL=url)["cache"]
    assert cache["BACKEND"] == REDIS and cache["LOCATION"] == "redis://127.0.0.1:6379/1"


def test_cache_url__options_reach_django_in_upper_case():
    cache = settings_for(CACHE_URL="redis://127.0.0.1:6379/2?key_prefix=lp-prod&timeout=120")["cache"]
    assert cache["KEY_PREFIX"] == "lp-prod" and cache["TIMEOUT"] == 120
    assert "key_prefix" not in cache


def test_cache_url__default_is_the_file_cache():
    assert settings_for()["cache"]["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache"


def test_database_url__postgresql_through_psycopg3():
    db = settings_for(DATABASE_URL="postgres://app:pw@db.internal:5432/lifeproject")["db"]
    assert db["ENGINE"] == "django.db.backends.postgresql" and db["NAME"] == "lifeproject"


def test_middleware__request_log_first_whitenoise_after_security():
    settings = settings_for()
    middleware = settings["middleware"]
    assert middleware[0] == "lifeproject.request_log.RequestLogMiddleware"
    assert middleware.index("whitenoise.middleware.WhiteNoiseMiddleware") == (
        middleware.index("django.middleware.security.SecurityMiddleware") + 1)
    assert settings["static"].startswith("whitenoise.")


def test_gunicorn_conf__defaults_and_environment(monkeypatch):
    for name in ("WEB_CONCURRENCY", "GUNICORN_THREADS", "GUNICORN_BIND"):
        monkeypatch.delenv(name, raising=False)
    conf = runpy.run_path(str(servers.REPO / "gunicorn.conf.py"))
    assert conf["workers"] >= 3 and conf["worker_class"] == "sync" and conf["timeout"] >= 20
    assert conf["accesslog"] is None and conf["preload_app"] is False
    monkeypatch.setenv("WEB_CONCURRENCY", "4")
    monkeypatch.setenv("GUNICORN_THREADS", "8")
    conf = runpy.run_path(str(servers.REPO / "gunicorn.conf.py"))
    assert conf["workers"] == 4 and conf["threads"] == 8 and conf["worker_class"] == "gthread"
