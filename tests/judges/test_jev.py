"""The Jev judge (resolver/judges/jev.py) over its HTTP exchange (resolver/judges/http.py), without a server.

With `responses` and a fake clock: the request it sends, retries within the
budget, defective answers, logs without secrets, one session per process,
and how settings pick a judge. The disabled judge's own tests are in
tests/judges/test_disabled.py, the retry hints' in tests/judges/test_http.py.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import pytest
import requests
import responses
from django.test import override_settings

from resolver.domain.judgment import (
    NO_MATCH,
    QUESTION_NAME,
    CandidateFacts,
    Judgment,
    JudgmentUnavailable,
    Question,
    build_question,
)
from resolver.conf import resolver_settings
from resolver.judges import DisabledJudge, JevJudge, Judge
from resolver.judges.http import JudgeConnections
from resolver.judges.registry import judges

BASE = "https://jev.test"
URL = f"{BASE}/v1/systemone"
KEY = "sk-test-very-secret-0123456789"
REFERENCE = "the zebra-striped quarterly thing"


class FakeTime:
    """A clock that only moves when the judge sleeps (or a test says so)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def question() -> Question:
    candidates = [
        CandidateFacts(title="Quarterly report", collection="work", status="NEEDS-ACTION", due="2025-03-31"),
        CandidateFacts(title="Zebra crossing survey", collection="home", status=None),
    ]
    return build_question(reference=REFERENCE, kind="task", candidates=candidates)


def make_judge(fake_time: FakeTime, **overrides: Any) -> JevJudge:
    options: dict[str, Any] = dict(
        base_url=BASE,
        api_key=KEY,
        model="jev-latest",
        connect_timeout=3.05,
        read_timeout=6.0,
        budget_seconds=8.0,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
    )
    options.update(overrides)
    return JevJudge(**options)


def answer_body(choice: str = "2", model: str = "jev-1.13.0") -> dict[str, Any]:
    probabilities = {"1": 0.03, "2": 0.03, NO_MATCH: 0.03}
    probabilities[choice] = 0.94
    return {
        "model": model,
        "answers": {QUESTION_NAME: {"type": "choice", "choice": choice, "confidence": 0.8,
                                    "probabilities": probabilities}},
        "usage": {"input_tokens": 100, "output_tokens": 1},
    }


def add_ok(choice: str = "2", request_id: str = "req_jev_1") -> None:
    responses.add(responses.POST, URL, json=answer_body(choice), headers={"x-typesafe-request-id": request_id})


# -- the request ------------------------------------------------------------------

@responses.activate
def test_judge__sends_the_question_with_bearer_and_request_id(fake_time: FakeTime, question: Question) -> None:
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="req-abc-123")
    assert isinstance(result, Judgment)
    assert len(responses.calls) == 1
    sent = responses.calls[0].request
    assert sent.url == URL
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert sent.headers["X-Request-Id"] == "req-abc-123"
    assert sent.headers["Content-Type"] == "application/json"
    assert json.loads(sent.body) == question.request_payload("jev-latest")
    assert sent.req_kwargs["timeout"] == (3.05, 6.0)


@responses.activate
def test_judge__omits_authorization_without_a_key(fake_time: FakeTime, question: Question) -> None:
    add_ok()
    make_judge(fake_time, api_key="", base_url=BASE + "/").judge(question, request_id="r1")
    sent = responses.calls[0].request
    assert sent.url == URL
    assert "Authorization" not in sent.headers


@responses.activate
def test_judge__request_id_header_is_made_header_safe(fake_time: FakeTime, question: Question) -> None:
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="req\r\nX-Evil: 1")
    assert isinstance(result, Judgment)
    assert responses.calls[0].request.headers["X-Request-Id"] == "reqX-Evil:1"


@responses.activate
def test_judge__timeout_never_exceeds_the_budget(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, status=429, headers={"retry-after-ms": "1500"})
    add_ok()
    result = make_judge(fake_time, budget_seconds=4.0).judge(question, request_id="r1")
    assert isinstance(result, Judgment)
    assert responses.calls[0].request.req_kwargs["timeout"] == (3.05, 4.0)
    assert responses.calls[1].request.req_kwargs["timeout"] == (2.5, 2.5)


# -- a good answer ---------------------------------------------------------------

@responses.activate
def test_judge__returns_the_judgment_as_the_response_reports_it(fake_time: FakeTime, question: Question) -> None:
    def slow_ok(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        fake_time.now += 0.321
        return 200, {"x-typesafe-request-id": "req_jev_42"}, json.dumps(answer_body("1", model="jev-1.13.0"))

    responses.add_callback(responses.POST, URL, callback=slow_ok)
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert result == Judgment(
        model="jev-1.13.0",
        choice="1",
        probabilities={"1": 0.94, "2": 0.03, NO_MATCH: 0.03},
        server_request_id="req_jev_42",
        backend="jev",
        latency_ms=321,
        attempts=1,
    )


# -- retries -----------------------------------------------------------------------

@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 529])
@responses.activate
def test_judge__retries_transient_statuses(fake_time: FakeTime, question: Question, status: int) -> None:
    responses.add(responses.POST, URL, status=status, json={"error": {"message": "busy", "field": None}})
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, Judgment)
    assert result.attempts == 2
    assert len(responses.calls) == 2
    assert fake_time.sleeps == [0.25]


