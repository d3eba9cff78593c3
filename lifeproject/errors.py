"""Project error pages: API paths get an envelope, everything else a plain page.

Django answers some failures before any view runs, and while DEBUG is on
with its technical pages (which list settings): a disallowed `Host` header (a
400 from CommonMiddleware), an unknown path (a 404), a crash in a middleware.
`ApiErrorEnvelopeMiddleware` turns every such non-JSON error under /v1/ into
the envelope for its status, so the API's answer never depends on DEBUG and
never carries a Django page.
"""
from __future__ import annotations

from typing import Any, Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.views import defaults

from resolver.domain.errors import HTTP_ONLY_CODES, InternalError, InvalidRequest
from resolver.envelope import error_envelope, internal_error_envelope
from resolver.request_ids import request_id_of

API_PREFIX = "/v1/"

# Status -> (code, message) for errors Django answers before the API's own handler can.
_BY_STATUS: dict[int, tuple[str, str]] = {
    **{status: (code, code.replace("_", " ").capitalize() + ".") for code, status in HTTP_ONLY_CODES.items()},
    400: (InvalidRequest.code, InvalidRequest.default_message),
    404: ("not_found", "Not found."),
    413: (InvalidRequest.code, "The request body is too large."),
}


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _request_id(request: HttpRequest) -> str:
    # The ID the request log gives the request (lifeproject.request_log), so both agree.
    return request_id_of(request)


def not_found_envelope(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_envelope(request_id=_request_id(request), code="not_found", message="Not found."),
                        status=404)


def error_envelope_response(request: HttpRequest, status: int) -> JsonResponse:
    """The envelope for an error status Django produced itself; internals never leak."""
    if status == 400 and _host_disallowed(request):
        body = error_envelope(request_id=_request_id(request), code=InvalidRequest.code,
                              message="The Host header names a host this service does not serve.",
                              details={"field": "host"})
        return JsonResponse(body, status=400)
    if status not in _BY_STATUS:
        return JsonResponse(internal_error_envelope(request_id=_request_id(request)),
                            status=status if status >= 500 else InternalError.http_status)
    code, message = _BY_STATUS[status]
    details: dict[str, Any] = {"field": "body"} if code == InvalidRequest.code else {}
    return JsonResponse(error_envelope(request_id=_request_id(request), code=code, message=message,
                                       details=details), status=status)


def _host_disallowed(request: HttpRequest) -> bool:
    try:
        request.get_host()
    except DisallowedHost:
        return True
    return False


def bad_request(request: HttpRequest, exception: Any = None) -> HttpResponse:
    if _is_api(request):
        return error_envelope_response(request, 400)
    return defaults.bad_request(request, exception)


def not_found(request: HttpRequest, exception: Any = None) -> HttpResponse:
    if _is_api(request):
        return not_found_envelope(request)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(internal_error_envelope(request_id=_request_id(request)),
                            status=InternalError.http_status)
    return defaults.server_error(request)


def home(request: HttpRequest) -> HttpResponse:
    """`/`: the page people come for (it asks them to sign in first)."""
    return HttpResponseRedirect(reverse("resolver_web:search"))


class ApiErrorEnvelopeMiddleware:
    """An error under /v1/ that is not already an envelope (no URL matched, a disallowed
    host, Django's own 400/413/500 pages, DEBUG or not) becomes the envelope for its status."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (response.status_code >= 400 and _is_api(request)
                and not response.get("Content-Type", "").startswith("application/json")):
            return error_envelope_response(request, response.status_code)
        return response


# The earlier name, kept for settings that still list it.
ApiNotFoundMiddleware = ApiErrorEnvelopeMiddleware
