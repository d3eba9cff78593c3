"""The real Jev adapter against the scripted loopback server: real sockets, real time."""
from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from resolver.domain.judgment import (
    NO_MATCH,
    QUESTION_NAME,
    CandidateFacts,
    Judgment,
    JudgmentUnavailable,
    Question,
    ThresholdRule,
    build_question,
    decide,
)
from resolver.judges.jev import JevJudge
from tests.support.jev_contract_server import (
    DEFAULT_MODEL,
    JevContractServer,
    decisive,
    defective,
    no_match,
    not_json,
    responder,
    slow,
    status,
    tie,
    uniform,
)

RULE = ThresholdRule(threshold=0.8, margin=0.1)


@pytest.fixture
def question() -> Question:
    candidates = [
        CandidateFacts(title="Weekly sync", collection="work", status="NEEDS-ACTION", due="2025-03-14"),
        CandidateFacts(title="Weekly review", collection="work", status="NEEDS-ACTION", due="2025-03-15"),
        CandidateFacts(title="Sync 3 laptops", collection="home", status=None),
    ]
    return build_question(reference="weekly sync", kind="task", candidates=candidates)


@pytest.fixture
def jev() -> Any:
    with JevContractServer() as server:
        yield server


def judge_for(url: str, *, api_key: str = "", budget: float = 5.0, read_timeout: float = 2.0) -> JevJudge:
    return JevJudge(base_url=url, api_key=api_key, model="jev-latest", connect_timeout=1.0,
                    read_timeout=read_timeout, budget_seconds=budget)


def test_decisive__resolves_with_the_reported_model(jev: JevContractServer, question: Question) -> None:
    jev.push(decisive(2, p=0.94))
    result = judge_for(jev.url, api_key="k-1").judge(question, request_id="req-c-1")
    assert isinstance(result, Judgment)
    assert (result.model, result.choice, result.attempts) == (DEFAULT_MODEL, "2", 1)
    assert result.probabilities["2"] == pytest.approx(0.94)
    assert sum(result.probabilities.values()) == pytest.approx(1.0)
    assert result.server_request_id is not None and result.server_request_id.startswith("req_contract_")
    decision = decide(result, RULE)
    assert (decision.resolved_number, decision.reason) == (2, "approved_threshold_met")


def test_requests__are_recorded_with_headers_and_body(jev: JevContractServer, question: Question) -> None:
    judge_for(jev.url, api_key="k-1").judge(question, request_id="req-c-2")
    (recorded,) = jev.requests
    assert (recorded.method, recorded.path) == ("POST", "/v1/systemone")
    assert recorded.headers["x-request-id"] == "req-c-2"
    assert recorded.headers["authorization"] == "Bearer k-1"
    assert recorded.headers["content-type"] == "application/json"
    assert recorded.json == question.request_payload("jev-latest")


def test_tie__is_not_resolved(jev: JevContractServer, question: Question) -> None:
    jev.push(tie(1, 2))
    result = judge_for(jev.url).judge(question, request_id="r")
    assert isinstance(result, Judgment)
    assert result.probabilities["1"] == result.probabilities["2"]
    assert decide(result, ThresholdRule(threshold=0.0, margin=0.0)).reason == "tie"


def test_no_match__is_not_resolved(jev: JevContractServer, question: Question) -> None:
    jev.push(no_match(0.9))
    result = judge_for(jev.url).judge(question, request_id="r")
    assert isinstance(result, Judgment)
    assert result.choice == NO_MATCH
    assert decide(result, RULE).reason == "no_match_on_top"


@pytest.mark.parametrize(
    "kind", ["missing_answer", "unknown_choice", "bad_sum", "out_of_range", "unknown_key", "wrong_type", "missing_model"]
)
def test_defective__is_unavailable_without_retry(jev: JevContractServer, question: Question, kind: str) -> None:
    jev.push(defective(kind))
    result = judge_for(jev.url).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable)
    assert (result.reason, result.detail, result.attempts) == ("defective_response", kind, 1)
    assert len(jev.requests) == 1


def test_slow__times_out_within_the_budget(jev: JevContractServer, question: Question) -> None:
    jev.push(slow(5.0), slow(5.0), slow(5.0))
    began = time.monotonic()
    result = judge_for(jev.url, budget=1.0, read_timeout=6.0).judge(question, request_id="r")
    elapsed = time.monotonic() - began
    assert isinstance(result, JudgmentUnavailable)
    assert result.reason == "timeout"
    assert result.attempts == 1
    assert 0.9 <= elapsed < 2.5  # the server would have taken 5 s


