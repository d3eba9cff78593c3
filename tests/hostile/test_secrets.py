"""Secrets never leave: not in a response, a log record or a provenance entry.

The suite runs with recognisable values for CALDAV_PASSWORD, TYPESAFE_API_KEY
and SECRET_KEY (and the Basic and Bearer headers built from them), drives
every kind of answer (resolved, clarification, semantic resolution, every
error, judge on and off, judge failing, calendar refusing us, DEBUG on and
off, API and command), captures everything, and searches it.
"""
from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Iterator

import pytest
from django.contrib.auth import get_user_model
from django.test import Client as DjangoClient
from django.utils import timezone
from rest_framework.test import APIClient

from resolver import provenance
from tests.support.commands import run_resolve
from tests.hostile.canaries import CALDAV_SECRET, DJANGO_SECRET, HOSTILE_USER, JEV_SECRET, HostileCalendar
from tests.support.jev_contract_server import JevContractServer, decisive, defective, status

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def needles() -> dict[str, str]:
    basic = base64.b64encode(f"{HOSTILE_USER}:{CALDAV_SECRET}".encode()).decode()
    return {
        "CALDAV_PASSWORD": CALDAV_SECRET,
        "TYPESAFE_API_KEY": JEV_SECRET,
        "SECRET_KEY": DJANGO_SECRET,
        "Basic credentials": basic,
        # Recognisable fragments, in case a secret is cut or re-encoded.
        "CalDAV password fragment": CALDAV_SECRET[8:24],
        "API key fragment": JEV_SECRET[8:24],
        "SECRET_KEY fragment": DJANGO_SECRET[15:40],
    }


