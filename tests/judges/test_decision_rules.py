"""The decision rules, end to end (API, pipeline, real Radicale), for both judge backends.

The same scenarios as tests/test_judgment_path.py, run against the scripted
Jev server and the scripted OpenAI-compatible server alike: one interface,
one set of rules.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver.domain import chat
from resolver.domain.judgment import QUESTION_ID, question_fingerprint
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint
from resolver.judges.registry import judges
from tests.support import jev_contract_server as jev
from tests.support import openai_contract_server as oai
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.django_db


@dataclass
class Backend:
    name: str
    server: Any
    settings: dict[str, Any]
    model: str
    fingerprint: str
    decisive: Callable[..., Any]
    tie: Callable[[int, int], Any]
    no_match: Callable[..., Any]
    defective: Callable[[], Any]

    def sent_titles(self, index: int = 0) -> list[str]:
        if self.name == "jev":
            state = self.server.systemone_requests[index].json["state"]
        else:
            import json

            user = self.server.chat_requests[index].json["messages"][1]["content"]
            state = json.loads(user.split(chat.DATA_OPEN + "\n", 1)[1].rsplit("\n" + chat.DATA_CLOSE, 1)[0])
        return [c["title"] for c in state["candidates"]]

    @property
    def calls(self) -> int:
        return len(self.server.systemone_requests if self.name == "jev" else self.server.chat_requests)


@pytest.fixture(params=["jev", "openai"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "jev":
        with jev.JevContractServer() as server:
            yield Backend(
                name="jev", server=server, model=jev.DEFAULT_MODEL, fingerprint=current_fingerprint("jev"),
                settings={"JUDGE_BACKEND": "resolver.judges.jev.JevJudge", "TYPESAFE_BASE_URL": server.url},
                decisive=lambda n, p=0.94: jev.decisive(n, p=p), tie=lambda a, b: jev.tie(a, b),
                no_match=lambda p=0.9: jev.no_match(p), defective=lambda: jev.defective("bad_sum"),
            )
    else:
        judges().clear()
        with oai.OpenAIContractServer() as server:
            yield Backend(
                name="openai", server=server, model=oai.DEFAULT_MODEL, fingerprint=current_fingerprint("openai"),
                settings={"JUDGE_BACKEND": "resolver.judges.openai.OpenAIJudge", "OPENAI_BASE_URL": server.url,
                          "OPENAI_MODEL": "local-model"},
                decisive=lambda n, p=0.94: oai.choose(n, p=p),
                tie=lambda a, b: oai.choose(a, p=0.45, others={str(b): 0.45, "null": 0.1}),
                no_match=lambda p=0.9: oai.choose(None, p=p),
                defective=lambda: oai.raw('{"candidate_number": 0, "no_match": false}'),
            )


@pytest.fixture
def api(radicale: Any, settings: Any, backend: Backend) -> APIClient:
    settings.RESOLVER = radicale.settings(JUDGMENT_BUDGET_SECONDS=2.0, JEV_READ_TIMEOUT=1.0, **backend.settings)
    cache.clear()
    user = get_user_model().objects.create_user("agent", password="pw-agent-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def resolve(api: APIClient, text: str, kind: str = "task") -> dict[str, Any]:
    response = api.post("/v1/resolve", {"text": text, "kind": kind}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def approve(backend: Backend, threshold: float, *, model: str | None = None, fingerprint: str | None = None,
            active: bool = True) -> ApprovedThreshold:
    now = datetime.now(timezone.utc)
    return ApprovedThreshold.objects.create(
        question=QUESTION_ID, model=model or backend.model, fingerprint=fingerprint or backend.fingerprint,
        threshold=threshold, cases=400, admitted_accuracy=0.99, coverage=0.7, risk_upper_bound=0.02,
        evaluated_at=now, active=active, approved_at=now if active else None,
    )


def test_exact_match__never_calls_the_judge(api: APIClient, backend: Backend) -> None:
    body = resolve(api, "Draft portfolio outline")
    assert body["status"] == "ok" and body["data"]["method"] == "deterministic"
    assert backend.calls == 0


def test_decisive_without_threshold__a_suggestion(api: APIClient, backend: Backend) -> None:
    backend.server.push(backend.decisive(2, p=0.95))
    body = resolve(api, "portfolio")
    data = body["data"]
    assert body["status"] == "needs_clarification" and data["method"] == "semantic"
    assert data["candidates"][0]["title"] == backend.sent_titles()[1]
    assert data["candidates"][0]["suggested"] is True
    assert data["candidates"][0]["probability"] == pytest.approx(0.95)
    prov = data["judgment_provenance"]
    assert (prov["backend"], prov["model"], prov["fingerprint"]) == (backend.name, backend.model, backend.fingerprint)
    assert prov["probability_source"] == ("service" if backend.name == "jev" else "logprobs")


def test_approved_threshold__resolves(api: APIClient, backend: Backend) -> None:
    approve(backend, 0.8)
    backend.server.push(backend.decisive(1, p=0.95))
    body = resolve(api, "portfolio")
    assert body["status"] == "ok" and body["data"]["method"] == "semantic"
    assert body["data"]["title"] == backend.sent_titles()[0]


@pytest.mark.parametrize("case", ["wrong_model", "wrong_fingerprint", "other_backend", "inactive", "below",
                                  "tie", "no_match"])
def test_threshold_rules_that_do_not_resolve(api: APIClient, backend: Backend, case: str) -> None:
    behaviour = backend.decisive(1, p=0.95)
    if case == "wrong_model":
        approve(backend, 0.8, model="other-model-2.0")
    elif case == "wrong_fingerprint":
        approve(backend, 0.8, fingerprint="0" * 64)
    elif case == "other_backend":
        # The same model name, but evaluated through the other backend's prompt.
        other = chat.chat_fingerprint() if backend.name == "jev" else question_fingerprint()
        approve(backend, 0.8, fingerprint=other)
    elif case == "inactive":
        approve(backend, 0.8, active=False)
    elif case == "below":
        approve(backend, 0.97)
    elif case == "tie":
        approve(backend, 0.4)
        behaviour = backend.tie(1, 2)
    else:
        approve(backend, 0.5)
        behaviour = backend.no_match(0.95)
    backend.server.push(behaviour)
    body = resolve(api, "portfolio")
    assert body["status"] == "needs_clarification"
    assert backend.calls == 1


def test_tie__suggests_nothing(api: APIClient, backend: Backend) -> None:
    backend.server.push(backend.tie(1, 2))
    data = resolve(api, "portfolio")["data"]
    assert not any(c["suggested"] for c in data["candidates"])


def test_no_match_on_top__says_so(api: APIClient, backend: Backend) -> None:
    backend.server.push(backend.no_match())
    data = resolve(api, "portfolio")["data"]
    assert "None of these" in data["questions"][0]["prompt"]
    assert not any(c["suggested"] for c in data["candidates"])


def test_defective__judgment_unavailable(api: APIClient, backend: Backend) -> None:
    backend.server.script([backend.defective()] * 3)
    body = resolve(api, "portfolio")
    assert body["status"] == "needs_clarification" and body["data"]["method"] is None
    warnings = {w["code"]: w["details"] for w in body["warnings"]}
    assert warnings["judgment_unavailable"] == {"reason": "defective_response"}
    # Jev: not retried; the chat model: one correction, then dropped.
    assert backend.calls == (1 if backend.name == "jev" else 2)


def test_advice_only__marks_the_suggestion_and_never_resolves(radicale: Any, settings: Any) -> None:
    judges().clear()
    with oai.OpenAIContractServer(logprobs=False) as server:
        backend = Backend(name="openai", server=server, model=oai.DEFAULT_MODEL,
                          fingerprint=current_fingerprint("openai"), settings={}, decisive=oai.choose,
                          tie=lambda a, b: None, no_match=oai.no_match, defective=lambda: None)
        settings.RESOLVER = radicale.settings(JUDGE_BACKEND="resolver.judges.openai.OpenAIJudge",
                                              OPENAI_BASE_URL=server.url, OPENAI_MODEL="local-model")
        cache.clear()
        approve(backend, 0.0)
        server.push(oai.choose(2))
        
        outcome = resolve_outcome(text="portfolio", kind="task")
    assert outcome.status.value == "needs_clarification"
    assert outcome.decision is not None and outcome.decision.reason == "advice_only"
    assert outcome.suggested_item_id == outcome.numbering[2]
    assert outcome.probabilities == {}
