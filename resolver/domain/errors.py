"""One exception family; each error has a stable code, an HTTP status and an exit code.

The doors (API, command, page) map these in one place each; nothing else
decides what a failure looks like to the outside.
"""
from __future__ import annotations

from typing import Any

from resolver.domain import deadline
from resolver.domain.codes import CalendarFailure, ErrorCode


class ResolverError(Exception):
    """Each subclass names its ErrorCode; the HTTP status and the exit code come with it."""

    code: ErrorCode = ErrorCode.INTERNAL_ERROR
    # Class attributes, read from `code` (resolver.domain.codes) for every subclass.
    http_status: int = ErrorCode.INTERNAL_ERROR.http_status
    exit_code: int = 1
    default_message: str = "An unexpected error occurred."

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.code.exit_code is None:
            raise TypeError(f"{cls.code} is the HTTP door's own code, not an exception's")
        cls.http_status = cls.code.http_status
        cls.exit_code = cls.code.exit_code

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)


class InvalidRequest(ResolverError):
    code = ErrorCode.INVALID_REQUEST
    default_message = "The request is not valid."


class CollectionNotFound(ResolverError):
    code = ErrorCode.COLLECTION_NOT_FOUND
    default_message = "No such collection."


class CalendarUnavailable(ResolverError):
    code = ErrorCode.CALENDAR_UNAVAILABLE
    default_message = "The calendar server could not be read."


def check_deadline() -> None:
    """Past the request's deadline (resolver/domain/deadline.py), CPU work on what was read
    (matching thousands of items) stops with the error a read past it ends in:
    calendar_unavailable, reason timeout (README), never an answer long after it."""
    if deadline.expired():
        raise CalendarUnavailable(details={"reason": CalendarFailure.TIMEOUT.value})


class InternalError(ResolverError):
    pass


class NotACandidate(ResolverError):
    """A selection names an item the clarification did not offer."""

    code = ErrorCode.NOT_A_CANDIDATE
    default_message = "The item was not offered for this question."


class CandidateGone(ResolverError):
    """A selection names an offered item that is no longer live on the server."""

    code = ErrorCode.CANDIDATE_GONE
    default_message = "That item no longer exists or is no longer open."


class NoCalendarAccount(ResolverError):
    """Per-user accounts are on and the caller has connected no CalDAV account (or is nobody).

    Never a fallback to anyone else's calendar: the caller is told to connect one.
    """

    code = ErrorCode.NO_CALENDAR_ACCOUNT
    default_message = "You have not connected a calendar account. Add one at the accounts page."


class AccountRejected(ResolverError):
    """A CalDAV account offered for connecting failed its live check; nothing was saved.

    `details.reason`: unauthorized, forbidden, unreachable, not_caldav, address_not_allowed, invalid,
    too_many_accounts.
    """

    code = ErrorCode.ACCOUNT_REJECTED
    default_message = "The calendar account could not be verified."


class Throttled(ResolverError):
    """Too many attempts in too little time; `details.retry_after_seconds` says when to try again.

    The API's throttle (DRF) produces the same code; this one is for the
    account checks a person asks the site to make (resolver/accounts.py).
    """

    code = ErrorCode.THROTTLED
    default_message = "Too many attempts; try again later."


# Codes that only the HTTP door produces (authentication, routing, throttling), with their status.
HTTP_ONLY_CODES: dict[str, int] = {code.value: code.http_status for code in ErrorCode if code.http_only}


class OccurrenceGone(ResolverError):
    """A selection names an offered event whose offered occurrence is no longer live
    (it ended, was cancelled or excluded, or a single event moved)."""

    code = ErrorCode.OCCURRENCE_GONE
    default_message = "The occurrence you were shown is no longer on the calendar."


class ClarificationNotFound(ResolverError):
    """A clarification token that is tampered, malformed, or another caller's: all look alike."""

    code = ErrorCode.CLARIFICATION_NOT_FOUND
    default_message = "This clarification is not valid."


class ClarificationExpired(ResolverError):
    """A genuine clarification token of this caller, older than CLARIFICATION_MAX_AGE_SECONDS."""

    code = ErrorCode.CLARIFICATION_EXPIRED
    default_message = "This clarification has expired; resolve the reference again."
