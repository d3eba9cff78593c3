"""Project error pages: API paths get an envelope, everything else a plain page.

Django skips handler404 while DEBUG is on (it shows its technical 404 page), so
`ApiNotFoundMiddleware` turns any non-JSON 404 under /v1/ into the `not_found`
envelope itself: the API's answer does not depend on DEBUG.
"""
from __future__ import annotations

from typing import Any, Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from resolver.domain.errors import InternalError
from resolver.envelope import error_envelope, internal_error_envelope
from resolver.services import new_request_id

API_PREFIX = "/v1/"


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _request_id(request: HttpRequest) -> str:
    # The ID the request log gives the request (lifeproject.request_log), so both agree.
    return getattr(request, "resolver_request_id", None) or new_request_id()


def not_found_envelope(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_envelope(request_id=_request_id(request), code="not_found", message="Not found."),
                        status=404)


def not_found(request: HttpRequest, exception: Any = None) -> HttpResponse:
    if _is_api(request):
        return not_found_envelope(request)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(internal_error_envelope(request_id=_request_id(request)),
                            status=InternalError.http_status)
    return defaults.server_error(request)


class ApiNotFoundMiddleware:
    """A 404 under /v1/ that is not already an envelope (no URL matched) becomes one."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (response.status_code == 404 and _is_api(request)
                and not response.get("Content-Type", "").startswith("application/json")):
            return not_found_envelope(request)
        return response
