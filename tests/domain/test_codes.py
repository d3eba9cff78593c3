"""resolver/domain/codes.py: every code described once, and every door built from it.

That each exception of resolver/domain/errors.py takes its status and exit code from its
member is in tests/domain/test_errors.py.
"""
from __future__ import annotations

import json

import pytest

from resolver.domain import codes
from resolver.domain.codes import ErrorCode, Reason, WarningCode


# --- the enums themselves -----------------------------------------------------


@pytest.mark.parametrize("code", [*Reason, *WarningCode, *ErrorCode], ids=str)
def test_codes__json_is_the_plain_value(code):
    """A member in an envelope dict writes the same bytes as its string."""
    assert json.dumps({"c": code}) == json.dumps({"c": code.value}) and str(code) == code.value
    assert f"{code}" == code.value


@pytest.mark.parametrize("reason", list(Reason), ids=str)
def test_reason__has_its_texts(reason):
    assert reason.description and reason.heading and reason.legend and reason.question and reason.narrow
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


def test_reason__no_candidates_has_its_own_legend():
    """The page's only line when nothing matched: not the question over candidates it has none of."""
    assert Reason.NO_CANDIDATES.legend not in {r.legend for r in Reason if r is not Reason.NO_CANDIDATES}
    assert Reason.NO_CANDIDATES.legend.startswith("Nothing in your calendars matches your reference.")


@pytest.mark.parametrize(("reason", "listed", "matched", "prompt"), [
    (Reason.DUPLICATE_TITLES, 2, 2, "2 items match this reference exactly. Which one do you mean?"),
    (Reason.DUPLICATE_TITLES, 19, 25, "25 items match this reference exactly. Which one do you mean? Only the first 19 "
                                      "are listed: narrow the scope with a collection if yours is missing."),
    (Reason.AMBIGUOUS, 2, 2, "Which item do you mean?"),
    (Reason.AMBIGUOUS, 19, 40, "Which item do you mean? 40 items matched and only the best 19 are listed: narrow "
                               "the scope with a collection or more words if yours is missing."),
    (Reason.SINGLE_CANDIDATE, 1, 1, "Is this the item you mean?"),
    (Reason.JUDGE_NO_MATCH, 3, 3, "None of these items seems to match the reference. Which item do you mean?"),
    (Reason.JUDGE_NO_MATCH, 1, 1, "None of these items seems to match the reference. Is this the item you mean?"),
    (Reason.NO_CANDIDATES, 0, 0,
     "Nothing in your calendars matches this reference. Rephrase it, or use more of the item's title."),
])
def test_reason__prompt_is_the_envelopes_question(reason, listed, matched, prompt):
    """The prompts the pipeline wrote before its texts moved here, byte for byte."""
    assert reason.prompt(listed=listed, matched=matched) == prompt


def test_reason__only_a_yes_or_no_question_is_ticked_on_the_page():
    assert [r for r in Reason if r.yes_or_no] == [Reason.SINGLE_CANDIDATE]


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
    from resolver.openapi import examples
    from resolver.conf import DEFAULTS
    from resolver.domain.errors import InvalidRequest
    from resolver.domain.requests import RequestLimits, parse_request

    limits = RequestLimits(max_text_length=DEFAULTS["MAX_TEXT_LENGTH"])
    with pytest.raises(InvalidRequest) as caught:
        parse_request(text="x" * (DEFAULTS["MAX_TEXT_LENGTH"] + 1), kind="task", limits=limits)
    assert examples()["errors"]["invalid_request"] == {"message": caught.value.message,
                                                       "details": caught.value.details}


def test_schema__examples_name_declared_codes_only():
    """The example data cannot drift from the enums: every reason, warning and error code in it is declared."""
    from resolver.openapi import examples

    data = examples()
    assert {Reason(e["reason"]) for e in data["clarifications"]}
    for example in data["clarifications"]:
        Reason(example["reason"])
        for warning in example.get("warnings", []):
            code = WarningCode(warning["code"])
            off = codes.judge_is_off(code, warning["details"])
            assert warning["message"] == (codes.JUDGE_OFF_MESSAGE if off else code.message)
    assert all(ErrorCode(code).in_api for code in data["errors"])


def test_elicitation__adds_the_note_of_a_warning_for_people():
    from resolver.mcp import elicitation

    envelope = {"data": {"questions": [{"prompt": "Which item do you mean?"}]},
                "warnings": [{"code": "occurrence_outside_range", "message": "m", "details": {}},
                             {"code": "candidate_narrowed", "message": "m", "details": {}}]}
    assert elicitation.message(envelope) == (
        f"Which item do you mean? {WarningCode.OCCURRENCE_OUTSIDE_RANGE.note} Choose one, or \"None of these\".")


# --- the documents' tables are the enums' ---------------------------------------------

_DOCS = __import__("pathlib").Path(__file__).resolve().parents[2]


def _table(path, header):
    """{code: its last cell} of the Markdown table under `header` (cells split at unescaped `|`)."""
    import re

    lines = path.read_text(encoding="utf-8").splitlines()
    rows = {}
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows[cells[0].strip("`")] = cells[-1]
    return rows


@pytest.mark.parametrize(("document", "header", "enum"), [
    ("README.md", "| `reason` | when |", Reason),
    ("README.md", "| code | details | when |", WarningCode),
    ("docs/doors.md", "| `reason` | when |", Reason),
], ids=["readme-reasons", "readme-warnings", "doors-reasons"])
def test_docs__tables_list_every_code_with_its_description(document, header, enum):
    """A new reason or warning cannot be forgotten there: each row is `code` and the member's description."""
    assert _table(_DOCS / document, header) == {code.value: code.description for code in enum}


# --- every sub-reason the code spells out is declared ----------------------------------

_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2] / "resolver"


def _called(path, names):
    """(called name, first string argument or `reason=` / details `"reason"` string) in `path`."""
    import ast

    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in names:
            continue
        values = [node.args[0]] if node.args else []
        values += [k.value for k in node.keywords if k.arg == "reason"]
        for k in node.keywords:
            if k.arg == "details" and isinstance(k.value, ast.Dict):
                values += [v for key, v in zip(k.value.keys, k.value.values)
                           if isinstance(key, ast.Constant) and key.value == "reason"]
        for value in values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield name, value.value


def test_sub_reasons__calendar_failures_are_declared():
    found = {(p.name, reason) for p in (_ROOT / "calendars").rglob("*.py")
             for _, reason in _called(p, {"unavailable", "CalendarUnavailable"})}
    assert found, "the scan found no calendar failure at all"
    assert {r for _, r in found} <= {f.value for f in codes.CalendarFailure}, found


def test_sub_reasons__judgment_failures_are_declared():
    found = {(p.name, reason) for p in (_ROOT / "judges").rglob("*.py")
             for _, reason in _called(p, {"JudgmentUnavailable", "Exchange", "_Attempt", "unavailable"})}
    assert found, "the scan found no judgment failure at all"
    assert {r for _, r in found} - {"ok"} <= {f.value for f in codes.JudgmentFailure}, found


def test_sub_reasons__account_rejections_are_declared():
    found = {reason for _, reason in _called(_ROOT / "accounts.py", {"_refuse"})}
    assert found == {r.value for r in codes.AccountRejection}
