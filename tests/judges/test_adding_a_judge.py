"""docs/judge.md, "Adding a judge": the page's example judge (tests/judges/acme.py) works as the page says.

Configured by RESOLVER["JUDGE_BACKEND"] alone, it passes the system checks,
resolves a reference through the services, and its thresholds can be
approved and then resolve on confidence.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import responses
from django.contrib.auth import get_user_model
from django.utils import timezone as django_timezone

from resolver import checks, services, thresholds
from resolver.domain.judgment import NO_MATCH, QUESTION_NAME
from resolver.domain.pipeline import Status
from resolver.models import ApprovedThreshold
from tests.judges import acme
from tests.support import memory_backend

pytestmark = pytest.mark.django_db

URL = "https://acme.test/v1/judge"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "judge.md"
CALLER = services.Caller(door="test", user=dataclasses.make_dataclass("User", ["pk"])(1),
                         base_url="https://r.example/")


@pytest.fixture
def acme_settings(settings: Any) -> Any:
    settings.RESOLVER = {
        "CALENDAR_BACKEND": memory_backend.PATH, "SEMANTIC": False,
        "JUDGE_BACKEND": "tests.judges.acme.AcmeJudge",
        "JUDGE_OPTIONS": {"base_url": "https://acme.test", "model": "acme-2", "api_key": "k-acme"},
    }
    with memory_backend.holding_two_tasks():
        yield settings


def answer_for(title: str, p: float = 0.95) -> Any:
    """A callback answering, like Acme's service, the candidate with this title with probability p."""
    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        sent = json.loads(request.body)
        assert sent["instructions"] == acme.INSTRUCTIONS and sent["model"] == "acme-2"
        number = next(str(c["candidate_number"]) for c in sent["state"]["candidates"] if c["title"] == title)
        probabilities = {key: 0.0 for key in sent["questions"][QUESTION_NAME]["criteria"]}
        probabilities.update({number: p, NO_MATCH: round(1.0 - p, 6)})
        body = {"model": "acme-2.1", "answers": {QUESTION_NAME: {"type": "choice", "choice": number,
                                                                  "probabilities": probabilities}}}
        return 200, {"x-acme-request-id": "acme-req-1"}, json.dumps(body)
    return answer


def test_docs__the_example_is_the_tested_judge() -> None:
    """The page's example is this suite's judge, character for character."""
    page = DOCS.read_text(encoding="utf-8")
    section = page.split("## Adding a judge", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert example == Path(acme.__file__).read_text(encoding="utf-8")


def test_adding_a_judge__passes_the_system_checks(acme_settings: Any) -> None:
    assert checks.check_backend_contracts() == [] and checks.check_resolver_settings() == []


@responses.activate
def test_adding_a_judge__resolves_through_the_services(acme_settings: Any) -> None:
    responses.add_callback(responses.POST, URL, callback=answer_for("Review portfolio slides"))
    answer = services.answer({"text": "portfolio", "kind": "task"}, caller=CALLER)
    assert answer.status is Status.NEEDS_CLARIFICATION  # no threshold approved: a suggestion
    first = answer.envelope["data"]["candidates"][0]
    assert (first["uid"], first["suggested"], first["probability"]) == ("t2", True, pytest.approx(0.95))
    provenance = answer.envelope["data"]["judgment_provenance"]
    assert (provenance["backend"], provenance["model"], provenance["jev_request_id"]) == ("acme", "acme-2.1",
                                                                                        "acme-req-1")
    assert provenance["fingerprint"] == thresholds.current_fingerprint("acme")
    assert responses.calls[0].request.headers["Authorization"] == "Bearer k-acme"


@responses.activate
def test_adding_a_judge__its_thresholds_are_approved_and_resolve(acme_settings: Any) -> None:
    fingerprint = thresholds.current_fingerprint("acme")
    assert fingerprint is not None and services.judge_from_settings().fingerprint == acme.acme_fingerprint()
    row = ApprovedThreshold.objects.create(
        model="acme-2.1", fingerprint=fingerprint, backend="acme", probability_source="service", threshold=0.9,
        cases=400, admitted_accuracy=0.99, coverage=0.7, evaluated_at=django_timezone.now())
    staff = get_user_model().objects.create_user("staff", is_staff=True)
    assert thresholds.approve_thresholds(rows=[row], user=staff).approved == (row.pk,)

    responses.add_callback(responses.POST, URL, callback=answer_for("Review portfolio slides"))
    answer = services.answer({"text": "portfolio", "kind": "task"}, caller=CALLER)
    assert answer.status is Status.OK and answer.envelope["data"]["uid"] == "t2"
    assert answer.envelope["data"]["judgment_provenance"]["threshold_id"] == row.pk


@responses.activate
def test_adding_a_judge__retries_through_the_one_loop(acme_settings: Any) -> None:
    responses.add(responses.POST, URL, status=503, headers={"Retry-After": "0"})
    responses.add_callback(responses.POST, URL, callback=answer_for("Draft portfolio outline"))
    judgment = services.judge_from_settings().judge(_question(), request_id="r1")
    assert judgment.attempts == 2 and len(responses.calls) == 2


def _question() -> Any:
    from resolver.domain.judgment import CandidateFacts, build_question

    return build_question(reference="portfolio", kind="task", candidates=[
        CandidateFacts(title="Draft portfolio outline", collection="work", status=None),
        CandidateFacts(title="Review portfolio slides", collection="work", status=None)])


@responses.activate
def test_adding_a_judge__evaluated_and_proposed_like_any_judge(acme_settings: Any, tmp_path: Path) -> None:
    """manage.py evaluate_reference_match --propose: a threshold under its backend and fingerprint, approvable."""
    from tests.evaluation import scripted

    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        sent = json.loads(request.body)
        body = scripted.answer_body(sent, scripted.ANSWERS[sent["state"]["user_reference"]])
        return 200, {}, json.dumps({**body, "model": "acme-2.1"})

    responses.add_callback(responses.POST, URL, callback=answer)
    code, _, stderr = scripted.run_command("--cases", str(scripted.write_hand_set(tmp_path / "hand.jsonl")),
                                           "--out", str(tmp_path / "out"), "--alpha", scripted.ALPHA,
                                           "--delta", scripted.DELTA, "--propose")
    assert code == 0, stderr
    row = ApprovedThreshold.objects.get()
    assert (row.backend, row.model, row.active) == ("acme", "acme-2.1", False)
    assert row.fingerprint == thresholds.current_fingerprint("acme")
    staff = get_user_model().objects.create_user("staff", is_staff=True)
    assert thresholds.approve_thresholds(rows=[row], user=staff).approved == (row.pk,)
