"""resolver/provenance.py: what a request leaves behind, never the reference or a title.

Read back, listed newest first, bounded, expiring, and never an error when
the cache is broken.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache, caches
from django.test import override_settings

from resolver import provenance
from resolver.domain.judgment import (
    QUESTION_ID,
    CandidateFacts,
    Judgment,
    JudgmentUnavailable,
    build_question,
)

LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "provenance-tests"}}
REFERENCE = "the flamingo budget talk"
TITLE = "Flamingo budget review"


@pytest.fixture(autouse=True)
def local_cache() -> Iterator[None]:
    with override_settings(CACHES=LOCMEM, RESOLVER={"PROVENANCE_TTL_SECONDS": 60}):
        cache.clear()
        yield
        cache.clear()


def question_and_judgment() -> tuple[Any, Judgment]:
    question = build_question(
        reference=REFERENCE,
        kind="task",
        candidates=[CandidateFacts(title=TITLE, collection="work", status=None),
                    CandidateFacts(title="Other", collection="home", status=None)],
    )
    judgment = Judgment(model="jev-1.13.0", choice="1", probabilities={"1": 0.9, "2": 0.05, "no_match": 0.05},
                        server_request_id="req_jev_7", latency_ms=140, attempts=2, backend="jev")
    return question, judgment


def record(request_id: str, **overrides: Any) -> None:
    question, judgment = question_and_judgment()
    fields: dict[str, Any] = dict(
        request_id=request_id,
        provenance=provenance.provenance_dict(question, judgment),
        probabilities_by_number=judgment.number_probabilities(),
        number_to_item_id={1: "itm_one", 2: "itm_two"},
        decision="resolved",
        reason="approved_threshold_met",
    )
    fields.update(overrides)
    provenance.record(**fields)


def test_provenance_dict__for_a_judgment() -> None:
    question, judgment = question_and_judgment()
    assert provenance.provenance_dict(question, judgment) == {
        "question": QUESTION_ID,
        "fingerprint": question.fingerprint,
        "model": "jev-1.13.0",
        "jev_request_id": "req_jev_7",
        "candidate_count": 2,
        "latency_ms": 140,
        "attempts": 2,
        "backend": "jev",
        "probability_source": "service",
        "attempt_validity": [],
        "retrieval_model": None,
    }


def test_provenance_dict__none_without_a_judgment() -> None:
    question, _ = question_and_judgment()
    assert provenance.provenance_dict(question, JudgmentUnavailable(reason="timeout", attempts=3)) is None


def test_record_then_get() -> None:
    record("req-1")
    entry = provenance.get("req-1")
    assert entry is not None
    assert entry["request_id"] == "req-1"
    assert entry["provenance"]["model"] == "jev-1.13.0"
    assert entry["probabilities_by_number"] == {"1": 0.9, "2": 0.05}
    assert entry["number_to_item_id"] == {"1": "itm_one", "2": "itm_two"}
    assert (entry["decision"], entry["reason"]) == ("resolved", "approved_threshold_met")
    assert cache.get("resolver:provenance:req-1") == entry


def test_get__unknown_is_none() -> None:
    assert provenance.get("req-never") is None


def test_record__holds_no_reference_or_title_text() -> None:
    smuggled = {**provenance.provenance_dict(*question_and_judgment()), "user_reference": REFERENCE, "title": TITLE}
    record("req-2", provenance=smuggled)
    stored = json.dumps(provenance.get("req-2"))
    assert REFERENCE not in stored
    assert TITLE not in stored
    assert set(provenance.get("req-2")["provenance"]) == set(provenance.PROVENANCE_FIELDS)


def test_record__without_a_judgment() -> None:
    record("req-3", provenance=None, probabilities_by_number={}, decision="clarification", reason="judgment_unavailable")
    entry = provenance.get("req-3")
    assert entry is not None
    assert entry["provenance"] is None
    assert entry["decision"] == "clarification"


def test_record__an_unusual_request_id_still_round_trips() -> None:
    odd = "req with spaces/and/slashes " + "x" * 300
    record(odd)
    entry = provenance.get(odd)
    assert entry is not None and entry["request_id"] == odd
    assert provenance.cache_key(odd).startswith("resolver:provenance:sha256-")
    assert len(provenance.cache_key(odd)) < 250


def test_recent__newest_first_and_limited() -> None:
    for n in range(5):
        record(f"req-{n}")
    assert [e["request_id"] for e in provenance.recent()] == ["req-4", "req-3", "req-2", "req-1", "req-0"]
    assert [e["request_id"] for e in provenance.recent(limit=2)] == ["req-4", "req-3"]
    assert provenance.recent(limit=0) == []


def test_recent__a_request_recorded_twice_appears_once() -> None:
    record("req-a")
    record("req-b")
    record("req-a", reason="tie")
    entries = provenance.recent()
    assert [e["request_id"] for e in entries] == ["req-a", "req-b"]
    assert entries[0]["reason"] == "tie"


def test_recent__the_index_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provenance, "INDEX_SIZE", 3)
    for n in range(6):
        record(f"req-{n}")
    assert len(cache.get(provenance.INDEX_KEY)) == 3
    assert [e["request_id"] for e in provenance.recent()] == ["req-5", "req-4", "req-3"]


def test_entries_expire_and_are_skipped() -> None:
    with override_settings(RESOLVER={"PROVENANCE_TTL_SECONDS": 1}):
        record("req-short")
    # Recorded later with a longer TTL, so the index outlives the first entry.
    record("req-long")
    assert [e["request_id"] for e in provenance.recent()] == ["req-long", "req-short"]
    time.sleep(1.1)
    assert provenance.get("req-short") is None
    assert [e["request_id"] for e in provenance.recent()] == ["req-long"]


def test_record__a_broken_cache_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("cache down")

    backend = caches["default"]  # the instance itself, not the proxy
    for method in ("set", "get", "get_many"):
        monkeypatch.setattr(backend, method, broken)
    record("req-x")
    assert provenance.get("req-x") is None
    assert provenance.recent() == []


def test_record__keeps_what_chose_the_candidates() -> None:
    """A judge's resolution over the relevance model's pool: the stored entry names the model, as the envelope does."""
    question, judgment = question_and_judgment()
    chosen_by = "relevance-cl-1 (use-multilingual-v3) 0123456789abcdef"
    question = build_question(reference=REFERENCE, kind="task", retrieval=chosen_by,
                              candidates=[CandidateFacts(title=TITLE, collection="work", status=None)])
    record("req-4", provenance=provenance.provenance_dict(question, judgment))
    assert provenance.get("req-4")["provenance"]["retrieval_model"] == chosen_by
