"""Every code a door says, described once: reasons, warnings, errors and their sub-reasons.

Each code is a `StrEnum` member whose value is the string the envelope carries,
so the JSON is the same whether a member or its value is written. With the code
come the texts that describe it: the OpenAPI document (resolver/openapi.py),
the envelope's prompt (the pipeline asks the reason for it), the page
(resolver/web/), the command and the MCP door are built from these, so adding a
reason is one member here, the place in the pipeline that gives it, and the row
in the README's (and docs/doors.md's) table (tests/domain/test_codes.py checks
every member is documented, has its texts and is listed there with its
description).

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


# The prompt's last sentence when more matched than are listed ({matched}, {kept}).
_NARROW = ("{matched} items matched and only the best {kept} are listed: "
           "narrow the scope with a collection or more words if yours is missing.")


class Reason(StrEnum):
    """Why a clarification was needed: `data.reason`, a stable code for programs."""

    # value, description (the API's), heading (the page's; {kind} is task or event), legend (the
    # page's line over the candidates, or its only line when there are none), question (the start of
    # the envelope's prompt for people, `questions[0].prompt`; {matched}: how many matched,
    # {question}: the question for the number listed), and narrow (what the prompt adds when not
    # all are listed). `prompt()` puts them together.
    DUPLICATE_TITLES = (
        "duplicate_titles",
        "Several live items match the reference exactly (ID, UID or title).",
        "Several {kind}s have this title",
        "These items all match your reference exactly. Choose one.",
        "{matched} items match this reference exactly. Which one do you mean?",
        "Only the first {kept} are listed: narrow the scope with a collection if yours is missing.",
    )
    AMBIGUOUS = (
        "ambiguous",
        "Several candidates and no decision: the judge is off or unavailable, a tie, "
        "or the top candidate is below an approved threshold.",
        "Which {kind} do you mean?",
        "Several items could match your reference. Choose one.",
        "Which item do you mean?",
    )
    SINGLE_CANDIDATE = (
        "single_candidate",
        "One candidate and no decision (the judge off or unavailable, or below an approved "
        "threshold): the question is whether it is the item meant.",
        "Is this the {kind} you mean?",
        "The one item that could match",
        "Is this the item you mean?",
    )
    JUDGE_NO_MATCH = (
        "judge_no_match",
        "The judge's most probable option is `no_match`.",
        "None of these seems to match",
        "None of these seems to match your reference; choose one if it is yours, or search again.",
        "None of these items seems to match the reference. {question}",
    )
    NO_CANDIDATES = (
        "no_candidates",
        "Nothing matched the reference, or nothing the relevance model finds may be meant; or it names only a "
        "done item or an item of the other kind (the warnings `closed_item_matched`, `other_kind_matched` say "
        "which).",
        "Nothing matched",
        # The page's text: a typographic apostrophe, which HTML escaping leaves as it is.
        "Nothing in your calendars matches your reference. Rephrase it, or use more of the item\u2019s title.",
        "Nothing in your calendars matches this reference. Rephrase it, or use more of the item's title.",
    )

    description: str
    heading: str
    legend: str
    question: str
    narrow: str

    def __new__(cls, value: str, description: str = "", heading: str = "", legend: str = "", question: str = "",
                narrow: str = _NARROW) -> Reason:
        return _member(cls, value, description=description, heading=heading, legend=legend, question=question,
                       narrow=narrow)

    @classmethod
    def for_page(cls, value: str | None, *, has_candidates: bool) -> Reason:
        """The reason a page shows: a token from before reasons were signed has none, and an
        unknown one reads as the general question (never an error page for a stale link)."""
        if value in cls._value2member_map_:
            return cls(value)
        return cls.AMBIGUOUS if has_candidates else cls.NO_CANDIDATES

    def page_heading(self, kind: str) -> str:
        return self.heading.format(kind=kind)

    @property
    def yes_or_no(self) -> bool:
        """The question is whether the one candidate is the item meant: the page ticks it, ready to confirm."""
        return self is Reason.SINGLE_CANDIDATE

    def prompt(self, *, listed: int, matched: int) -> str:
        """The clarification's question for people (`questions[0].prompt`): `listed` candidates
        shown of `matched`; when some are left out, how to narrow the scope."""
        one = Reason.SINGLE_CANDIDATE if listed == 1 else Reason.AMBIGUOUS
        parts = [self.question.format(matched=matched, question=one.question)]
        if matched > listed:
            parts.append(self.narrow.format(matched=matched, kept=listed))
        return " ".join(parts)


class WarningCode(StrEnum):
    """A fact the caller should know, in `warnings[].code`; never an error."""

    # value, description (the API's), message (the envelope's), a note for a person choosing
    # among the candidates where the warning changes what they see (the MCP question adds it), and
    # the clarification's prompt where the warning is what it says (then the message is the prompt).
    ITEMS_SKIPPED = (
        "items_skipped",
        "Calendar resources that could not be read, or that exceed a bound, were skipped (`details.count`, "
        "`details.reasons`); each is also logged with its href.",
        "Some calendar resources could not be read and were skipped.",
    )
    CANDIDATE_NARROWED = (
        "candidate_narrowed",
        "More items matched than can be listed (`details.matched`, `details.kept`); the prompt asks to narrow "
        "the scope.",
        "More items matched than can be listed; only the best matches are candidates.",
    )
    JUDGMENT_UNAVAILABLE = (
        "judgment_unavailable",
        "The judge gave no usable answer, or is off (`details.reason` `disabled`: the message then says so); "
        "candidates are in search order.",
        "The judgment service gave no usable answer; candidates are in search order.",
    )
    OCCURRENCE_OUTSIDE_RANGE = (
        "occurrence_outside_range",
        "No occurrence of these events falls in the time the reference names (`details.item_ids`); each shows "
        "the occurrence nearest to it.",
        "No occurrence of these events falls in the time the reference names; the nearest is shown.",
        "No occurrence falls in the time named; the nearest is shown.",
    )
    EMPTY_TIME_RANGE = (
        "empty_time_range",
        "A reference by date alone found nothing due or occurring then (`details.searched`, "
        "`details.suggested`: the range searched and a wider one, null for \"overdue\"); the prompt names both.",
        "Nothing is due or occurring in the range the reference names; try a wider one.",
        "",
        # {searched} and {wider}: ranges as resolver/domain/emptyrange.py describes them.
        "Nothing is due or occurring {searched}{every_day}. Try a wider range, such as {wider}, or name the item.",
    )
    CLOSED_ITEM_MATCHED = (
        "closed_item_matched",
        "The reference names an item that is completed or cancelled, and no live one "
        "(`details.items`: its `item_id`, `title`, `status` and `collection_id`, at most 3); "
        "nothing is offered.",
        "The reference names an item that is completed or cancelled.",
        "",
        "Nothing open in your calendars matches this reference: it names an item that is already completed "
        "or cancelled. Name an open item, or reopen that one in your calendar app.",
    )
    OTHER_KIND_MATCHED = (
        "other_kind_matched",
        "The reference names an item of the other kind (an event where tasks were asked for, or a task where "
        "events were), and none of the kind asked for (`details.items`: its `item_id`, `title`, `kind` and "
        "`collection_id`, at most 3); nothing is offered.",
        "The reference names an item of the other kind.",
        "",
        # {asked}, {named}: "task" / "event", the kind asked for and the kind of the item named
        # ({named_with_article}: "an event", or "events" when several are named).
        "No {asked} in your calendars matches this reference: it names {named_with_article}. Ask for {named}s "
        "instead, or name one of your {asked}s.",
    )
    WORD_SWAPPED = (
        "word_swapped",
        "An approved threshold would have resolved the relevance model's first candidate, but it swaps a word "
        "of the reference for another in the same place (`details`: its `item_id`, the `reference_word` and "
        "the `title_word`): it is listed first and asked, never resolved on confidence.",
        "The first candidate has another word where the reference has its own; it is asked, not resolved.",
    )
    SERVER_FILTER_SKIPPED = (
        "server_filter_skipped",
        "The server timed out or failed (5xx) on its own time-range filter; these collections were read "
        "without it "
        "(`details.collection_ids`).",
        "The calendar server failed on its own time-range filter; events were read without it.",
    )

    description: str
    message: str
    note: str
    prompt: str

    def __new__(cls, value: str, description: str = "", message: str = "", note: str = "",
                prompt: str = "") -> WarningCode:
        return _member(cls, value, description=description, message=message, note=note, prompt=prompt)


# The judge's own word for "off", and the message that says so rather than that a service failed.
JUDGE_OFF_MESSAGE = "The judge is off; candidates are in search order."
# empty_time_range's prompt for "overdue" (everything due before now: nothing wider to suggest),
# and what it adds for a time of day on any day ({every_day} above).
NOTHING_OVERDUE = "Nothing is overdue."
EVERY_DAY = " (at that time on any day)"


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
