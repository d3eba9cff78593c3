"""The one judge protocol (resolver.domain.ports.Judge): every built-in judge keeps it, and fingerprints
are asked of the judges with the values the former switch over backend names gave."""
from __future__ import annotations

import pytest

from resolver import thresholds
from resolver.domain import chat
from resolver.domain.judgment import question_fingerprint, with_retrieval
from resolver.domain.ports import Judge
from resolver.rankers import deployed_retrieval
from resolver.judges import BUILT_IN, DisabledJudge, JevJudge, OpenAIJudge
from resolver.judges.registry import judges

OPTIONS = dict(base_url="http://127.0.0.1:9/v1", api_key="", model="m", connect_timeout=1.0, read_timeout=1.0,
               budget_seconds=1.0)


def test_built_in_judges__keep_the_protocol() -> None:
    for judge in (JevJudge(**OPTIONS), OpenAIJudge(**OPTIONS), DisabledJudge()):
        assert isinstance(judge, Judge)
        assert {type(judge.backend), type(judge.model), type(judge.fingerprint)} == {str}
    assert [cls.backend for cls in BUILT_IN] == ["jev", "openai", "off"]


def test_fingerprints__are_what_fingerprint_for_gave() -> None:
    """fingerprint_for("jev") was question_fingerprint(), fingerprint_for("openai") chat_fingerprint():
    thresholds approved before still match."""
    assert JevJudge(**OPTIONS).fingerprint == JevJudge.fingerprint == question_fingerprint()
    assert OpenAIJudge(**OPTIONS).fingerprint == OpenAIJudge.fingerprint == chat.chat_fingerprint()
    assert DisabledJudge().fingerprint == ""


@pytest.mark.django_db
@pytest.mark.parametrize("configured", [
    {},  # Jev, off without TYPESAFE_*
    {"TYPESAFE_BASE_URL": "http://127.0.0.1:9"},
    {"JUDGE_BACKEND": "resolver.judges.openai.OpenAIJudge", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
     "OPENAI_MODEL": "m"},
    {"JUDGE_BACKEND": "resolver.judges.disabled.DisabledJudge"},
])
def test_current_fingerprint__the_same_whichever_judge_is_configured(settings, configured) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "SEMANTIC": False, **configured}
    judges().clear()
    retrieval = deployed_retrieval()
    assert thresholds.current_fingerprint("jev") == with_retrieval(question_fingerprint(), retrieval)
    assert thresholds.current_fingerprint("openai") == with_retrieval(chat.chat_fingerprint(), retrieval)
    assert thresholds.current_fingerprint("off") is None and thresholds.current_fingerprint("acme") is None
