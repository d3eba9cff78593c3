"""Project error pages: API paths get an envelope, everything else a plain page.

Unknown API paths never get here (resolver.api.urls answers them, DEBUG or
not); this covers a 404 raised inside an API view and an unhandled 500.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from resolver.domain.errors import InternalError
from resolver.envelope import error_envelope, internal_error_envelope
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
        return JsonResponse(internal_error_envelope(request_id=new_request_id()), status=InternalError.http_status)
    return defaults.server_error(request)
