"""The five servers of the compatibility suite (peers.py): one fixture, parametrised by name."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.compat.peers import EXTERNAL, REQUIRE, Peer, external
from tests.conftest import start_radicale
from tests.support.xandikos import start_xandikos

NAMES = ["radicale", "xandikos", *EXTERNAL]


def _local(name: str, root: Path) -> Peer:
    if name == "radicale":
        server = start_radicale(root)
        values = server.settings()
        return Peer(name=name, version="Radicale (Python package)", url=str(values["CALDAV_URL"]),
                    username=str(values["CALDAV_USERNAME"]), password=str(values["CALDAV_PASSWORD"]),
                    home=f"/{values['CALDAV_USERNAME']}/", stop=server.stop)
    xandikos = start_xandikos(root)
    return Peer(name=name, version="Xandikos (Python package)", url=xandikos.url, username="", password="",
                home="/user/calendars/", event_time_range=False, stop=xandikos.stop)


@pytest.fixture(scope="session", params=NAMES)
def peer(request: pytest.FixtureRequest) -> Iterator[Peer]:
    name = request.param
    if name in EXTERNAL:
        found = external(name)
        if isinstance(found, str):
            if REQUIRE:
                pytest.fail(f"LIFEPROJECT_REQUIRE_SERVICES=1 but {found}")
            pytest.skip(found)
        yield found
        return
    root = Path(tempfile.mkdtemp(prefix=f"lp-compat-{name}-"))
    running = _local(name, root)
    try:
        yield running
    finally:
        if running.stop:
            running.stop()
        shutil.rmtree(root, ignore_errors=True)
