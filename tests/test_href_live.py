"""`href` is the resource path the server reported, never built from the UID (real Radicale)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import requests

from lifeproject.seeding import seed
from resolver import services
from tests.conftest import start_radicale
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.django_db

TODO = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//lifeproject tests//EN\r
BEGIN:VTODO\r
UID:another-uid-0815\r
DTSTAMP:20260101T000000Z\r
SUMMARY:Renew the parking permit\r
END:VTODO\r
END:VCALENDAR\r
"""


@pytest.fixture(scope="module")
def server():
    root = Path(tempfile.mkdtemp(prefix="radicale-href-"))
    running = start_radicale(root)
    try:
        seed(running.url, running.instance.username, running.instance.password, {"work": ("Work", [])})
        path = f"/{running.instance.username}/work/not-the-uid-4711.ics"
        response = requests.put(running.url.rstrip("/") + path, data=TODO.encode(), timeout=10,
                                auth=(running.instance.username, running.instance.password),
                                headers={"Content-Type": "text/calendar; charset=utf-8"})
        assert response.status_code in (201, 204), response.text
        yield running, path
    finally:
        running.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_href__is_the_servers_resource_path_not_the_uid(server, settings):
    running, path = server
    settings.RESOLVER = running.settings()
    outcome = resolve_outcome(text="Renew the parking permit", kind="task")
    envelope = services.envelope_for(outcome)
    assert envelope["status"] == "ok"
    assert envelope["data"]["uid"] == "another-uid-0815"
    assert envelope["data"]["href"] == path
    assert not envelope["data"]["href"].endswith("another-uid-0815.ics")


def test_href__on_every_candidate_too(server, settings):
    running, path = server
    settings.RESOLVER = running.settings()
    envelope = services.envelope_for(resolve_outcome(text="parking", kind="task"))
    assert [c["href"] for c in envelope["data"]["candidates"]] == [path]