@pytest.mark.parametrize(
    ("error", "reason"),
    [(requests.ConnectionError("refused"), "connection_error"), (requests.ReadTimeout("slow"), "timeout"),
     (requests.ConnectTimeout("slow"), "timeout")],
)
@responses.activate
def test_judge__retries_transport_failures(fake_time: FakeTime, question: Question, error: Exception, reason: str) -> None:
    responses.add(responses.POST, URL, body=error)
    responses.add(responses.POST, URL, body=error)
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, Judgment)
    assert result.attempts == 3
    assert fake_time.sleeps == [0.25, 0.5]


@pytest.mark.parametrize(
    ("error", "reason"),
    [(requests.ConnectionError("refused"), "connection_error"), (requests.ReadTimeout("slow"), "timeout")],
)
@responses.activate
def test_judge__gives_up_with_the_last_transport_reason(fake_time: FakeTime, question: Question, error: Exception, reason: str) -> None:
    for _ in range(20):
        responses.add(responses.POST, URL, body=error)
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert result.reason == reason


@responses.activate
def test_judge__retries_a_200_that_is_not_json(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, body="<html>gateway</html>", content_type="text/html")
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, Judgment)
    assert result.attempts == 2


@responses.activate
def test_judge__not_json_every_time_ends_as_not_json(fake_time: FakeTime, question: Question) -> None:
    for _ in range(20):
        responses.add(responses.POST, URL, body="<html>gateway</html>", content_type="text/html")
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert result.reason == "not_json"


@responses.activate
def test_judge__honours_retry_after_ms(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, status=429, headers={"retry-after-ms": "1234", "Retry-After": "5"})
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, Judgment)
    assert fake_time.sleeps == [1.234]


@responses.activate
def test_judge__honours_retry_after_seconds(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, status=503, headers={"Retry-After": "2"})
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, Judgment)
    assert fake_time.sleeps == [2.0]


@responses.activate
def test_judge__does_not_sleep_past_the_budget(fake_time: FakeTime, question: Question) -> None:
    """A retry hint longer than the budget left ends the judgment at once."""
    responses.add(responses.POST, URL, status=429, headers={"Retry-After": "30"})
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert (result.reason, result.attempts) == ("http_429", 1)
    assert fake_time.sleeps == []
    assert len(responses.calls) == 1


@responses.activate
def test_judge__backoff_doubles_and_the_budget_bounds_the_attempts(fake_time: FakeTime, question: Question) -> None:
    for _ in range(50):
        responses.add(responses.POST, URL, status=503)
    result = make_judge(fake_time, budget_seconds=8.0).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert result.reason == "http_503"
    # 0.25 + 0.5 + 1 + 2 + 4 = 7.75 s of sleep; the next wait (8 s) would pass the budget.
    assert fake_time.sleeps == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert result.attempts == len(responses.calls) == 6
    assert result.latency_ms == 7750
    assert sum(fake_time.sleeps) < 8.0


