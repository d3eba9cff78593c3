"""The CalDAV server fails: every door answers `calendar_unavailable`, and nothing else.

Each fault runs against a real Radicale on 127.0.0.1 (tests/support/fault_proxy.py)
through the three doors: the service function, `POST /v1/resolve` and
`manage.py resolve --json`. Each must give the documented error (code
`calendar_unavailable`, HTTP 503, exit 4) with a reason, say nothing of the
server's error page or of our credentials, leave no traceback in a body, and
write nothing: the storage digest is unchanged and only reads reached the server.
"""
from __future__ import annotations

import json
import logging
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable

import pytest

from resolver import services
from resolver.domain.errors import CalendarUnavailable
from tests.conftest import storage_digest
from tests.faults.conftest import HEALTHY_TIMEOUT, MAIN, TIMEOUT, post_resolve, run_command
from tests.support.fault_proxy import Fault, FaultyRadicale
from tests.support.resolving import resolve_outcome

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

SLOW_DELAY = 2.0  # four times the client timeout
# What must never reach a caller: a traceback, or the server's leaky error page.
FORBIDDEN = ("Traceback", 'File "', "hunter2", "/srv/caldav")


@dataclass(frozen=True)
class Case:
    name: str
    # What breaks, given the running server; a context manager for the request's duration.
    breaks: Callable[[FaultyRadicale], AbstractContextManager[Any]]
    reasons: frozenset[str]  # the acceptable `details.reason`
    settings: dict[str, Any] | None = None  # overrides of the resolver's settings
    # Whether the fault is a slow server: only then is the client's timeout short, and the time taken checked.
    # Other faults keep the healthy timeout: under a loaded CI machine a refused password once took longer than
    # the short one, and the test saw `timeout` where it was about `unauthorized`.
    slow: bool = False

    @property
    def timeout(self) -> float:
        return TIMEOUT if self.slow else HEALTHY_TIMEOUT


def _inject(fault: Fault) -> Callable[[FaultyRadicale], AbstractContextManager[Any]]:
    return lambda server: server.inject(fault)


CASES = [
    Case("server-stopped", lambda server: server.stopped(), frozenset({"unreachable"})),
    # Reset every time: tried once more (a drop), then unreachable.
    Case("reset-mid-discovery", _inject(Fault.reset(methods={"PROPFIND"})), frozenset({"unreachable"})),
    Case("reset-mid-report", _inject(Fault.reset(methods={"REPORT"})), frozenset({"unreachable"})),
    Case("slow-discovery", _inject(Fault.slow(SLOW_DELAY, methods={"PROPFIND"})), frozenset({"timeout"}), slow=True),
    Case("slow-report", _inject(Fault.slow(SLOW_DELAY, methods={"REPORT"})), frozenset({"timeout"}), slow=True),
    Case("500-everywhere", _inject(Fault.status_code(500)), frozenset({"http_500"})),
    Case("500-report", _inject(Fault.status_code(500, methods={"REPORT"})), frozenset({"http_500"})),
    Case("503-everywhere", _inject(Fault.status_code(503)), frozenset({"http_503"})),
    Case("503-report", _inject(Fault.status_code(503, methods={"REPORT"})), frozenset({"http_503"})),
    Case("401-wrong-password", lambda server: nullcontext(), frozenset({"unauthorized"}),
         settings={"CALDAV_PASSWORD": "not-the-password"}),
    Case("401-wrong-username", lambda server: nullcontext(), frozenset({"unauthorized"}),
         settings={"CALDAV_USERNAME": "mallory", "CALDAV_PASSWORD": "not-the-password"}),
    Case("401-injected", _inject(Fault.status_code(401)), frozenset({"unauthorized"})),
    Case("403-injected", _inject(Fault.status_code(403)), frozenset({"forbidden"})),
    Case("403-report", _inject(Fault.status_code(403, methods={"REPORT"})), frozenset({"forbidden"})),
    Case("broken-xml-discovery", _inject(Fault.broken_xml(methods={"PROPFIND"})), frozenset({"bad_response"})),
    Case("broken-xml-report", _inject(Fault.broken_xml(methods={"REPORT"})), frozenset({"bad_response"})),
]
DOORS = ["service", "api", "command"]


def _assert_clean(text: str, server: FaultyRadicale) -> None:
    for needle in (*FORBIDDEN, server.password):
        assert needle not in text, needle


