"""Shared fixtures: a real Radicale and a real Xandikos on 127.0.0.1, seeded through the caldav package."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

from lifeproject import embedded_radicale
from lifeproject.seeding import seed
from tests.support.calendars import scenario_collections
from tests.support.xandikos import RunningXandikos, start_xandikos

if TYPE_CHECKING:
    from resolver.calendars.caldav import ReaderRegistry

# The CalDAV servers every test using `live` runs against.
CALDAV_SERVERS = ("radicale", "xandikos")


@dataclass
class RunningRadicale:
    instance: embedded_radicale.RadicaleInstance
    process: subprocess.Popen

    name = "radicale"

    @property
    def url(self) -> str:
        return self.instance.url

    def collection_path(self, collection_id: str) -> str:
        """The URL path item IDs are derived from (it differs from Xandikos')."""
        return f"/{self.instance.username}/{collection_id}/"

    def settings(self, **overrides: object) -> dict[str, object]:
        values: dict[str, object] = {
            "CALDAV_URL": self.instance.url,
            "CALDAV_USERNAME": self.instance.username,
            "CALDAV_PASSWORD": self.instance.password,
            "CALDAV_TIMEOUT": 5.0,
            "EVENT_HORIZON_DAYS": 90,
        }
        values.update(overrides)
        return values

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def pytest_configure(config: pytest.Config) -> None:
    # WhiteNoise warns at start-up while STATIC_ROOT has not been collected,
    # which is the normal state in tests; production runs collectstatic first.
    config.addinivalue_line("filterwarnings", "ignore:No directory at:UserWarning")


def start_radicale(root: Path) -> RunningRadicale:
    instance, process = embedded_radicale.launch(root)
    return RunningRadicale(instance=instance, process=process)


@pytest.fixture(autouse=True)
def isolated_cache(settings, monkeypatch) -> Iterator[None]:
    """A fresh in-memory cache per test, and no throttling unless a test asks for it.

    The project's default cache is a file cache under var/ that outlives the
    run: provenance entries and throttle counts must not leak between tests.
    DRF copies the throttle rates onto the class at import, hence the patch.
    """
    from django.core.cache import cache
    from rest_framework.throttling import ScopedRateThrottle

    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": uuid.uuid4().hex}
    }
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {"resolve": "100000/min"})
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(scope="session")
def radicale() -> Iterator[RunningRadicale]:
    """The session's Radicale with every core scenario's items."""
    root = Path(tempfile.mkdtemp(prefix="radicale-"))
    server = start_radicale(root)
    try:
        seed(server.url, server.instance.username, server.instance.password, scenario_collections())
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def xandikos() -> Iterator[RunningXandikos]:
    """The session's Xandikos with the same items: a second, independent server."""
    root = Path(tempfile.mkdtemp(prefix="xandikos-"))
    server = start_xandikos(root)
    try:
        # No credentials: Xandikos only authenticates over TLS.
        seed(server.url, "", "", scenario_collections())
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session", params=CALDAV_SERVERS)
def caldav_server(request: pytest.FixtureRequest) -> RunningRadicale | RunningXandikos:
    """Each seeded server in turn; a server starts only when a test asks for it."""
    return request.getfixturevalue(request.param)


@pytest.fixture
def live(caldav_server: RunningRadicale | RunningXandikos, settings) -> RunningRadicale | RunningXandikos:
    """Point the resolver at a seeded server (Radicale, then Xandikos), with the judge off.

    Item IDs derive from the collection's URL path, which differs between the
    servers: compare by UID, or build IDs with `live.collection_path(id)`.
    """
    settings.RESOLVER = caldav_server.settings()
    return caldav_server


def storage_digest(root: Path) -> str:
    """A digest of Radicale's storage, its own index cache aside."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if ".Radicale.cache" in path.parts or ".Radicale.lock" in path.name or not path.is_file():
            continue
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(autouse=True)
def readers() -> Iterator["ReaderRegistry"]:
    """Each test starts like a new process: a fresh registry of CalDAV readers.

    Nothing is reset: the readers of the test before (their parse memo, sync
    tokens, remembered home, time-range failures, connections) belong to the
    registry that is put aside, so a test that damages a resource on the wire
    without changing its ETag (tests/faults) never meets what an earlier test
    remembered of it.
    """
    from resolver.calendars.caldav import ReaderRegistry, use_registry

    registry = ReaderRegistry()
    previous = use_registry(registry)
    try:
        yield registry
    finally:
        use_registry(previous)
        registry.clear()
