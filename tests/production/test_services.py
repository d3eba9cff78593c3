"""The production shape against the machine's PostgreSQL and Redis, with real processes.

Each test gets a fresh PostgreSQL database and a Redis key prefix of its own
(conftest.py), so runs never see each other's rows or keys.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import requests

from tests.production import servers
from tests.production.conftest import Services
from tests.support.jev_contract_server import DEFAULT_MODEL, JevContractServer, decisive

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _env(services: Services, radicale, **extra: str) -> dict[str, str]:
    return servers.base_env(
        DATABASE_URL=services.database_url,
        CACHE_URL=services.cache_url,
        CALDAV_URL=radicale.url,
        CALDAV_USERNAME=radicale.instance.username,
        CALDAV_PASSWORD=radicale.instance.password,
        **extra,
    )


def test_key_scenarios__on_postgresql_and_redis(services: Services):
    """tests/production/test_scenarios.py again, in a child pytest on PostgreSQL and Redis."""
    env = servers.base_env(DATABASE_URL=services.database_url, CACHE_URL=services.cache_url,
                           LIFEPROJECT_TEST_SERVICES="1")
    env.pop("DEBUG")  # pytest-django runs tests with DEBUG off anyway
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/production/test_scenarios.py", "-q", "-p", "no:randomly"],
        cwd=servers.REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout[-2000:]


def test_provenance__written_by_a_gunicorn_worker_read_by_another_process(services: Services, radicale,
                                                                          tmp_path: Path):
    """Two gunicorn workers and a separate reader share Redis; users and thresholds are in PostgreSQL."""
    with JevContractServer(default=decisive(1, p=0.95)) as jev:
        env = _env(services, radicale, TYPESAFE_BASE_URL=jev.url, STATIC_ROOT=str(tmp_path / "static"),
                   RESOLVER_THROTTLE_RATE="1000/min")
        migrate = servers.manage(env, "migrate", "--noinput", "-v", "0")
        assert migrate.returncode == 0, migrate.stderr[-3000:]
        collect = servers.manage(env, "collectstatic", "--noinput", "-v", "0")
        assert collect.returncode == 0, collect.stderr[-3000:]
        # The user, its token and the approved threshold are written by one
        # process and must be read by the gunicorn workers: only PostgreSQL connects them.
        token = servers.run_python(env, f"""
from datetime import datetime, timezone
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from resolver.domain.judgment import QUESTION_ID
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint
now = datetime.now(timezone.utc)
ApprovedThreshold.objects.create(question=QUESTION_ID, model={DEFAULT_MODEL!r},
    fingerprint=current_fingerprint("jev"), threshold=0.8, cases=400, admitted_accuracy=0.99, coverage=0.7,
    evaluated_at=now, active=True, approved_at=now)
user = get_user_model().objects.create_user("worker-agent", password="pw-worker-123")
print(Token.objects.create(user=user).key)
""").strip().splitlines()[-1]

        server = servers.start_gunicorn(env, workers=2, log_dir=tmp_path / "gunicorn")
        try:
            headers = {"Authorization": f"Token {token}"}
            health = requests.get(f"{server.url}/healthz", timeout=30)
            assert health.status_code == 200, health.text
            assert {name for name, check in health.json()["checks"].items() if check["ok"]} == {
                "database", "cache", "caldav"}

            response = requests.post(f"{server.url}/v1/resolve", json={"text": "portfolio", "kind": "task"},
                                     headers=headers, timeout=30)
            body = response.json()
            assert response.status_code == 200, body
            # Resolved by the judge under the approved threshold read from PostgreSQL.
            assert body["status"] == "ok" and body["data"]["method"] == "semantic"

            static = requests.get(f"{server.url}/static/admin/css/base.css",
                                  headers={"Accept-Encoding": "gzip"}, timeout=30)
            assert static.status_code == 200 and static.headers.get("Content-Encoding") == "gzip"
        finally:
            server.stop()

        # A third process, after the workers are gone, reads what a worker wrote.
        entry = json.loads(servers.run_python(env, f"""
import json
from resolver import provenance
print(json.dumps(provenance.get({body["request_id"]!r})))
""").strip().splitlines()[-1])
        assert entry is not None and entry["request_id"] == body["request_id"]
        assert entry["decision"] == "ok" and body["data"]["item_id"] in entry["number_to_item_id"].values()
        assert len(jev.systemone_requests) == 1

    with psycopg.connect(services.database_url) as conn:
        users = conn.execute("SELECT count(*) FROM auth_user WHERE username = 'worker-agent'").fetchone()
        rules = conn.execute("SELECT threshold FROM resolver_approvedthreshold WHERE active").fetchall()
    assert users == (1,) and rules == [(0.8,)]

    # One JSON line per request, the resolution's timings folded into it.
    lines = [json.loads(line) for line in server.stderr.splitlines() if line.startswith("{")]
    resolved = [line for line in lines if line.get("request_id") == body["request_id"]]
    assert len(resolved) == 1, lines
    line = resolved[0]
    assert line["door"] == "api" and line["http_status"] == 200 and line["envelope_status"] == "ok"
    assert line["resolution_method"] == "semantic" and line["calendar_ms"] > 0 and line["judgment_ms"] > 0
    assert "portfolio" not in json.dumps(line).lower()


def test_check_deploy__clean_with_the_documented_production_env(services: Services, radicale):
    env = _env(services, radicale, **PRODUCTION_ENV)
    result = servers.manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


# The production environment docs/performance.md documents (besides DATABASE_URL,
# CACHE_URL, SECRET_KEY and the CalDAV settings).
PRODUCTION_ENV = {
    "DEBUG": "False",
    "ALLOWED_HOSTS": "resolver.example.org",
    "SECURE_SSL_REDIRECT": "True",
    "SESSION_COOKIE_SECURE": "True",
    "CSRF_COOKIE_SECURE": "True",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "True",
    "SECURE_HSTS_PRELOAD": "True",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "CSRF_TRUSTED_ORIGINS": "https://resolver.example.org",
}