@responses.activate
def test_judge__slow_attempts_use_up_the_budget(fake_time: FakeTime, question: Question) -> None:
    def slow_failure(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        fake_time.now += 3.0
        return 503, {}, "{}"

    responses.add_callback(responses.POST, URL, callback=slow_failure)
    result = make_judge(fake_time, budget_seconds=8.0).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    # 3 s + 0.25 + 3 s + 0.5 + 3 s = 9.75 > 8: the third attempt starts at 6.75 s and is the last.
    assert result.attempts == 3
    assert fake_time.sleeps == [0.25, 0.5]


@responses.activate
def test_judge__no_budget_no_call(fake_time: FakeTime, question: Question) -> None:
    result = make_judge(fake_time, budget_seconds=0.0).judge(question, request_id="r1")
    assert result == JudgmentUnavailable(reason="budget_exhausted", attempts=0, latency_ms=0,
                                         detail="judgment budget exhausted")
    assert len(responses.calls) == 0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
@responses.activate
def test_judge__does_not_retry_client_errors(fake_time: FakeTime, question: Question, status: int) -> None:
    responses.add(responses.POST, URL, status=status, json={"error": {"message": "no", "field": "model"}},
                  headers={"retry-after-ms": "10"})
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert (result.reason, result.attempts) == (f"http_{status}", 1)
    assert len(responses.calls) == 1
    assert fake_time.sleeps == []


# -- defective answers ---------------------------------------------------------------

def _defect(kind: str) -> dict[str, Any]:
    body = answer_body("2")
    answer = body["answers"][QUESTION_NAME]
    if kind == "missing_answer":
        body["answers"] = {}
    elif kind == "unknown_choice":
        answer["choice"] = "7"
    elif kind == "bad_sum":
        answer["probabilities"] = {"1": 0.5, "2": 0.9, NO_MATCH: 0.5}
    elif kind == "out_of_range":
        answer["probabilities"] = {"1": -0.5, "2": 1.5, NO_MATCH: 0.0}
    elif kind == "unknown_key":
        answer["probabilities"]["3"] = 0.0
    elif kind == "wrong_type":
        answer["type"] = "noul"
    elif kind == "missing_model":
        del body["model"]
    return body


@pytest.mark.parametrize(
    "kind", ["missing_answer", "unknown_choice", "bad_sum", "out_of_range", "unknown_key", "wrong_type", "missing_model"]
)
@responses.activate
def test_judge__a_defective_answer_is_unavailable_and_not_retried(fake_time: FakeTime, question: Question, kind: str) -> None:
    responses.add(responses.POST, URL, json=_defect(kind))
    add_ok()
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert (result.reason, result.detail, result.attempts) == ("defective_response", kind, 1)
    assert len(responses.calls) == 1


@responses.activate
def test_judge__a_json_array_is_defective(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, json=[1, 2, 3])
    result = make_judge(fake_time).judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert (result.reason, result.detail) == ("defective_response", "not_object")


# -- never raises, never leaks ----------------------------------------------------------

def test_judge__an_internal_error_becomes_unavailable(fake_time: FakeTime, question: Question, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_session() -> requests.Session:
        raise RuntimeError(f"boom {KEY}")

    judge = dataclasses.replace(make_judge(fake_time), connections=JudgeConnections(session_factory=broken_session))
    result = judge.judge(question, request_id="r1")
    assert isinstance(result, JudgmentUnavailable)
    assert result.reason == "internal_error"
    assert KEY not in repr(result)


def test_judge__repr_never_shows_the_key(fake_time: FakeTime) -> None:
    judge = make_judge(fake_time)
    assert KEY not in repr(judge)
    assert KEY not in str(judge)
    assert "jev-latest" in repr(judge)


@responses.activate
def test_judge__logs_one_line_per_attempt_without_secrets_or_text(
    fake_time: FakeTime, question: Question, caplog: pytest.LogCaptureFixture
) -> None:
    responses.add(responses.POST, URL, status=503)
    responses.add(responses.POST, URL, json=_defect("bad_sum"))
    caplog.set_level(logging.DEBUG)
    result = make_judge(fake_time).judge(question, request_id="req-log-1")
    assert isinstance(result, JudgmentUnavailable)
    lines = [r for r in caplog.records if r.name == "resolver.judges"]
    assert len(lines) == 2
    assert "status=503" in lines[0].getMessage()
    assert "status=200 outcome=defective_response" in lines[1].getMessage()
    assert all("request_id=req-log-1" in r.getMessage() for r in lines)
    for secret in (KEY, REFERENCE, "Quarterly report", "Zebra"):
        assert secret not in caplog.text
        assert secret not in result.detail


def test_session__is_shared_per_process(fake_time: FakeTime) -> None:
    """One Session per judge, and one judge per configuration in the process's registry."""
    judge = judges().shared(make_judge(fake_time))
    assert judges().shared(make_judge(fake_time)) is judge
    assert judge.connections.session() is judge.connections.session()
    assert isinstance(judge.connections.session(), requests.Session)


def test_judges__satisfy_the_protocol(fake_time: FakeTime) -> None:
    assert isinstance(make_judge(fake_time), Judge)
    assert isinstance(DisabledJudge(), Judge)


# -- settings ------------------------------------------------------------------------------

def test_judge_from_settings__disabled_without_key_or_url() -> None:
    with override_settings(RESOLVER={"TYPESAFE_API_KEY": "", "TYPESAFE_BASE_URL": ""}):
        assert isinstance(JevJudge.from_settings(resolver_settings), DisabledJudge)


def test_judge_from_settings__key_only_uses_the_public_endpoint() -> None:
    settings = {"TYPESAFE_API_KEY": KEY, "TYPESAFE_BASE_URL": "", "TYPESAFE_DEFAULT_MODEL": "jev-preview",
                "JEV_CONNECT_TIMEOUT": 1.5, "JEV_READ_TIMEOUT": 4.0, "JUDGMENT_BUDGET_SECONDS": 5.0}
    with override_settings(RESOLVER=settings):
        judge = JevJudge.from_settings(resolver_settings)
    assert isinstance(judge, JevJudge)
    assert judge.url == "https://api.typesafe.ai/v1/systemone"
    assert (judge.api_key, judge.model) == (KEY, "jev-preview")
    assert (judge.connect_timeout, judge.read_timeout, judge.budget_seconds) == (1.5, 4.0, 5.0)


def test_judge_from_settings__url_only_runs_without_a_key() -> None:
    with override_settings(RESOLVER={"TYPESAFE_API_KEY": "", "TYPESAFE_BASE_URL": "http://127.0.0.1:9/"}):
        judge = JevJudge.from_settings(resolver_settings)
    assert isinstance(judge, JevJudge)
    assert judge.url == "http://127.0.0.1:9/v1/systemone"
    assert judge.api_key == ""
    assert judge.model == "jev-latest"