def test_slow__then_a_retry_succeeds(jev: JevContractServer, question: Question) -> None:
    jev.push(slow(3.0), decisive(3))
    result = judge_for(jev.url, budget=3.0, read_timeout=0.4).judge(question, request_id="r")
    assert isinstance(result, Judgment)
    assert (result.choice, result.attempts) == ("3", 2)


def test_429_with_retry_after_ms__waits_then_succeeds(jev: JevContractServer, question: Question) -> None:
    jev.push(status(429, {"retry-after-ms": "300"}), decisive(1))
    began = time.monotonic()
    result = judge_for(jev.url).judge(question, request_id="r")
    elapsed = time.monotonic() - began
    assert isinstance(result, Judgment)
    assert result.attempts == 2
    assert elapsed >= 0.3
    assert len(jev.requests) == 2


def test_429_with_a_long_retry_after__gives_up_at_once(jev: JevContractServer, question: Question) -> None:
    jev.push(status(429, {"Retry-After": "60"}))
    began = time.monotonic()
    result = judge_for(jev.url, budget=2.0).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable)
    assert (result.reason, result.attempts) == ("http_429", 1)
    assert time.monotonic() - began < 1.5


def test_529_then_not_json_then_answer(jev: JevContractServer, question: Question) -> None:
    jev.push(status(529, {"retry-after-ms": "10"}), not_json(), decisive(2))
    result = judge_for(jev.url).judge(question, request_id="r")
    assert isinstance(result, Judgment)
    assert result.attempts == 3


def test_auth__a_server_with_a_key_refuses_a_judge_without_one(question: Question) -> None:
    with JevContractServer(api_key="right") as jev:
        refused = judge_for(jev.url).judge(question, request_id="r")
        accepted = judge_for(jev.url, api_key="right").judge(question, request_id="r")
    assert isinstance(refused, JudgmentUnavailable)
    assert (refused.reason, refused.attempts) == ("http_401", 1)
    assert isinstance(accepted, Judgment)


def test_connection_refused__is_unavailable(question: Question) -> None:
    with JevContractServer() as jev:
        url = jev.url
    result = judge_for(url, budget=1.0).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable)
    assert result.reason == "connection_error"
    assert result.attempts >= 2


def test_default_and_uniform(question: Question) -> None:
    with JevContractServer(default=uniform(), model="jev-1.13.0") as jev:
        result = judge_for(jev.url).judge(question, request_id="r")
    assert isinstance(result, Judgment)
    assert result.model == "jev-1.13.0"
    assert set(result.probabilities.values()) == {0.25}
    assert decide(result, RULE).resolved_number is None


def test_responder__answers_per_case(jev: JevContractServer, question: Question) -> None:
    def answer_by_reference(request_json: Any) -> tuple[int, dict[str, str], dict[str, Any]]:
        wanted = "1" if request_json["state"]["user_reference"] == "weekly sync" else NO_MATCH
        options = list(request_json["questions"][QUESTION_NAME]["criteria"])
        probabilities = {o: (0.97 if o == wanted else 0.03 / (len(options) - 1)) for o in options}
        answer = {"type": "choice", "choice": wanted, "confidence": 0.9, "probabilities": probabilities}
        return 200, {}, {"answers": {QUESTION_NAME: answer}, "usage": {"input_tokens": 1, "output_tokens": 1}}

    jev.push(responder(answer_by_reference))
    result = judge_for(jev.url).judge(question, request_id="r")
    assert isinstance(result, Judgment)
    assert (result.choice, result.model) == ("1", DEFAULT_MODEL)


def test_server__rejects_a_malformed_request_with_422(jev: JevContractServer) -> None:
    """The server checks the documented request rules, so it can catch our mistakes."""
    bad = {"model": "jev-latest", "state": {},
           "questions": {"q": {"type": "choice", "instructions": "x", "criteria": {" 1": "a", "2": "b"}}}}
    response = requests.post(f"{jev.url}/v1/systemone", json=bad, timeout=5)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "questions.q.criteria"
    one_option = {"model": "m", "state": {}, "questions": {"q": {"type": "choice", "instructions": "x",
                                                                  "criteria": {"1": "a"}}}}
    assert requests.post(f"{jev.url}/v1/systemone", json=one_option, timeout=5).status_code == 422
    assert jev.pending == 0


def test_server__lists_models(jev: JevContractServer) -> None:
    response = requests.get(f"{jev.url}/v1/models", timeout=5)
    assert response.status_code == 200
    assert response.json()["models"][0]["name"] == DEFAULT_MODEL
    assert jev.requests[-1].path == "/v1/models"


def test_server__binds_loopback_only(jev: JevContractServer) -> None:
    assert jev.url.startswith("http://127.0.0.1:")
