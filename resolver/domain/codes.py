"""Every code a door says, described once: reasons, warnings, errors and their sub-reasons.

Each code is a `StrEnum` member whose value is the string the envelope carries,
so the JSON is the same whether a member or its value is written. With the code
come the texts that describe it: the OpenAPI document (resolver/api/schema.py),
the page (resolver/web/), the command and the MCP door are built from these, so
adding a reason is one member here plus its tests (tests/domain/test_codes.py
checks every member is documented and has its texts).

Plain Python: nothing here imports Django or any other layer of the app.
"""
from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, TypeVar

E = TypeVar("E", bound=StrEnum)


def _member(cls: type[E], value: str, **facts: Any) -> E:
    """A StrEnum member whose value is `value` (what the JSON carries) and with `facts` as attributes."""
    member = str.__new__(cls, value)
    member._value_ = value
    for name, fact in facts.items():
        setattr(member, name, fact)
    return member


class Reason(StrEnum):
    """Why a clarification was needed: `data.reason`, a stable code for programs."""

    # value, description (the API's), heading and legend (the page's; {kind} is task or event)
    DUPLICATE_TITLES = (
        "duplicate_titles",
        "Several live items match the reference exactly (ID, UID or title).",
        "Several {kind}s have this title",
        "These items all match your reference exactly. Choose one.",
    )
    AMBIGUOUS = (
        "ambiguous",
        "Several candidates and no decision: the judge is off or unavailable, a tie, "
        "or the top candidate is below an approved threshold.",
        "Which {kind} do you mean?",
        "Several items could match your reference. Choose one.",
    )
    SINGLE_CANDIDATE = (
        "single_candidate",
        "One candidate and no decision (the judge off or unavailable, or below an approved "
        "threshold): the question is whether it is the item meant.",
        "Is this the {kind} you mean?",
        "The one item that could match",
    )
    JUDGE_NO_MATCH = (
        "judge_no_match",
        "The judge's most probable option is `no_match`.",
        "None of these seems to match",
        "None of these seems to match your reference; choose one if it is yours, or search again.",
    )
    NO_CANDIDATES = (
        "no_candidates",
        "Nothing matched the reference.",
        "Nothing matched",
        "Several items could match your reference. Choose one.",
    )

    description: str
    heading: str
    legend: str

    def __new__(cls, value: str, description: str = "", heading: str = "", legend: str = "") -> Reason:
        return _member(cls, value, description=description, heading=heading, legend=legend)

    @classmethod
    def for_page(cls, value: str | None, *, has_candidates: bool) -> Reason:
        """The reason a page shows: a token from before reasons were signed has none, and an
        unknown one reads as the general question (never an error page for a stale link)."""
        if value in cls._value2member_map_:
            return cls(value)
        return cls.AMBIGUOUS if has_candidates else cls.NO_CANDIDATES

    def page_heading(self, kind: str) -> str:
        return self.heading.format(kind=kind)


class WarningCode(StrEnum):
    """A fact the caller should know, in `warnings[].code`; never an error."""

    # value, description (the API's), message (the envelope's), and a note for a person choosing
    # among the candidates where the warning changes what they see (the MCP question adds it).
    ITEMS_SKIPPED = (
        "items_skipped",
        "Calendar resources that could not be read were skipped (`details.count`, `details.reasons`).",
        "Some calendar resources could not be read and were skipped.",
    )
    CANDIDATE_NARROWED = (
        "candidate_narrowed",
        "More items matched than can be listed (`details.matched`, `details.kept`).",
        "More items matched than can be listed; only the best matches are candidates.",
    )
    JUDGMENT_UNAVAILABLE = (
        "judgment_unavailable",
        "The judge gave no usable answer or is off (`details.reason`); candidates are in search order.",
        "The judgment service gave no usable answer; candidates are in search order.",
    )
    OCCURRENCE_OUTSIDE_RANGE = (
        "occurrence_outside_range",
        "No occurrence of these events falls in the time the reference names (`details.item_ids`).",
        "No occurrence of these events falls in the time the reference names; the nearest is shown.",
        "No occurrence falls in the time named; the nearest is shown.",
    )
    EMPTY_TIME_RANGE = (
        "empty_time_range",
        "A reference by date alone found nothing due or occurring then (`details.searched`, "
        "`details.suggested`: the range searched and a wider one).",
        "Nothing is due or occurring in the range the reference names; try a wider one.",
    )
    SERVER_FILTER_SKIPPED = (
        "server_filter_skipped",
        "The server failed on its own time-range filter; these collections were read without it "
        "(`details.collection_ids`).",
        "The calendar server failed on its own time-range filter; events were read without it.",
    )

    description: str
    message: str
    note: str

    def __new__(cls, value: str, description: str = "", message: str = "", note: str = "") -> WarningCode:
        return _member(cls, value, description=description, message=message, note=note)


# The judge's own word for "off", and the message that says so rather than that a service failed.
JUDGE_OFF_MESSAGE = "The judge is off; candidates are in search order."


