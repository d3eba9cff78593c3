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
from resolver.domain.escaping import escape_json_bytes


class EnvelopeJSONRenderer(JSONRenderer):
    """DRF's JSON, with no raw C1 or bidi control in it (resolver/domain/escaping.py).

    A title or a calendar name is the server's text: a client that prints the
    body is not driven by it. Ordinary text renders byte for byte as DRF's.
    """

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: dict[str, Any] | None = None) -> bytes:
        return escape_json_bytes(super().render(data, accepted_media_type, renderer_context))



class ResolverApiView(APIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser]
    renderer_classes = [EnvelopeJSONRenderer]
    throttle_classes: list[type] = []
    schema = AutoSchema()

    def get_exception_handler(self) -> Callable[..., Any]:
        return envelope_exception_handler