def _resolve_through(door: str, api: Any) -> tuple[dict[str, Any], str]:
    """The error envelope (or its equivalent) and every byte the caller saw."""
    if door == "service":
        with pytest.raises(CalendarUnavailable) as caught:
            resolve_outcome(text="Alpha task", kind="task", collection_ids=[MAIN], door="test")
        error = {"code": caught.value.code, "message": caught.value.message, "details": caught.value.details}
        return {"error": error, "http_status": caught.value.http_status, "exit_code": caught.value.exit_code}, (
            json.dumps(error) + str(caught.value)
        )
    if door == "api":
        response = post_resolve(api, {"text": "Alpha task", "kind": "task", "collection_ids": [MAIN]})
        body = response.json()
        assert response.status_code == 503
        assert body["status"] == "error" and body["data"] is None and body["warnings"] == []
        return {**body, "http_status": response.status_code}, response.content.decode("utf-8")
    result = run_command("--text", "Alpha task", "--kind", "task", "--collection", MAIN, "--json")
    assert result.code == 4
    body = result.envelope
    assert body["status"] == "error" and body["data"] is None
    return {**body, "exit_code": result.code}, result.stdout + result.stderr


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_fault__calendar_unavailable(faulty_live: FaultyRadicale, settings, api, caplog, case: Case,
                                     door: str) -> None:
    settings.RESOLVER = faulty_live.settings(CALDAV_TIMEOUT=case.timeout, **(case.settings or {}))
    before = storage_digest(faulty_live.storage)
    started = time.monotonic()
    with caplog.at_level(logging.INFO), case.breaks(faulty_live):
        outcome, seen = _resolve_through(door, api)
    elapsed = time.monotonic() - started

    assert outcome["error"]["code"] == "calendar_unavailable"
    assert outcome["error"]["details"]["reason"] in case.reasons
    assert outcome.get("http_status", 503) == 503 and outcome.get("exit_code", 4) == 4
    _assert_clean(seen, faulty_live)
    # The log says what failed, without the server's page, our secrets or a stack.
    for record in caplog.records:
        _assert_clean(record.getMessage(), faulty_live)
        assert record.exc_info is None or not record.name.startswith("resolver"), record.getMessage()
    if case.slow:
        # The resolver did not wait for the slow server.
        assert elapsed < SLOW_DELAY
    assert faulty_live.writes() == []
    assert storage_digest(faulty_live.storage) == before


@pytest.mark.parametrize("case", [CASES[0], CASES[6], CASES[9]], ids=lambda case: case.name)
def test_fault__command_plain_output(faulty_live: FaultyRadicale, settings, case: Case) -> None:
    """Without --json the command prints one error line on stderr and nothing on stdout."""
    settings.RESOLVER = faulty_live.settings(CALDAV_TIMEOUT=case.timeout, **(case.settings or {}))
    with case.breaks(faulty_live):
        result = run_command("--text", "Alpha task", "--kind", "task", "--collection", MAIN)
    assert result.code == 4
    assert result.stdout == ""
    assert result.stderr.startswith("error: calendar_unavailable: ")
    assert result.stderr.count("\n") == 1
    _assert_clean(result.stderr, faulty_live)


def test_fault__recovers_when_the_server_comes_back(faulty_live: FaultyRadicale) -> None:
    """No state survives a failure: the next request after a fault resolves."""
    with faulty_live.inject(Fault.reset(methods={"REPORT"})), pytest.raises(CalendarUnavailable):
        resolve_outcome(text="Alpha task", kind="task", collection_ids=[MAIN], door="test")
    with faulty_live.stopped(), pytest.raises(CalendarUnavailable):
        resolve_outcome(text="Alpha task", kind="task", collection_ids=[MAIN], door="test")
    outcome = resolve_outcome(text="Alpha task", kind="task", collection_ids=[MAIN], door="test")
    assert outcome.item is not None and outcome.item.uid == "f-alpha"


def test_fault__list_collections_unavailable(faulty_live: FaultyRadicale, api) -> None:
    """GET /v1/collections and --list-collections fail the same way."""
    with faulty_live.inject(Fault.status_code(503)):
        response = api.get("/v1/collections")
        result = run_command("--list-collections", "--json")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "calendar_unavailable"
    _assert_clean(response.content.decode("utf-8"), faulty_live)
    assert result.code == 4 and result.envelope["error"]["code"] == "calendar_unavailable"
    _assert_clean(result.stdout + result.stderr, faulty_live)
