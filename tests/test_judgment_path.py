"""Issue 3 through the whole path: API -> pipeline -> Jev-contract server, real Radicale."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver import provenance
from resolver.domain.judgment import QUESTION_ID
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint
from tests.support.jev_contract_server import (
    DEFAULT_MODEL, JevContractServer, decisive, defective, no_match, slow, tie,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def jev():
    with JevContractServer() as server:
        yield server


@pytest.fixture
def api(radicale, settings, jev) -> APIClient:
    settings.RESOLVER = radicale.settings(TYPESAFE_BASE_URL=jev.url, JUDGMENT_BUDGET_SECONDS=2.0,
                                          JEV_READ_TIMEOUT=1.0)
    cache.clear()
    user = get_user_model().objects.create_user("agent", password="pw-agent-123")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def resolve(api: APIClient, text: str, kind: str = "task", **extra) -> dict:
    response = api.post("/v1/resolve", {"text": text, "kind": kind, **extra}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def approve(threshold: float, *, model: str = DEFAULT_MODEL, fingerprint: str | None = None,
            active: bool = True) -> ApprovedThreshold:
    now = datetime.now(timezone.utc)
    return ApprovedThreshold.objects.create(
        question=QUESTION_ID, model=model, fingerprint=fingerprint or current_fingerprint("jev"),
        threshold=threshold, cases=400, admitted_accuracy=0.99, coverage=0.7, risk_upper_bound=0.02,
        evaluated_at=now, active=active, approved_at=now if active else None,
    )


def test_exact_match_never_calls_jev(api, jev):
    body = resolve(api, "Draft portfolio outline")
    assert body["status"] == "ok" and body["data"]["method"] == "deterministic"
    assert jev.systemone_requests == []


def test_duplicate_exact_titles_never_call_jev(api, jev):
    assert resolve(api, "Team offsite planning")["status"] == "needs_clarification"
    assert jev.systemone_requests == []


def test_decisive_answer_without_threshold_is_advice(api, jev):
    jev.push(decisive(2, p=0.95))
    body = resolve(api, "portfolio")
    assert body["status"] == "needs_clarification"
    data = body["data"]
    assert data["method"] == "semantic"
    # Candidate 2 of the pool order was chosen: it now comes first, marked suggested.
    sent = jev.systemone_requests[0].json
    chosen_title = sent["state"]["candidates"][1]["title"]
    assert data["candidates"][0]["title"] == chosen_title
    assert data["candidates"][0]["suggested"] is True and data["candidates"][0]["probability"] == 0.95
    assert [c["suggested"] for c in data["candidates"][1:]] == [False] * (len(data["candidates"]) - 1)
    prov = data["judgment_provenance"]
    assert prov["question"] == QUESTION_ID and prov["model"] == DEFAULT_MODEL
    assert prov["fingerprint"] == current_fingerprint("jev") and prov["candidate_count"] == 2
    assert prov["attempts"] == 1 and prov["jev_request_id"]


def test_request_carries_request_id_and_numbers_only(api, jev):
    jev.push(decisive(1))
    body = resolve(api, "portfolio")
    request = jev.systemone_requests[0]
    assert request.headers["x-request-id"] == body["request_id"]
    payload = request.json
    question = payload["questions"]["reference_match"]
    assert sorted(question["criteria"]) == ["1", "2", "no_match"]
    assert payload["state"]["candidate_number_range"] == {"first": 1, "last": 2}
    text = str(payload)
    for candidate in body["data"]["candidates"]:
        assert candidate["item_id"] not in text and candidate["uid"] not in text and candidate["etag"] not in text


def test_provenance_log_entry(api, jev):
    jev.push(decisive(1, p=0.9))
    body = resolve(api, "portfolio")
    entry = provenance.get(body["request_id"])
    assert entry is not None
    mapping = {str(k): v for k, v in entry["number_to_item_id"].items()}
    ids_by_number = {str(n): c["item_id"] for n, c in enumerate(body["data"]["candidates"], start=1)}
    assert set(mapping.values()) == set(ids_by_number.values())
    assert "portfolio" not in str(entry).lower()


def test_tie_suggests_nothing(api, jev):
    jev.push(tie(1, 2))
    data = resolve(api, "portfolio")["data"]
    assert not any(c["suggested"] for c in data["candidates"])


def test_no_match_on_top_says_so(api, jev):
    jev.push(no_match())
    data = resolve(api, "portfolio")["data"]
    assert "None of these" in data["questions"][0]["prompt"]
    assert not any(c["suggested"] for c in data["candidates"])


def test_defective_answer_is_judgment_unavailable(api, jev):
    jev.push(defective("bad_sum"))
    body = resolve(api, "portfolio")
    assert body["status"] == "needs_clarification" and body["data"]["method"] is None
    assert {w["code"]: w["details"] for w in body["warnings"]}["judgment_unavailable"] == {
        "reason": "defective_response"}


def test_slow_jev_ends_within_budget(api, jev):
    jev.script([slow(5)] * 10)
    body = resolve(api, "portfolio")
    warning = {w["code"]: w["details"] for w in body["warnings"]}["judgment_unavailable"]
    assert warning["reason"] in {"timeout", "budget_exhausted"}


def test_approved_threshold_resolves_semantically(api, jev):
    approve(0.8)
    jev.push(decisive(1, p=0.95))
    body = resolve(api, "portfolio")
    assert body["status"] == "ok" and body["data"]["method"] == "semantic"
    assert body["data"]["title"] == jev.systemone_requests[0].json["state"]["candidates"][0]["title"]
    assert body["data"]["judgment_provenance"]["model"] == DEFAULT_MODEL


def test_approved_threshold_the_page_names_the_judge_and_what_allowed_it(api, jev):
    """The page door: a judge's resolution says a judge chose it, at what probability, under which approval."""
    from django.test import Client

    row = approve(0.8)
    jev.push(decisive(1, p=0.95))
    client = Client()
    client.force_login(get_user_model().objects.get(username="agent"))
    page = client.post("/resolve/", {"text": "portfolio", "kind": "task", "collections": ""}).content.decode()
    assert 'data-method="semantic">The judge chose it, with a confidence approved for this question.' in page
    assert '<span data-field="probability">0.950</span>' in page
    assert '<span data-field="threshold">0.800</span>' in page and f"#{row.pk}</span>" in page
    assert f'<code data-field="model">{DEFAULT_MODEL}</code>' in page


