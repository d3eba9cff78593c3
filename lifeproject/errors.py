"""Project error pages: API paths get an envelope, everything else a plain page."""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from resolver.envelope import error_envelope
from resolver.services import new_request_id


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/v1/")


def not_found(request: HttpRequest, exception: Any = None) -> HttpResponse:
    if _is_api(request):
        body = error_envelope(request_id=new_request_id(), code="not_found", message="Not found.")
        return JsonResponse(body, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        body = error_envelope(request_id=new_request_id(), code="internal_error",
                              message="An unexpected error occurred.")
        return JsonResponse(body, status=500)
    return defaults.server_error(request)
