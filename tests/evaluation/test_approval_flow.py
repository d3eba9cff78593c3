"""Issue 7 end to end: evaluate, propose, approve in the admin, resolve on confidence.

The evaluation runs against the loopback contract server answering the
hand-computed set (tests/evaluation/scripted.py: certified threshold 0.79);
resolution goes through `POST /v1/resolve` against the test Radicale, with the
same contract server (same reported model) answering the live question.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver.domain import judgment
from resolver.domain.judgment import QUESTION_ID, question_fingerprint
from resolver.evaluation.runner import EXIT_INCOMPLETE, EXIT_INVALID
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint
from tests.evaluation.scripted import (
    ALPHA,
    CERTIFIED,
    DELTA,
    fresh_jev_session,
    hand_set_responder,
    read_report,
    run_command,
    write_hand_set,
)
from tests.support.jev_contract_server import DEFAULT_MODEL, JevContractServer, decisive

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:resolver_approvedthreshold_changelist"


@pytest.fixture
def jev(monkeypatch) -> Iterator[JevContractServer]:
    fresh_jev_session(monkeypatch)
    with JevContractServer(default=hand_set_responder()) as server:
        yield server


@pytest.fixture
def configured(radicale, settings, jev) -> None:
    """One configuration for both doors: the command and the API read the same settings."""
    settings.RESOLVER = radicale.settings(TYPESAFE_BASE_URL=jev.url, JUDGMENT_BUDGET_SECONDS=2.0,
                                          JEV_READ_TIMEOUT=1.0)
    cache.clear()


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    return write_hand_set(tmp_path / "hand.jsonl")


@pytest.fixture
def api(configured) -> APIClient:
    user = get_user_model().objects.create_user("agent", password="pw-agent-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def operator() -> Client:
    user = get_user_model().objects.create_superuser("operator", password="pw-operator-123")
    client = Client()
    client.force_login(user)
    return client


def propose(cases: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_command("--cases", str(cases), "--out", str(out), "--alpha", ALPHA,
                       "--delta", DELTA, "--propose", *extra)


def approve_in_admin(client: Client, row: ApprovedThreshold) -> list[tuple[str, str]]:
    response = client.post(
        reverse(CHANGELIST),
        {"action": "approve_and_activate", ACTION_CHECKBOX_NAME: [row.pk]},
        follow=True,
    )
    assert response.status_code == 200
    return [(m.level_tag, str(m)) for m in get_messages(response.wsgi_request)]


def resolve(api: APIClient, text: str = "portfolio", kind: str = "task") -> dict[str, Any]:
    response = api.post("/v1/resolve", {"text": text, "kind": kind}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


# -- the proposal -----------------------------------------------------------------------

def test_propose__stores_an_inactive_threshold_with_its_evidence(configured, jev, cases, tmp_path) -> None:
    out = tmp_path / "out"
    code, _, stderr = propose(cases, out)
    assert code == 0
    row = ApprovedThreshold.objects.get()
    assert f"proposed threshold #{row.pk}: 0.79 for {DEFAULT_MODEL}" in stderr
    assert (row.active, row.approved_by, row.approved_at) == (False, None, None)
    assert (row.question, row.model, row.fingerprint) == (QUESTION_ID, DEFAULT_MODEL, current_fingerprint("jev"))
    # The hand-computed certificate at 0.79: 6 of 12 accepted, no error.
    assert (row.threshold, row.cases, row.coverage, row.admitted_accuracy) == (CERTIFIED, 6, 0.5, 1.0)
    assert row.risk_upper_bound == pytest.approx(1 - 0.025 ** (1 / 6))
    assert row.backend == "jev"
    assert bytes(row.plot_png) == (out / "risk_coverage.png").read_bytes()
    assert bytes(row.plot_png).startswith(b"\x89PNG\r\n\x1a\n")
    evidence = row.evidence
    assert evidence["cases_digest"] == hashlib.sha256(cases.read_bytes()).hexdigest()
    assert (evidence["n"], evidence["k"], evidence["case_count"]) == (6, 0, 12)
    assert (evidence["risk"], evidence["admitted_accuracy"], evidence["coverage"]) == (0.0, 1.0, 0.5)
    assert evidence["risk_upper_bound"] == row.risk_upper_bound
    assert (evidence["alpha"], evidence["delta"], evidence["margin"]) == (0.46, 0.025, 0.1)
    assert evidence["p_value"] == pytest.approx(0.54 ** 6, rel=1e-9)
    # The whole certificate, as the report holds it.
    assert evidence["certificate"] == read_report(out)["certificate"]
    assert (evidence["model"], evidence["fingerprint"]) == (row.model, row.fingerprint)
    assert evidence["generated_at"] == read_report(out)["meta"]["generated_at"]
    assert evidence["accuracy_by_tag"]["all"] == {"cases": 12, "correct": 9, "accuracy": 0.75, "settled": 0}


def test_propose__an_identical_second_run_adds_nothing(configured, jev, cases, tmp_path) -> None:
    propose(cases, tmp_path / "out")
    code, _, stderr = propose(cases, tmp_path / "out")
    assert code == 0
    assert ApprovedThreshold.objects.count() == 1
    assert "an identical proposal is already stored" in stderr


def test_propose__nothing_when_nothing_is_certified(configured, jev, cases, tmp_path) -> None:
    code, stdout, stderr = propose(cases, tmp_path / "out", "--alpha", "0.45")
    assert code == 0
    assert "**Not certified.**" in stdout
    assert "nothing certified: nothing proposed." in stderr
    assert not ApprovedThreshold.objects.exists()


def test_propose__nothing_from_an_incomplete_run(configured, jev, cases, tmp_path) -> None:
    jev.default = hand_set_responder(failing={"plants"})
    code, _, stderr = propose(cases, tmp_path / "out")
    assert code == EXIT_INCOMPLETE
    assert "the run is incomplete: nothing proposed." in stderr
    assert not ApprovedThreshold.objects.exists()


def test_propose__refuses_a_margin_the_pipeline_does_not_apply(configured, jev, cases, tmp_path) -> None:
    code, _, stderr = propose(cases, tmp_path / "out", "--margin", "0.2")
    assert code == EXIT_INVALID
    assert "--propose needs the margin the pipeline applies (0.10" in stderr
    assert jev.systemone_requests == [] and not ApprovedThreshold.objects.exists()


# -- approval and the pipeline --------------------------------------------------------------

def test_approval__activates_the_proposal_and_the_pipeline_resolves_on_confidence(
    api, jev, cases, tmp_path, operator
) -> None:
    propose(cases, tmp_path / "out")
    row = ApprovedThreshold.objects.get()

    # Proposed but not approved: a decisive answer is only a suggestion.
    jev.push(decisive(1, p=0.95))
    before = resolve(api)
    assert before["status"] == "needs_clarification" and before["data"]["candidates"][0]["suggested"] is True

    assert ("success", "Approved and activated 1 threshold(s).") in approve_in_admin(operator, row)
    row.refresh_from_db()
    assert row.active is True and row.approved_by.username == "operator" and row.approved_at is not None

    jev.push(decisive(1, p=0.95))
    body = resolve(api)
    assert body["status"] == "ok" and body["data"]["method"] == "semantic"
    live_question = jev.systemone_requests[-1].json
    assert body["data"]["title"] == live_question["state"]["candidates"][0]["title"]
    provenance = body["data"]["judgment_provenance"]
    assert (provenance["model"], provenance["fingerprint"]) == (row.model, row.fingerprint)

    # Below the approved 0.79 the user is asked again.
    jev.push(decisive(1, p=0.75))
    assert resolve(api)["status"] == "needs_clarification"


def test_approval__a_changed_fingerprint_blocks_it(api, jev, cases, tmp_path, operator, monkeypatch) -> None:
    # Evaluated under one wording of the question...
    with monkeypatch.context() as patch:
        patch.setattr(judgment, "INSTRUCTIONS", judgment.INSTRUCTIONS + " (an older wording)")
        propose(cases, tmp_path / "out")
        stale_fingerprint = current_fingerprint("jev")
    # ...and approved after the wording changed: the evidence no longer applies.
    row = ApprovedThreshold.objects.get()
    assert row.fingerprint == stale_fingerprint != current_fingerprint("jev")

    messages = approve_in_admin(operator, row)
    row.refresh_from_db()
    assert (row.active, row.approved_by, row.approved_at) == (False, None, None)
    assert messages == [("error", f"Threshold #{row.pk} was not approved: "
                                  "its fingerprint does not match the current question wording.")]

    jev.push(decisive(1, p=0.95))
    assert resolve(api)["status"] == "needs_clarification"
