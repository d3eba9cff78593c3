"""manage.py evaluate_reference_match through the OpenAI-compatible backend, on the hand-computed set.

The scripted chat server answers every case with the hand set's top option and
gives the answer's value token the hand set's distribution as log-probabilities,
so the report must reproduce tests/evaluation/scripted.py's numbers exactly.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from resolver.domain import chat
from resolver.domain.judgment import NO_MATCH
from resolver.models import ApprovedThreshold
from resolver.domain.judgment import with_retrieval
from resolver.rankers import deployed_retrieval
from resolver.judges.registry import judges
from tests.evaluation.scripted import (
    ALPHA,
    ANSWERS,
    CERTIFIED,
    DELTA,
    EXPECTED_POINTS,
    distribution,
    fresh_jev_session,
    point,
    read_report,
    run_command,
    write_hand_set,
)
from tests.support import openai_contract_server as oai
from tests.support.jev_contract_server import Reply


def _state(request_json: Any) -> dict[str, Any]:
    user = request_json["messages"][1]["content"]
    return json.loads(user.split(chat.DATA_OPEN + "\n", 1)[1].rsplit("\n" + chat.DATA_CLOSE, 1)[0])


def hand_set_chat() -> oai.Behaviour:
    """Answer each case as the hand set says; log-probabilities only when the server sends them."""

    def behaviour(request_json: Any, model: str, logprobs: bool) -> Reply:
        state = _state(request_json)
        answer = ANSWERS[state["user_reference"]]
        options = [str(c["candidate_number"]) for c in state["candidates"]] + [NO_MATCH]
        probabilities = distribution(options, answer)
        value = "null" if answer[0] == NO_MATCH else answer[0]
        content = f'{oai.VALUE_PREFIX}{value}, "no_match": {"true" if value == "null" else "false"}}}'
        alternatives = {("null" if key == NO_MATCH else key): p for key, p in probabilities.items()}
        tokens = oai._tokens(content, value, alternatives) if logprobs else None
        return oai._completion(content, model, tokens)

    return behaviour


@pytest.fixture
def server(settings: Any, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Any]:
    fresh_jev_session(monkeypatch)
    judges().clear()
    logprobs = getattr(request, "param", True)
    with oai.OpenAIContractServer(default=hand_set_chat(), logprobs=logprobs) as running:
        settings.RESOLVER = {"JUDGE_BACKEND": "resolver.judges.openai.OpenAIJudge", "OPENAI_BASE_URL": running.url,
                             "OPENAI_MODEL": "local-model", "JUDGMENT_BUDGET_SECONDS": 2.0, "JEV_READ_TIMEOUT": 1.0}
        yield running


def evaluate(tmp_path: Path, *extra: str) -> tuple[int, str, str, Path]:
    out = tmp_path / "out"
    code, stdout, stderr = run_command("--cases", str(write_hand_set(tmp_path / "hand.jsonl")), "--out", str(out),
                                       "--alpha", ALPHA, "--delta", DELTA, *extra)
    return code, stdout, stderr, out


def test_openai__metrics_and_certificate_match_the_hand_computation(server: Any, tmp_path: Path) -> None:
    code, _, stderr, out = evaluate(tmp_path)
    assert code == 0, stderr
    report = read_report(out)
    for threshold, (admitted, errors, no_match_resolved, _) in EXPECTED_POINTS.items():
        p = point(report, threshold)
        assert (p["admitted"], p["errors"], p["no_match_resolved"]) == (admitted, errors, no_match_resolved)
    assert report["certificate"]["threshold"] == CERTIFIED
    meta = report["meta"]
    assert (meta["backend"], meta["probability_source"], meta["fingerprint"], meta["model"]) == (
        "openai", "logprobs", with_retrieval(chat.chat_fingerprint(), deployed_retrieval()), oai.DEFAULT_MODEL)
    assert len(server.chat_requests) == 12


@pytest.mark.django_db
def test_openai__propose_stores_the_backend(server: Any, tmp_path: Path) -> None:
    code, _, stderr, _ = evaluate(tmp_path, "--propose")
    assert code == 0, stderr
    row = ApprovedThreshold.objects.get()
    assert (row.backend, row.probability_source, row.fingerprint, row.active) == (
        "openai", "logprobs", with_retrieval(chat.chat_fingerprint(), deployed_retrieval()), False)
    assert row.threshold == CERTIFIED


@pytest.mark.django_db
@pytest.mark.parametrize("server", [False], indirect=True)
def test_openai_without_logprobs__advice_only_certifies_nothing(server: Any, tmp_path: Path) -> None:
    code, _, stderr, out = evaluate(tmp_path, "--propose")
    assert code == 0, stderr
    report = read_report(out)
    assert report["certificate"]["threshold"] is None
    assert "advice only" in report["certificate"]["refusal"]
    assert report["meta"]["probability_source"] == "none"
    assert "nothing proposed" in stderr and not ApprovedThreshold.objects.exists()


def test_judge_off__exit_5(settings: Any, tmp_path: Path) -> None:
    settings.RESOLVER = {"JUDGE_BACKEND": "resolver.judges.disabled.DisabledJudge"}
    code, _, stderr, _ = evaluate(tmp_path)
    assert code == 5 and "RESOLVER_JUDGE=openai" in stderr
