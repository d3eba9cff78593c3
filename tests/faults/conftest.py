"""A Radicale of the faults tests' own, behind a server that misbehaves on demand.

Only collections named `faults-*` are written, and only on this server: the
session's seeded Radicale and Xandikos stay untouched.
"""
from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from lifeproject.seeding import Spec, seed
from tests.support.fault_proxy import FaultyRadicale

NOW = datetime.now(timezone.utc).replace(microsecond=0)
DAY = timedelta(days=1)

MAIN = "faults-main"
MAIN_ITEMS = [
    Spec("f-alpha", "Alpha task", when=NOW + 2 * DAY),
    Spec("f-beta", "Beta task"),
    Spec("f-gamma", "Gamma review", kind="event", when=NOW + 3 * DAY),
    Spec("f-delta", "Delta review", kind="event", when=NOW + 4 * DAY),
]
# Short, so a slow server costs each test about half a second: the tests that make it slow or drop it set it.
TIMEOUT = 0.5
# What a healthy answer may take. With TIMEOUT for every request, a loaded machine (two cores, the suite's own
# servers) answered the first request after a restart, or a plain REPORT, later than that, and a test that
# expected an answer failed on a timeout it was not about.
HEALTHY_TIMEOUT = 10.0


@pytest.fixture(scope="session")
def faulty() -> Iterator[FaultyRadicale]:
    root = Path(tempfile.mkdtemp(prefix="faulty-radicale-"))
    server = FaultyRadicale(root)
    server.start()
    try:
        seed(server.url, server.username, server.password, {MAIN: ("Faults", MAIN_ITEMS)})
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def faulty_live(faulty: FaultyRadicale, settings) -> Iterator[FaultyRadicale]:
    """Point the resolver at the faulty server; leave it running and well-behaved after."""
    settings.RESOLVER = faulty.settings(CALDAV_TIMEOUT=HEALTHY_TIMEOUT)
    faulty.forget_requests()
    try:
        yield faulty
    finally:
        faulty.fault = None
        faulty.start()


@dataclass
class CommandResult:
    code: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def run_command(*args: str) -> CommandResult:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO("")
    try:
        call_command("resolve", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        sys.stdin = saved
    return CommandResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def api(db, settings, monkeypatch: pytest.MonkeyPatch) -> APIClient:
    """An authenticated client that is never throttled, with a cache of its own.

    The project's cache is a file cache that outlives the test run, and DRF
    copies the throttle rates onto the class at import, so both are replaced
    here: a fault test must never see a 429 left over from another test.
    """
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": f"faults-{uuid.uuid4().hex}"}}
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"resolve": "100000/min"})
    user = get_user_model().objects.create_user("faults-agent")
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def post_resolve(api: APIClient, body: dict[str, Any]):
    return api.post("/v1/resolve", data=json.dumps(body), content_type="application/json")