class LogCapture(logging.Handler):
    """Every record of every logger, formatted with its traceback and its extra fields."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[str] = []
        self._formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self._formatter.format(record) + " " + repr(vars(record)))


@pytest.fixture
def all_logs() -> Iterator[LogCapture]:
    """DEBUG on every logger, and the capture on those that do not propagate to the root."""
    capture = LogCapture()
    manager = logging.root.manager
    loggers = [logging.root] + [lg for lg in manager.loggerDict.values() if isinstance(lg, logging.Logger)]
    saved = [(lg, lg.level, lg.disabled) for lg in loggers]
    attached = [lg for lg in loggers if lg is logging.root or not lg.propagate]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
        lg.disabled = False
    for lg in attached:
        lg.addHandler(capture)
    try:
        yield capture
    finally:
        for lg in attached:
            lg.removeHandler(capture)
        for lg, level, disabled in saved:
            lg.setLevel(level)
            lg.disabled = disabled


@dataclass
class Evidence:
    """Everything a secret could leak into, labelled by where it came from."""

    texts: list[tuple[str, str]] = field(default_factory=list)

    def response(self, label: str, response: Any) -> Any:
        headers = "\n".join(f"{k}: {v}" for k, v in response.items())
        self.texts.append((f"{label}: headers", headers))
        self.texts.append((f"{label}: body", response.content.decode("utf-8", "replace")))
        return response

    def add(self, label: str, text: str) -> None:
        self.texts.append((label, text))


@pytest.fixture
def secret_settings(settings, hostile_calendar: HostileCalendar):
    settings.SECRET_KEY = DJANGO_SECRET
    settings.RESOLVER = hostile_calendar.settings()
    return settings


def approve_threshold(model: str) -> None:
    from resolver.domain.judgment import QUESTION_ID, question_fingerprint
    from resolver.models import ApprovedThreshold

    ApprovedThreshold.objects.create(
        question=QUESTION_ID, model=model, fingerprint=question_fingerprint(), threshold=0.9, cases=100,
        admitted_accuracy=0.99, coverage=0.5, evaluated_at=timezone.now(), active=True, approved_at=timezone.now(),
    )


def command(evidence: Evidence, label: str, *args: str, stdin: str | None = None) -> int:
    code, out, err = run_resolve(*args, stdin=stdin)
    evidence.add(f"{label}: stdout", out)
    evidence.add(f"{label}: stderr", err)
    return code


def run_scenarios(evidence: Evidence, *, api: APIClient, token: str, settings: Any,
                  calendar: HostileCalendar, monkeypatch: pytest.MonkeyPatch, throttle_rate: dict[str, str]) -> None:
    def post(label: str, body: Any, client: APIClient | None = None, **kwargs: Any) -> Any:
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        content_type = kwargs.pop("content_type", "application/json")
        return evidence.response(label, (client or api).generic("POST", "/v1/resolve", data,
                                                                content_type=content_type, **kwargs))

    anonymous = APIClient(raise_request_exception=False)

    # Judge off.
    assert post("resolved", {"text": "Unique errand", "kind": "task"}).json()["status"] == "ok"
    assert post("exact twins", {"text": "Twin title", "kind": "task"}).json()["status"] == "needs_clarification"
    assert post("fuzzy", {"text": "quarterly", "kind": "task"}).json()["status"] == "needs_clarification"
    assert post("nothing", {"text": "zzz qqq", "kind": "event"}).status_code == 200
    evidence.response("collections", api.get("/v1/collections"))
    evidence.response("schema", api.get("/v1/schema/"))

    # Every error the API has.
    assert post("invalid", {"text": "", "kind": "task"}).status_code == 400
    assert post("too long", {"text": "x" * 501, "kind": "task"}).status_code == 400
    assert post("too big", "{" + " " * 70_000 + "}").status_code == 400
    assert post("not json", "{nope").status_code == 400
    assert post("unknown collection", {"text": "x", "kind": "task", "collection_ids": ["nope"]}).status_code == 400
    assert post("anonymous", {"text": "x", "kind": "task"}, client=anonymous).status_code == 401
    bad = APIClient(raise_request_exception=False)
    bad.credentials(HTTP_AUTHORIZATION="Token wrong")
    assert post("bad token", {"text": "x", "kind": "task"}, client=bad).status_code == 401
    assert evidence.response("not found", api.get("/v1/nope")).status_code == 404
    assert evidence.response("method", api.get("/v1/resolve")).status_code == 405
    assert post("not acceptable", {"text": "x", "kind": "task"}, HTTP_ACCEPT="text/html").status_code == 406
    assert post("media type", "text=x", content_type="text/plain").status_code == 415

    user = get_user_model().objects.create_user("session-user", password="pw-session-123")
    session = DjangoClient(enforce_csrf_checks=True, raise_request_exception=False)
    session.force_login(user)
    response = session.post("/v1/resolve", json.dumps({"text": "x", "kind": "task"}), content_type="application/json")
    assert evidence.response("csrf", response).status_code == 403

    with monkeypatch.context() as patch:
        def explode(**kwargs: Any) -> None:
            raise RuntimeError("unexpected")

        patch.setattr("resolver.services.resolve", explode)
        assert post("internal", {"text": "x", "kind": "task"}).status_code == 500

    settings.RESOLVER = calendar.settings(CALDAV_PASSWORD=CALDAV_SECRET + "-wrong")
    assert post("caldav refuses", {"text": "x", "kind": "task"}).status_code == 503
    settings.RESOLVER = calendar.settings(CALDAV_URL="http://127.0.0.1:9/", CALDAV_TIMEOUT=1)
    assert post("caldav down", {"text": "x", "kind": "task"}).status_code == 503
    assert evidence.response("collections down", api.get("/v1/collections")).status_code == 503
    settings.RESOLVER = calendar.settings()

    throttle_rate["resolve"] = "1/hour"
    for attempt in range(2):
        post(f"throttled {attempt}", {"text": "Unique errand", "kind": "task"})
    assert evidence.texts[-1][1].find("throttled") >= 0
    throttle_rate["resolve"] = "100000/min"
    from django.core.cache import cache

    cache.clear()

    # Judge on: clarification with probabilities, semantic resolution, and every way Jev fails.
    with JevContractServer(api_key=JEV_SECRET, default=decisive(1, p=0.97)) as jev:
        settings.RESOLVER = calendar.settings(TYPESAFE_BASE_URL=jev.url, TYPESAFE_API_KEY=JEV_SECRET,
                                              JUDGMENT_BUDGET_SECONDS=2.0)
        body = post("judged", {"text": "quarterly", "kind": "task"}).json()
        assert body["data"]["judgment_provenance"] is not None
        approve_threshold(jev.model)
        body = post("semantic", {"text": "quarterly", "kind": "task"}).json()
        assert body["data"]["method"] == "semantic"
        for name, behaviour in [("jev 500", status(500)), ("jev 429", status(429, {"retry-after-ms": "1"})),
                                ("jev defective", defective("bad_sum")), ("jev 422", status(422))]:
            jev.push(behaviour, behaviour, behaviour, behaviour)
            post(name, {"text": "quarterly", "kind": "task"})
        assert command(evidence, "command judged", "--text", "quarterly", "--kind", "task", "--json") in (0, 3)
        settings.RESOLVER = calendar.settings(TYPESAFE_BASE_URL=jev.url, TYPESAFE_API_KEY=JEV_SECRET + "-wrong")
        body = post("jev refuses key", {"text": "quarterly", "kind": "task"}).json()
        assert body["warnings"][0]["code"] == "judgment_unavailable"
    settings.RESOLVER = calendar.settings(TYPESAFE_BASE_URL="http://127.0.0.1:9", TYPESAFE_API_KEY=JEV_SECRET,
                                          JUDGMENT_BUDGET_SECONDS=0.5)
    post("jev down", {"text": "quarterly", "kind": "task"})
    settings.RESOLVER = calendar.settings()

    # The command door.
    assert command(evidence, "command resolved", "--text", "Unique errand", "--kind", "task") == 0
    assert command(evidence, "command clarification", "--text", "Twin title", "--kind", "task") == 3
    assert command(evidence, "command list", "--list-collections", "--json") == 0
    assert command(evidence, "command invalid", "--input", "-", "--json", stdin='{"text": 1}') == 2
    settings.RESOLVER = calendar.settings(CALDAV_PASSWORD="wrong")
    assert command(evidence, "command caldav refuses", "--text", "x", "--kind", "task", "--json") == 4
    settings.RESOLVER = calendar.settings()


@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
def test_secrets__never_in_responses_logs_or_provenance(
    debug, secret_settings, api, token, hostile_calendar, monkeypatch, throttle_rate, all_logs
):
    secret_settings.DEBUG = debug
    evidence = Evidence()
    run_scenarios(evidence, api=api, token=token, settings=secret_settings, calendar=hostile_calendar,
                  monkeypatch=monkeypatch, throttle_rate=throttle_rate)

    entries = provenance.recent(limit=200)
    assert entries, "the judged scenarios recorded no provenance"
    for entry in entries:
        evidence.add(f"provenance {entry.get('request_id')}", json.dumps(entry, default=str))
    for number, record in enumerate(all_logs.records):
        evidence.add(f"log record {number}", record)
    assert len(all_logs.records) > 20, "the log capture saw (almost) nothing"

    leaks = [(where, name) for where, text in evidence.texts for name, secret in needles().items() if secret in text]
    assert leaks == []


def test_secrets__the_search_finds_a_planted_secret(all_logs):
    """The capture and the search work: a secret logged on purpose is found."""
    logging.getLogger("resolver.requests").info("oops %s", CALDAV_SECRET)
    logging.getLogger("some.library").debug("oops too %s", JEV_SECRET)
    found = {name for record in all_logs.records for name, secret in needles().items() if secret in record}
    assert {"CALDAV_PASSWORD", "TYPESAFE_API_KEY"} <= found


def test_secrets__a_secret_logged_as_a_header_is_redacted(all_logs):
    """Named as what it is, a secret never reaches a log line at any level (resolver/redaction.py)."""
    logging.getLogger("some.library").debug("header Authorization: Bearer %s", JEV_SECRET)
    logging.getLogger("some.library").debug("sent %r", {"password": CALDAV_SECRET})
    found = {name for record in all_logs.records for name, secret in needles().items() if secret in record}
    assert found == set() and any("[redacted]" in record for record in all_logs.records)


def test_secrets__reprs_hide_them(secret_settings):
    from resolver.services import calendar_from_settings, judge_from_settings

    secret_settings.RESOLVER = {**secret_settings.RESOLVER, "TYPESAFE_API_KEY": JEV_SECRET,
                                "TYPESAFE_BASE_URL": "http://127.0.0.1:9"}
    for obj in (calendar_from_settings(), judge_from_settings()):
        assert CALDAV_SECRET not in repr(obj) and JEV_SECRET not in repr(obj)
