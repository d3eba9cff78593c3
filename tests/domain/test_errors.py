"""resolver/domain/errors.py: each exception's code, HTTP status and exit code, its message, and the deadline check.

The codes themselves (their statuses, descriptions and documentation) are in
tests/domain/test_codes.py.
"""
from __future__ import annotations

import pytest

from resolver.domain import deadline
from resolver.domain.codes import CalendarFailure, ErrorCode
from resolver.domain.errors import (HTTP_ONLY_CODES, CalendarUnavailable, InternalError, InvalidRequest,
                                    ResolverError, Throttled, check_deadline)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_error_code__every_exception_has_its_member():
    raised = {cls.code for cls in _subclasses(ResolverError)} | {ResolverError.code}
    assert raised == {code for code in ErrorCode if not code.http_only}
    for cls in _subclasses(ResolverError):
        assert (cls.http_status, cls.exit_code) == (cls.code.http_status, cls.code.exit_code), cls


def test_error_code__an_http_only_code_cannot_be_raised():
    with pytest.raises(TypeError):
        type("NotFound", (ResolverError,), {"code": ErrorCode.NOT_FOUND})


@pytest.mark.parametrize(("error", "code", "status", "exit_code"), [
    (InvalidRequest, "invalid_request", 400, 2),
    (CalendarUnavailable, "calendar_unavailable", 503, 4),
    (Throttled, "throttled", 429, 2),
    (InternalError, "internal_error", 500, 1),
], ids=lambda value: getattr(value, "__name__", None))
def test_errors__a_few_statuses_and_exit_codes_spelled_out(error, code, status, exit_code):
    """The statuses and exit codes the README promises, written here by hand, not read from the enum."""
    assert (error.code.value, error.http_status, error.exit_code) == (code, status, exit_code)


def test_errors__the_message_defaults_and_the_details_are_the_callers():
    error = InvalidRequest(details={"field": "text"})
    assert error.message == str(error) == "The request is not valid." and error.details == {"field": "text"}
    named = CalendarUnavailable("Down.")
    assert named.message == str(named) == "Down." and named.details == {}
    assert named.details is not CalendarUnavailable().details  # never one dict shared by every instance


def test_errors__an_internal_error_is_the_base_code():
    assert InternalError.code is ResolverError.code is ErrorCode.INTERNAL_ERROR


def test_errors__http_only_codes_carry_their_status_and_no_exception_raises_one():
    assert HTTP_ONLY_CODES == {code.value: code.http_status for code in ErrorCode if code.exit_code is None}
    assert HTTP_ONLY_CODES and all(400 <= status < 600 for status in HTTP_ONLY_CODES.values())
    # The module's own classes: a class refused above may linger in __subclasses__ until collected.
    declared = {cls.code.value for cls in _subclasses(ResolverError) if cls.__module__ == ResolverError.__module__}
    assert declared and not set(HTTP_ONLY_CODES) & declared


def test_check_deadline__nothing_outside_a_request_or_before_its_end():
    check_deadline()
    with deadline.starting(60):
        check_deadline()


def test_check_deadline__past_the_end_is_calendar_unavailable_with_reason_timeout():
    with deadline.starting(0), pytest.raises(CalendarUnavailable) as caught:
        check_deadline()
    assert caught.value.details == {"reason": CalendarFailure.TIMEOUT.value} == {"reason": "timeout"}