@pytest.mark.parametrize("setup, behaviour", [
    (lambda: approve(0.8, model="jev-other-2.0"), decisive(1, p=0.95)),          # wrong model
    (lambda: approve(0.8, fingerprint="0" * 64), decisive(1, p=0.95)),            # wrong fingerprint
    (lambda: approve(0.8, active=False), decisive(1, p=0.95)),                    # inactive
    (lambda: approve(0.97), decisive(1, p=0.95)),                                 # below threshold
    (lambda: approve(0.4), tie(1, 2, p=0.45)),                                    # tie / no margin
    (lambda: approve(0.5), no_match(p=0.95)),                                     # no_match on top
])
def test_threshold_rules_that_do_not_resolve(api, jev, setup, behaviour):
    setup()
    jev.push(behaviour)
    body = resolve(api, "portfolio")
    assert body["status"] == "needs_clarification"


@pytest.mark.slow
def test_laya_serve_uniform_answer_ends_in_clarification(radicale, settings):
    """A third-party Jev-compatible server accepts our request; uniform = no suggestion."""
    from tests.support.laya import LayaServer

    with LayaServer() as laya:
        settings.RESOLVER = radicale.settings(TYPESAFE_BASE_URL=laya.url, JUDGMENT_BUDGET_SECONDS=8.0)
        cache.clear()
        user = get_user_model().objects.create_user("agent", password="pw-agent-123")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
        body = resolve(client, "portfolio")
    assert body["status"] == "needs_clarification"
    assert not [w for w in body["warnings"] if w["code"] == "judgment_unavailable"]
    data = body["data"]
    assert data["method"] == "semantic"
    assert data["judgment_provenance"]["model"] == laya.serving_model
    assert not any(c["suggested"] for c in data["candidates"])
    assert len({c["probability"] for c in data["candidates"]}) == 1
