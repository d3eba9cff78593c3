"""Every API error, DRF's own included, leaves as an envelope. Mapped here and only here."""
from __future__ import annotations

from typing import Any

from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response

from resolver.domain.codes import ErrorCode
from resolver.domain.errors import InternalError, ResolverError
from resolver.envelope import error_envelope
from resolver.request_ids import request_id_of

_DRF_CODES: list[tuple[type[Exception], ErrorCode]] = [
    (exceptions.NotAuthenticated, ErrorCode.NOT_AUTHENTICATED),
    (exceptions.AuthenticationFailed, ErrorCode.NOT_AUTHENTICATED),
    (exceptions.PermissionDenied, ErrorCode.PERMISSION_DENIED),
    (exceptions.NotFound, ErrorCode.NOT_FOUND),
    (exceptions.MethodNotAllowed, ErrorCode.METHOD_NOT_ALLOWED),
    (exceptions.NotAcceptable, ErrorCode.NOT_ACCEPTABLE),
    (exceptions.UnsupportedMediaType, ErrorCode.UNSUPPORTED_MEDIA_TYPE),
    (exceptions.Throttled, ErrorCode.THROTTLED),
]


def envelope_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    request = context.get("request")
    request_id = request_id_of(request)
    headers: dict[str, str] = {}
    from resolver.services import error_envelope_for

    if isinstance(exc, ResolverError):
        if "retry_after_seconds" in exc.details:  # throttled by a service (too many in flight): the header too
            headers["Retry-After"] = str(exc.details["retry_after_seconds"])
        return Response(error_envelope_for(exc, request_id=request_id), status=exc.http_status, headers=headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, SuspiciousOperation):
        # Django's own input limits (RequestDataTooBig, TooManyFieldsSent, a bad
        # Host header): the client's fault, so a 400 and never a logged 500.
        body = error_envelope(request_id=request_id, code=ErrorCode.INVALID_REQUEST, message="The request is not valid.",
                              details={"field": "body"})
        return Response(body, status=400)
    if isinstance(exc, (exceptions.ParseError, exceptions.ValidationError)):
        # The request rules are parse_document's; what reaches here is about the
        # body as a whole (not JSON, nested too deeply), in the same details shape.
        message = str(exc.detail) if isinstance(exc, exceptions.ParseError) else "The request is not valid."
        body = error_envelope(request_id=request_id, code=ErrorCode.INVALID_REQUEST, message=message,
                              details={"field": "body"})
        return Response(body, status=400)
    for exc_type, code in _DRF_CODES:
        if isinstance(exc, exc_type):
            assert isinstance(exc, exceptions.APIException)
            details: dict[str, Any] = {}
            if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
                details["retry_after_seconds"] = int(exc.wait + 0.999)
                headers["Retry-After"] = str(details["retry_after_seconds"])
            if getattr(exc, "auth_header", None):
                headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
            body = error_envelope(request_id=request_id, code=code, message=str(exc.detail), details=details)
            return Response(body, status=code.http_status, headers=headers)
    # Anything else is ours to fix; the client learns nothing about internals.
    return Response(error_envelope_for(exc, request_id=request_id), status=InternalError.http_status)
