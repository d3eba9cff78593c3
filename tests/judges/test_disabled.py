"""resolver/judges/disabled.py: the judge used when none is configured always abstains, and no threshold fits it."""
from __future__ import annotations

import pytest

from resolver.domain.judgment import CandidateFacts, JudgmentUnavailable, Question, build_question
from resolver.judges import DisabledJudge


@pytest.fixture
def question() -> Question:
    candidates = [
        CandidateFacts(title="Quarterly report", collection="work", status="NEEDS-ACTION", due="2025-03-31"),
        CandidateFacts(title="Zebra crossing survey", collection="home", status=None),
    ]
    return build_question(reference="the report", kind="task", candidates=candidates)


def test_disabled_judge__is_unavailable(question: Question) -> None:
    assert DisabledJudge().judge(question, request_id="r1") == JudgmentUnavailable(reason="disabled")


def test_disabled_judge__built_from_any_settings_and_never_fingerprinted() -> None:
    judge = DisabledJudge.from_settings(object())
    assert judge == DisabledJudge() and (judge.backend, judge.model, judge.fingerprint) == ("off", "", "")
