"""HTTP edge cases of the OpenAI-compatible judge, with `responses`; and choosing the backend."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import requests
import responses
from django.test import override_settings

from resolver.domain.judgment import CandidateFacts, Judgment, JudgmentUnavailable, Question, build_question
from resolver.judges.disabled import DisabledJudge
from resolver.judges.jev import JevJudge
from resolver.judges.openai import OpenAIJudge
from resolver.services import judge_from_settings
from resolver.judges.registry import judges

BASE = "https://llm.test/v1"
URL = f"{BASE}/chat/completions"
KEY = "sk-openai-very-secret-0123456789"


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture(autouse=True)
def fresh_modes() -> Any:
    judges().clear()
    yield
    judges().clear()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def question() -> Question:
    facts = [CandidateFacts(title="Quarterly report", collection="work", status=None),
             CandidateFacts(title="Zebra survey", collection="home", status=None)]
    return build_question(reference="the quarterly thing", kind="task", candidates=facts)


def make_judge(fake_time: FakeTime, **overrides: Any) -> OpenAIJudge:
    options: dict[str, Any] = dict(base_url=BASE, api_key=KEY, model="gpt-test", connect_timeout=3.05,
                                   read_timeout=6.0, budget_seconds=8.0, sleep=fake_time.sleep,
                                   clock=fake_time.clock)
    options.update(overrides)
    return OpenAIJudge(**options)


def completion(content: str = '{"candidate_number": 2, "no_match": false}', model: str = "gpt-test-0613") -> dict:
    return {"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}


@responses.activate
def test_request__bearer_request_id_and_bounded_timeout(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, json=completion(), headers={"x-request-id": "srv-1"})
    result = make_judge(fake_time, budget_seconds=2.0).judge(question, request_id="req\r\nX-Evil: 1")
    assert isinstance(result, Judgment) and result.model == "gpt-test-0613"
    assert result.server_request_id == "srv-1"
    call = responses.calls[0].request
    assert call.headers["Authorization"] == f"Bearer {KEY}"
    assert call.headers["X-Request-Id"] == "reqX-Evil:1"
    assert call.req_kwargs["timeout"] == (2.0, 2.0)
    assert len(responses.calls) == 1


@responses.activate
def test_request__no_authorization_without_a_key(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, json=completion())
    make_judge(fake_time, api_key="").judge(question, request_id="r")
    assert "Authorization" not in responses.calls[0].request.headers


@responses.activate
@pytest.mark.parametrize("status", [408, 429, 500, 503, 529])
def test_transient_statuses__retried_with_backoff(fake_time: FakeTime, question: Question, status: int) -> None:
    responses.add(responses.POST, URL, status=status)
    responses.add(responses.POST, URL, json=completion())
    result = make_judge(fake_time).judge(question, request_id="r")
    assert isinstance(result, Judgment) and result.attempts == 2
    assert fake_time.sleeps == [0.25]


@responses.activate
def test_retry_after__honoured(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, status=429, headers={"retry-after": "1.5"})
    responses.add(responses.POST, URL, json=completion())
    make_judge(fake_time).judge(question, request_id="r")
    assert fake_time.sleeps == [1.5]


@responses.activate
def test_a_long_retry_after__gives_up_within_the_budget(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, status=429, headers={"retry-after": "30"})
    result = make_judge(fake_time).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable) and result.reason == "http_429"
    assert fake_time.sleeps == [] and len(responses.calls) == 1


@responses.activate
@pytest.mark.parametrize("error, reason", [(requests.ConnectTimeout(), "timeout"),
                                           (requests.ConnectionError(), "connection_error")])
def test_transport_failures__retried(fake_time: FakeTime, question: Question, error: Exception, reason: str) -> None:
    responses.add(responses.POST, URL, body=error)
    responses.add(responses.POST, URL, json=completion())
    assert isinstance(make_judge(fake_time).judge(question, request_id="r"), Judgment)


@responses.activate
@pytest.mark.parametrize("status", [401, 403, 404])
def test_client_errors__not_retried(fake_time: FakeTime, question: Question, status: int) -> None:
    responses.add(responses.POST, URL, status=status, json={"error": {"message": "no"}})
    result = make_judge(fake_time).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable) and result.reason == f"http_{status}"
    assert len(responses.calls) == 1


@responses.activate
def test_400_with_json_object_too__is_a_bug_not_retried(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, status=400, json={"error": {"message": "bad request"}})
    responses.add(responses.POST, URL, status=400, json={"error": {"message": "bad request"}})
    judge = make_judge(fake_time)
    result = judge.judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable) and result.reason == "http_400"
    sent = [json.loads(c.request.body)["response_format"]["type"] for c in responses.calls]
    assert sent == ["json_schema", "json_object"]
    # Nothing worked with json_object either: nothing is remembered.
    assert judge.response_mode() == "json_schema"


@responses.activate
def test_a_completion_without_model__is_defective(fake_time: FakeTime, question: Question) -> None:
    responses.add(responses.POST, URL, json={"choices": completion()["choices"]})
    result = make_judge(fake_time).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable) and result.detail == "missing_model"


@responses.activate
def test_corrections__stay_inside_the_budget(fake_time: FakeTime, question: Question) -> None:
    def slow_defective(request: requests.PreparedRequest) -> tuple[int, dict[str, str], str]:
        fake_time.now += 5.0
        return 200, {}, json.dumps(completion('{"candidate_number": 9, "no_match": false}'))

    responses.add_callback(responses.POST, URL, callback=slow_defective)
    result = make_judge(fake_time, corrections=5).judge(question, request_id="r")
    assert isinstance(result, JudgmentUnavailable)
    # 5 s each against an 8 s budget: the second answer ends it, not the five corrections.
    assert result.reason == "defective_response" and len(responses.calls) == 2


def test_logs__name_no_key_and_no_text(fake_time: FakeTime, question: Question, caplog: pytest.LogCaptureFixture) -> None:
    with responses.RequestsMock() as mocked, caplog.at_level("INFO", logger="resolver.judges"):
        mocked.add(responses.POST, URL, json=completion())
        make_judge(fake_time).judge(question, request_id="r-log")
    text = caplog.text
    assert "openai attempt=1 request_id=r-log status=200 outcome=ok" in text
    assert KEY not in text and "quarterly" not in text


# -- choosing the backend -----------------------------------------------------------------

@pytest.mark.parametrize("path, expected", [
    ("resolver.judges.openai.OpenAIJudge", OpenAIJudge),
    ("resolver.judges.jev.JevJudge", JevJudge),
    ("resolver.judges.disabled.DisabledJudge", DisabledJudge),
])
def test_judge_from_settings__imports_the_dotted_path(path: str, expected: type) -> None:
    config = {"JUDGE_BACKEND": path, "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "OPENAI_MODEL": "llama3.2",
              "TYPESAFE_BASE_URL": "http://127.0.0.1:9", "JUDGE_CORRECTIONS": 2}
    with override_settings(RESOLVER=config):
        judge = judge_from_settings()
    assert type(judge) is expected
    if isinstance(judge, OpenAIJudge):
        assert (judge.url, judge.model, judge.corrections) == ("http://127.0.0.1:11434/v1/chat/completions",
                                                               "llama3.2", 2)
        assert judge.api_key == ""


def test_openai_from_settings__off_without_base_url_or_model() -> None:
    with override_settings(RESOLVER={"JUDGE_BACKEND": "resolver.judges.openai.OpenAIJudge",
                                     "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_MODEL": ""}):
        assert isinstance(judge_from_settings(), DisabledJudge)


def _settings_backend(env: dict[str, str]) -> str:
    code = "import django.conf as c; from lifeproject import settings as s; print(s.RESOLVER['JUDGE_BACKEND'])"
    clean = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "lifeproject.settings", **env}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean, cwd=".")
    return run.stdout.strip() or run.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("env, expected", [
    ({}, "resolver.judges.disabled.DisabledJudge"),
    ({"TYPESAFE_API_KEY": "k"}, "resolver.judges.jev.JevJudge"),
    ({"RESOLVER_JUDGE": "openai"}, "resolver.judges.openai.OpenAIJudge"),
    ({"RESOLVER_JUDGE": "off", "TYPESAFE_API_KEY": "k"}, "resolver.judges.disabled.DisabledJudge"),
    ({"RESOLVER_JUDGE": "gpt"}, "ImproperlyConfigured"),
])
def test_settings__resolver_judge_maps_to_a_dotted_path(env: dict[str, str], expected: str) -> None:
    assert expected in _settings_backend(env)
