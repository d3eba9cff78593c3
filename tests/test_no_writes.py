"""Resolution writes nothing: Radicale's storage and the database are unchanged."""
from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from lifeproject.seeding import Spec, seed
from tests.conftest import start_radicale, storage_digest

pytestmark = pytest.mark.django_db

SCENARIOS = [
    ("Draft portfolio outline", "task", None),
    ("t-slides", "task", None),
    ("Team offsite planning", "task", None),
    ("Team offsite planning", "task", ["personal"]),
    ("portfolo", "task", None),
    ("bulk chore", "task", None),
    ("xylophone", "task", None),
    ("weekly sync", "event", None),
    ("design", "event", None),
    ("Past retro", "event", None),
    ("x", "task", ["nope"]),
    ("", "task", None),
]


def database_digest() -> str:
    digest = hashlib.sha256()
    for model in sorted(apps.get_models(), key=lambda m: m._meta.label):
        if not model._meta.managed or model._meta.proxy:
            continue
        rows = model._default_manager.order_by("pk")
        digest.update(model._meta.label.encode())
        digest.update(serializers.serialize("json", rows).encode())
    return digest.hexdigest()


def test_every_scenario_writes_nothing(radicale, settings):
    settings.RESOLVER = radicale.settings()
    user = get_user_model().objects.create_user("agent", password="pw-agent-123")
    token = Token.objects.create(user=user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    storage = radicale.instance.storage
    before = (storage_digest(storage), database_digest())

    statuses = []
    for text, kind, collection_ids in SCENARIOS:
        body = {"text": text, "kind": kind}
        if collection_ids:
            body["collection_ids"] = collection_ids
        statuses.append(api.post("/v1/resolve", body, format="json").json()["status"])
        args = ["--text", text, "--kind", kind, "--json"]
        for cid in collection_ids or []:
            args += ["--collection", cid]
        try:
            call_command("resolve", *args, stdout=io.StringIO(), stderr=io.StringIO())
        except SystemExit:
            pass

    assert set(statuses) == {"ok", "needs_clarification", "error"}
    assert (storage_digest(storage), database_digest()) == before


def _command(server, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "CALDAV_URL": server.url,
        "CALDAV_USERNAME": server.instance.username,
        "CALDAV_PASSWORD": server.instance.password,
        "CALDAV_TIMEOUT": "3",
        "DATABASE_URL": f"sqlite:///{server.instance.root / 'db.sqlite3'}",
        "CACHE_URL": "locmemcache://",
        "TYPESAFE_API_KEY": "",
        "TYPESAFE_BASE_URL": "",
        # DEBUG is off by default: the checks refuse the development key.
        "SECRET_KEY": "test-" + "k" * 50,
    }
    return subprocess.run(
        [sys.executable, str(Path(django_settings.BASE_DIR) / "manage.py"), "resolve", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )


def test_radicale_stopped_mid_run_is_calendar_unavailable_exit_4():
    """A real process, a real server that goes away between two calls."""
    server = start_radicale(Path(tempfile.mkdtemp(prefix="radicale-stop-")))
    try:
        seed(server.url, server.instance.username, server.instance.password,
             {"home": ("Home", [Spec("s-1", "Water the plants")])})
        first = _command(server, "--text", "water the plants", "--kind", "task")
        assert first.returncode == 0, first.stderr
        assert first.stdout.startswith("itm_")
        ambiguous = _command(server, "--text", "plants", "--kind", "task")
        assert ambiguous.returncode == 3
        assert "clarification_required" in ambiguous.stderr
    finally:
        server.stop()
    second = _command(server, "--text", "water the plants", "--kind", "task", "--json")
    assert second.returncode == 4
    assert json.loads(second.stdout)["error"]["code"] == "calendar_unavailable"
    assert "Traceback" not in second.stdout + second.stderr
