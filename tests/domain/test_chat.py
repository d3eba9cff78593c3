"""The chat answer check, the correction, the fingerprint and the logprob distribution, without a server."""
from __future__ import annotations

import math

import pytest

from resolver.domain import chat
from resolver.domain.judgment import NO_MATCH, CandidateFacts, DefectiveAnswer, Question, build_question
from resolver.judges.openai import number_distribution


@pytest.fixture
def question() -> Question:
    facts = [CandidateFacts(title=f"Task {n}", collection="work", status=None) for n in range(1, 13)]
    return build_question(reference="task", kind="task", candidates=facts)


@pytest.mark.parametrize("content, expected", [
    ('{"candidate_number": 1, "no_match": false}', "1"),
    ('{"candidate_number": 12, "no_match": false}', "12"),
    ('{"no_match": true, "candidate_number": null}', NO_MATCH),
    (' {"candidate_number": 3, "no_match": false}\n', "3"),
])
def test_parse_answer__valid(question: Question, content: str, expected: str) -> None:
    assert chat.parse_answer(content, question) == expected


@pytest.mark.parametrize("content, reason", [
    ('{"candidate_number": 13, "no_match": false}', "out_of_range"),
    ('{"candidate_number": 0, "no_match": false}', "non_positive"),
    ('{"candidate_number": -2, "no_match": false}', "non_positive"),
    ('{"candidate_number": "2", "no_match": false}', "not_integer"),
    ('{"candidate_number": 2.0, "no_match": false}', "not_integer"),
    ('{"candidate_number": true, "no_match": false}', "not_integer"),
    ('{"candidate_number": 2, "no_match": false, "why": "x"}', "extra_field"),
    ('{"candidate_number": 2}', "missing_field"),
    ('{"candidate_number": 2, "no_match": true}', "both_set"),
    ('{"candidate_number": null, "no_match": false}', "neither_set"),
    ('{"candidate_number": 2, "no_match": "false"}', "not_boolean"),
    ('{"candidate_id": 2, "no_match": false}', "former_vocabulary"),
    ('{"candidate_ids": [2], "candidate_number": 2, "no_match": false}', "former_vocabulary"),
    ('{"candidate_number": 2, "no_match": false', "malformed_json"),
    ('```json\n{"candidate_number": 2, "no_match": false}\n```', "malformed_json"),
    ('[2]', "not_object"),
    (None, "not_text"),
])
def test_parse_answer__defective(question: Question, content: object, reason: str) -> None:
    with pytest.raises(DefectiveAnswer) as caught:
        chat.parse_answer(content, question)
    assert caught.value.reason == reason


def test_correction__exact_range_for_this_request(question: Question) -> None:
    text = chat.correction(question)
    assert "exactly 1 to 12 (inclusive)" in text and "from 1 to 12" in text
    small = build_question(reference="x", kind="event",
                           candidates=[CandidateFacts(title="A", collection="c", status=None)])
    assert "exactly 1 to 1 (inclusive)" in chat.correction(small)


@pytest.mark.parametrize("name", ["SYSTEM_PROMPT", "CORRECTION_TEMPLATE", "USER_MESSAGE_TEMPLATE"])
def test_fingerprint__changes_with_the_trusted_text(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    before = chat.chat_fingerprint()
    monkeypatch.setattr(chat, name, getattr(chat, name) + " ")
    assert chat.chat_fingerprint() != before


def test_fingerprint__changes_with_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    before = chat.chat_fingerprint()
    schema = dict(chat.RESPONSE_SCHEMA, additionalProperties=True)
    monkeypatch.setattr(chat, "RESPONSE_SCHEMA", schema)
    assert chat.chat_fingerprint() != before


def test_fingerprint__changes_with_the_question(monkeypatch: pytest.MonkeyPatch) -> None:
    from resolver.domain import judgment

    before = chat.chat_fingerprint()
    monkeypatch.setattr(judgment, "STATE_LAYOUT_VERSION", judgment.STATE_LAYOUT_VERSION + 1)
    assert chat.chat_fingerprint() != before


def _lp(token: str, p: float, top: dict[str, float] | None = None) -> dict[str, object]:
    return {"token": token, "logprob": math.log(p),
            "top_logprobs": [{"token": t, "logprob": math.log(q)} for t, q in (top or {token: p}).items()]}


def test_distribution__normalised_over_options_only(question: Question) -> None:
    content = '{"candidate_number": 11, "no_match": false}'
    tokens = [_lp('{"candidate_number":', 1.0), _lp(" 11", 0.6, {" 11": 0.6, " 2": 0.2, " 40": 0.1, " x": 0.05}),
              _lp(', "no_match": false}', 1.0)]
    distribution = number_distribution(tokens, content, question)
    assert distribution is not None
    # 40 is no option and "x" no number: their mass is dropped, the rest normalised.
    assert distribution["11"] == pytest.approx(0.75) and distribution["2"] == pytest.approx(0.25)
    assert math.fsum(distribution.values()) == pytest.approx(1.0)


def test_distribution__a_value_split_over_tokens_is_none(question: Question) -> None:
    content = '{"candidate_number": 11, "no_match": false}'
    tokens = [_lp('{"candidate_number": ', 1.0), _lp("1", 0.9, {"1": 0.9, "2": 0.1}), _lp("1", 1.0),
              _lp(', "no_match": false}', 1.0)]
    assert number_distribution(tokens, content, question) is None


def test_distribution__tokens_that_do_not_spell_the_answer_are_none(question: Question) -> None:
    tokens = [_lp('{"candidate_number": ', 1.0), _lp("2", 1.0), _lp(', "no_match": false}', 1.0)]
    assert number_distribution(tokens, '{"candidate_number": 3, "no_match": false}', question) is None
    assert number_distribution(None, '{"candidate_number": 3, "no_match": false}', question) is None
