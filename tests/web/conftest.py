"""Fixtures for the clarification page: users, clients, and the page's own Radicale.

The page tests add items and collections (`webxss`, `webgone`) and delete
items again. They do it on a Radicale of their own, seeded with the same
scenario items, because other tests count the shared server's collections
and candidates and must not see these.
"""
from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator
from unittest import mock

import caldav
import pytest
from django.test import Client

from lifeproject.seeding import Spec, client as caldav_client, ensure_calendar, seed
from tests.conftest import RunningRadicale, start_radicale
from tests.support.calendars import scenario_collections

XSS_TITLE = "<img src=x onerror=alert(1)>"
XSS_COLLECTION = "webxss"
GONE_COLLECTION = "webgone"
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="session")
def page_radicale() -> Iterator[RunningRadicale]:
    """The page tests' own Radicale: the scenario items plus the page's collections."""
    root = Path(tempfile.mkdtemp(prefix="radicale-page-"))
    server = start_radicale(root)
    try:
        seed(server.url, server.instance.username, server.instance.password, {
            **scenario_collections(),
            XSS_COLLECTION: ("Web XSS", [Spec("webxss-1", XSS_TITLE), Spec("webxss-2", XSS_TITLE)]),
        })
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def webxss(radicale_live: RunningRadicale) -> str:
    """Two open tasks whose identical title is markup: an exact-duplicate clarification."""
    return XSS_COLLECTION


@dataclass
class Scratch:
    """Items this test created in its own collection, deleted again afterwards."""

    calendar: caldav.Calendar
    title: str
    uids: list[str] = field(default_factory=list)

    def delete(self, uid: str) -> None:
        self.calendar.object_by_uid(uid).delete()
        self.uids.remove(uid)


@pytest.fixture
def scratch(page_radicale: RunningRadicale) -> Iterator[Scratch]:
    """Two open tasks with the same fresh, unique title in the `webgone` collection."""
    server = page_radicale
    principal = caldav_client(server.url, server.instance.username, server.instance.password).principal()
    calendar = ensure_calendar(principal, GONE_COLLECTION, "Web gone")
    tag = uuid.uuid4().hex[:8]
    made = Scratch(calendar=calendar, title=f"Zorblax quuxification {tag}")
    seed(server.url, server.instance.username, server.instance.password, {
        GONE_COLLECTION: ("Web gone", [Spec(f"webgone-{tag}-a", made.title), Spec(f"webgone-{tag}-b", made.title)]),
    })
    made.uids = [f"webgone-{tag}-a", f"webgone-{tag}-b"]
    yield made
    for uid in list(made.uids):
        made.delete(uid)


@pytest.fixture
def radicale_live(page_radicale: RunningRadicale, settings) -> RunningRadicale:
    """The resolver on the page tests' Radicale, with the judge off.

    One server is enough here: the page is the same whatever the server, and
    the calendar layer's own tests cover each one.
    """
    settings.RESOLVER = page_radicale.settings()
    return page_radicale


@pytest.fixture
def site_live(radicale_live: RunningRadicale, settings) -> RunningRadicale:
    """`radicale_live`, plus the site URL the command builds its links from."""
    settings.RESOLVER = {**settings.RESOLVER, "SITE_URL": "https://resolver.example"}
    return radicale_live


@pytest.fixture(autouse=True)
def fast_password_hasher(settings) -> None:
    # Users are created in most tests; the production hasher is slow by design.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password=PASSWORD)


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", password=PASSWORD)


@pytest.fixture
def alice_client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


@contextmanager
def issued_seconds_ago(seconds: int) -> Iterator[None]:
    """Sign as if the clock were `seconds` behind: signing reads `time.time()`."""
    real = time.time
    with mock.patch("django.core.signing.time.time", lambda: real() - seconds):
        yield


def page_path(outcome, user_id: object) -> str:
    """The page's path for a hand-built clarification outcome, as the service signs it."""
    from django.urls import reverse

    from resolver import clarifications

    token = clarifications.issue(clarifications.claims_for(outcome, user_id=user_id))
    return reverse("resolver_web:clarify", kwargs={"token": token})
