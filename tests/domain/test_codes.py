"""resolver/domain/codes.py: every code described once, and every door built from it."""
from __future__ import annotations

import json

import pytest

from resolver.domain import codes
from resolver.domain.codes import ErrorCode, Reason, WarningCode
from resolver.domain.errors import ResolverError


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


# --- the enums themselves -----------------------------------------------------


@pytest.mark.parametrize("code", [*Reason, *WarningCode, *ErrorCode], ids=str)
def test_codes__json_is_the_plain_value(code):
    """A member in an envelope dict writes the same bytes as its string."""
    assert json.dumps({"c": code}) == json.dumps({"c": code.value}) and str(code) == code.value
    assert f"{code}" == code.value


@pytest.mark.parametrize("reason", list(Reason), ids=str)
def test_reason__has_its_texts(reason):
    assert reason.description and reason.heading and reason.legend
    # The page escapes them: a character HTML would change must not hide in a text.
    for text in (reason.heading, reason.legend):
        assert not set("<>&'\"") & set(text), text
    assert "{kind}" not in reason.page_heading("task")


@pytest.mark.parametrize("code", list(WarningCode), ids=str)
def test_warning_code__has_its_texts(code):
    assert code.description and code.message


@pytest.mark.parametrize("code", list(ErrorCode), ids=str)
def test_error_code__has_status_and_description(code):
    assert 400 <= code.http_status < 600 and code.describe(max_text_length=1, max_collection_ids=1, max_body_bytes=1)
    # Said by the API with no exception behind it (DRF's), or raised and given a command exit code.
    assert code.http_only == (code.exit_code is None)


def test_error_code__every_exception_has_its_member():
    raised = {cls.code for cls in _subclasses(ResolverError)} | {ResolverError.code}
    assert raised == {code for code in ErrorCode if not code.http_only}
    for cls in _subclasses(ResolverError):
        assert (cls.http_status, cls.exit_code) == (cls.code.http_status, cls.code.exit_code), cls


def test_error_code__an_http_only_code_cannot_be_raised():
    with pytest.raises(TypeError):
        type("Throttled", (ResolverError,), {"code": ErrorCode.THROTTLED})


def test_reason__for_page_reads_old_and_unknown_tokens():
    assert Reason.for_page("judge_no_match", has_candidates=True) is Reason.JUDGE_NO_MATCH
    assert Reason.for_page(None, has_candidates=True) is Reason.AMBIGUOUS
    assert Reason.for_page(None, has_candidates=False) is Reason.NO_CANDIDATES
    assert Reason.for_page("retired_reason", has_candidates=True) is Reason.AMBIGUOUS


# --- sub-reasons ------------------------------------------------------------------


def test_http_reason__round_trips():
    assert codes.http_reason(503) == "http_503" and codes.http_status_of("http_503") == 503
    assert codes.http_status_of("http_5") is None and codes.http_status_of("timeout") is None
    assert codes.http_status_of(None) is None and codes.http_status_of("http_5033") is None


@pytest.mark.parametrize(("reason", "transient"), [
    ("timeout", True), ("http_500", True), ("http_503", True), ("http_599", True),
    ("http_404", False), ("http_429", False), ("unreachable", False), ("", False), ("http_5", False),
])
def test_is_transient__timeouts_and_server_errors(reason, transient):
    assert codes.is_transient(reason) is transient


def test_judge_is_off__only_the_disabled_judge():
    assert codes.judge_is_off("judgment_unavailable", {"reason": "disabled"})
    assert not codes.judge_is_off("judgment_unavailable", {"reason": "timeout"})
    assert not codes.judge_is_off("candidate_narrowed", {"reason": "disabled"})
    assert not codes.judge_is_off("judgment_unavailable", None)


# --- every door is built from them --------------------------------------------------


@pytest.fixture(scope="module")
def document():
    from tests.hostile.openapi import api_document

    return api_document()


def test_schema__documents_every_reason(document):
    components = document["components"]["schemas"]
    assert components["ReasonEnum"]["enum"] == [r.value for r in Reason]
    description = components["Clarification"]["properties"]["reason"]["description"]
    for reason in Reason:
        assert f"`{reason.value}`: {reason.description}" in description


def test_schema__documents_every_warning(document):
    description = document["components"]["schemas"]["Warning"]["properties"]["code"]["description"]
    for code in WarningCode:
        assert f"`{code.value}`: {code.description}" in description


def test_schema__documents_every_api_error_with_its_status_and_an_example(document):
    responses = document["paths"]["/v1/resolve"]["post"]["responses"]
    documented = {}
    for status, response in responses.items():
        if status == "200":
            continue
        for example in response["content"]["application/json"]["examples"].values():
            code = example["value"]["error"]["code"]
            documented[code] = int(status)
            assert example["value"]["error"]["message"] and f"`{code}`: " in response["description"]
    assert documented == {code.value: code.http_status for code in ErrorCode if code.in_api}


def test_schema__invalid_request_example_is_what_the_service_says():
    """The example is data, so it is checked against the real message for a text one over the default limit."""
    from resolver.api.schema import examples
    from resolver.conf import DEFAULTS
    from resolver.domain.errors import InvalidRequest
    from resolver.domain.requests import RequestLimits, parse_request

    limits = RequestLimits(max_text_length=DEFAULTS["MAX_TEXT_LENGTH"])
    with pytest.raises(InvalidRequest) as caught:
        parse_request(text="x" * (DEFAULTS["MAX_TEXT_LENGTH"] + 1), kind="task", limits=limits)
    assert examples()["errors"]["invalid_request"] == {"message": caught.value.message,
                                                       "details": caught.value.details}


def test_schema__every_reason_has_a_clarification_example_or_is_single_candidate():
    from resolver.api.schema import examples

    shown = {Reason(e["reason"]) for e in examples()["clarifications"]}
    # single_candidate is ambiguous with one candidate: its example would repeat that one.
    assert shown | {Reason.SINGLE_CANDIDATE} == set(Reason)


def test_elicitation__adds_the_note_of_a_warning_for_people():
    from resolver.mcp import elicitation

    envelope = {"data": {"questions": [{"prompt": "Which item do you mean?"}]},
                "warnings": [{"code": "occurrence_outside_range", "message": "m", "details": {}},
                             {"code": "candidate_narrowed", "message": "m", "details": {}}]}
    assert elicitation.message(envelope) == (
        f"Which item do you mean? {WarningCode.OCCURRENCE_OUTSIDE_RANGE.note} Choose one, or \"None of these\".")
