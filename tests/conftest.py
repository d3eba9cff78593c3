"""Shared fixtures: a real Radicale on 127.0.0.1, seeded through the caldav package."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from lifeproject import embedded_radicale
from lifeproject.seeding import seed
from tests.support.calendars import scenario_collections


@dataclass
class RunningRadicale:
    instance: embedded_radicale.RadicaleInstance
    process: subprocess.Popen

    @property
    def url(self) -> str:
        return self.instance.url

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


def start_radicale(root: Path) -> RunningRadicale:
    instance, process = embedded_radicale.launch(root)
    return RunningRadicale(instance=instance, process=process)


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


@pytest.fixture
def live(radicale: RunningRadicale, settings) -> RunningRadicale:
    """Point the resolver at the session Radicale, with the judge off."""
    settings.RESOLVER = radicale.settings()
    return radicale


def storage_digest(root: Path) -> str:
    """A digest of Radicale's storage, its own index cache aside."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if ".Radicale.cache" in path.parts or ".Radicale.lock" in path.name or not path.is_file():
            continue
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