class ErrorCode(StrEnum):
    """`error.code`: every failure a door reports, with its HTTP status and the command's exit code."""

    # value, HTTP status, exit code, when (the API's description; {name} filled from the settings'
    # defaults), and whether the API can answer with it (False: only the page and the MCP door pick).
    INVALID_REQUEST = (
        "invalid_request", 400, 2,
        "The body is not a JSON object of the documented shape, breaks a limit "
        "(text over {max_text_length} characters, more than {max_collection_ids} collection IDs, "
        "a body over RESOLVER['MAX_BODY_BYTES'], {max_body_bytes} bytes by default, "
        "a document nested deeper than RESOLVER['MAX_JSON_DEPTH']), "
        "or is not valid JSON or valid Unicode.",
    )
    COLLECTION_NOT_FOUND = (
        "collection_not_found", 400, 2, "A collection ID names no collection on the calendar server.")
    ACCOUNT_REJECTED = (
        "account_rejected", 400, 2,
        "A CalDAV account offered for connecting failed its live check (`details.reason`); nothing was saved.", False)
    NOT_A_CANDIDATE = (
        "not_a_candidate", 400, 2, "A selection names an item the clarification did not offer.", False)
    NO_CALENDAR_ACCOUNT = (
        "no_calendar_account", 409, 2,
        "Per-user accounts are on (RESOLVER['ACCOUNT_BACKEND']) and the caller has "
        "connected no CalDAV account: connect one at /resolve/accounts/.",
    )
    CANDIDATE_GONE = (
        "candidate_gone", 409, 2, "A selection names an offered item that is no longer live on the server.", False)
    OCCURRENCE_GONE = (
        "occurrence_gone", 409, 2, "A selection names an offered event whose offered occurrence is no longer live.", False)
    CLARIFICATION_NOT_FOUND = (
        "clarification_not_found", 404, 2, "A clarification token that is tampered, malformed, or another caller's.", False)
    CLARIFICATION_EXPIRED = (
        "clarification_expired", 410, 2, "A clarification token older than RESOLVER['CLARIFICATION_MAX_AGE_SECONDS'].", False)
    CALENDAR_UNAVAILABLE = (
        "calendar_unavailable", 503, 4,
        "The calendar server could not be read (down, timing out, refusing our credentials).",
    )
    INTERNAL_ERROR = ("internal_error", 500, 1, "A bug on our side; the body says nothing about internals.")
    THROTTLED = (
        "throttled", 429, 2,
        "Too many requests that read the calendar by this person (over the rate, or too many at once: "
        "`details.reason` `rate` or `in_flight`), or too many account checks by this person or address; "
        "retry after `Retry-After` seconds.")
    # Only the HTTP door says these (authentication, routing, throttling): no exit code.
    NOT_AUTHENTICATED = ("not_authenticated", 401, None, "No credentials, or a token that is not valid.")
    PERMISSION_DENIED = (
        "permission_denied", 403, None,
        "The credentials do not allow this (a session request without a CSRF token).")
    NOT_FOUND = ("not_found", 404, None, "No such path.")
    METHOD_NOT_ALLOWED = ("method_not_allowed", 405, None, "The path does not take this HTTP method.")
    NOT_ACCEPTABLE = ("not_acceptable", 406, None, "The Accept header excludes JSON.")
    UNSUPPORTED_MEDIA_TYPE = ("unsupported_media_type", 415, None, "The body is not application/json.")

    http_status: int
    exit_code: int | None
    when: str
    in_api: bool

    def __new__(cls, value: str, http_status: int = 500, exit_code: int | None = None, when: str = "",
                in_api: bool = True) -> ErrorCode:
        return _member(cls, value, http_status=http_status, exit_code=exit_code, when=when, in_api=in_api)

    @property
    def http_only(self) -> bool:
        """Said by the HTTP door alone (authentication, routing, throttling): no exception, no exit code."""
        return self.exit_code is None

    def describe(self, **limits: Any) -> str:
        return self.when.format(**limits)


# The command's exit code for any clarification (not an error: no exception).
EXIT_CLARIFICATION = 3


# --- sub-reasons: `details.reason` of an error or a warning ---------------------------


class CalendarFailure(StrEnum):
    """Why the calendar could not be read: `details.reason` of calendar_unavailable (and http_{status})."""

    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    FOREIGN_ORIGIN = "foreign_origin"
    BAD_RESPONSE = "bad_response"
    RESPONSE_TOO_LARGE = "response_too_large"
    ADDRESS_NOT_ALLOWED = "address_not_allowed"


class JudgmentFailure(StrEnum):
    """Why the judge gave no usable answer: `details.reason` of judgment_unavailable (and http_{status})."""

    DISABLED = "disabled"
    TIMEOUT = "timeout"
    BUDGET_EXHAUSTED = "budget_exhausted"
    CONNECTION_ERROR = "connection_error"
    REQUEST_ERROR = "request_error"
    NOT_JSON = "not_json"
    DEFECTIVE_RESPONSE = "defective_response"
    INTERNAL_ERROR = "internal_error"


class AccountRejection(StrEnum):
    """Why a CalDAV account offered for connecting was refused: `details.reason` of account_rejected."""

    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    UNREACHABLE = "unreachable"
    NOT_CALDAV = "not_caldav"
    ADDRESS_NOT_ALLOWED = "address_not_allowed"
    INVALID = "invalid"
    TOO_MANY_ACCOUNTS = "too_many_accounts"


_HTTP_REASON = re.compile(r"http_([1-5][0-9][0-9])")


def http_reason(status: int) -> str:
    """The sub-reason for a server that answered with an unexpected HTTP status: `http_503`."""
    return f"http_{int(status)}"


def http_status_of(reason: object) -> int | None:
    """The status an `http_{status}` sub-reason names, else None."""
    found = _HTTP_REASON.fullmatch(str(reason)) if reason is not None else None
    return int(found.group(1)) if found else None


def is_transient(reason: object) -> bool:
    """A failure worth one more try: a timeout, or the server's own error (5xx)."""
    status = http_status_of(reason)
    return reason == CalendarFailure.TIMEOUT or (status is not None and 500 <= status < 600)


def judge_is_off(code: object, details: dict[str, Any] | None) -> bool:
    """A judgment_unavailable warning that only says the judge is off: for people, nothing is wrong."""
    return code == WarningCode.JUDGMENT_UNAVAILABLE and (details or {}).get("reason") == JudgmentFailure.DISABLED
