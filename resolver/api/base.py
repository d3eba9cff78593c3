"""What every API view of the app is, whatever the host project's REST_FRAMEWORK says.

The app is installed into projects whose DRF defaults are not ours (DRF's own
defaults allow anonymous access, accept form bodies and render the browsable
API), so authentication, permission, parsing, rendering, the error envelope
and the schema class are set here, on the views, not in the project settings.
"""
from __future__ import annotations

from typing import Any, Callable

from drf_spectacular.openapi import AutoSchema
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from resolver.api.exceptions import envelope_exception_handler
from resolver.api.parsers import BoundedJSONParser
from resolver.throttling import ResolveThrottle  # noqa: F401 - the views' throttle, defined below the doors


class ResolverApiView(APIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser]
    renderer_classes = [JSONRenderer]
    throttle_classes: list[type] = []
    schema = AutoSchema()

    def get_exception_handler(self) -> Callable[..., Any]:
        return envelope_exception_handler
