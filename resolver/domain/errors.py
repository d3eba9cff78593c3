"""One exception family; each error has a stable code, an HTTP status and an exit code.

The doors (API, command, page) map these in one place each; nothing else
decides what a failure looks like to the outside.
"""
from __future__ import annotations

from typing import Any


class ResolverError(Exception):
    code: str = "internal_error"
    http_status: int = 500
    exit_code: int = 1
    default_message: str = "An unexpected error occurred."

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)


class InvalidRequest(ResolverError):
    code = "invalid_request"
    http_status = 400
    exit_code = 2
    default_message = "The request is not valid."


class CollectionNotFound(ResolverError):
    code = "collection_not_found"
    http_status = 400
    exit_code = 2
    default_message = "No such collection."


class CalendarUnavailable(ResolverError):
    code = "calendar_unavailable"
    http_status = 503
    exit_code = 4
    default_message = "The calendar server could not be read."


class InternalError(ResolverError):
    pass


class NotACandidate(ResolverError):
    """A selection names an item the clarification did not offer."""

    code = "not_a_candidate"
    http_status = 400
    exit_code = 2
    default_message = "The item was not offered for this question."


class CandidateGone(ResolverError):
    """A selection names an offered item that is no longer live on the server."""

    code = "candidate_gone"
    http_status = 409
    exit_code = 2
    default_message = "That item no longer exists or is no longer open."


class NoCalendarAccount(ResolverError):
    """Per-user accounts are on and the caller has connected no CalDAV account (or is nobody).

    Never a fallback to anyone else's calendar: the caller is told to connect one.
    """

    code = "no_calendar_account"
    http_status = 409
    exit_code = 2
    default_message = "You have not connected a calendar account. Add one at the accounts page."


class AccountRejected(ResolverError):
    """A CalDAV account offered for connecting failed its live check; nothing was saved.

    `details.reason`: unauthorized, forbidden, unreachable, not_caldav, address_not_allowed, invalid.
    """

    code = "account_rejected"
    http_status = 400
    exit_code = 2
    default_message = "The calendar account could not be verified."


# Codes that only the HTTP door produces (authentication, routing, throttling).
# They live here too so that every code is declared in one module.
HTTP_ONLY_CODES: dict[str, int] = {
    "not_authenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "not_acceptable": 406,
    "unsupported_media_type": 415,
    "throttled": 429,
}

# The command's exit code for any clarification (not an error: no exception).
EXIT_CLARIFICATION = 3


class OccurrenceGone(ResolverError):
    """A selection names an offered event whose offered occurrence is no longer live
    (it ended, was cancelled or excluded, or a single event moved)."""

    code = "occurrence_gone"
    http_status = 409
    exit_code = 2
    default_message = "The occurrence you were shown is no longer on the calendar."


class ClarificationNotFound(ResolverError):
    """A clarification token that is tampered, malformed, or another caller's: all look alike."""

    code = "clarification_not_found"
    http_status = 404
    exit_code = 2
    default_message = "This clarification is not valid."


class ClarificationExpired(ResolverError):
    """A genuine clarification token of this caller, older than CLARIFICATION_MAX_AGE_SECONDS."""

    code = "clarification_expired"
    http_status = 410
    exit_code = 2
    default_message = "This clarification has expired; resolve the reference again."
