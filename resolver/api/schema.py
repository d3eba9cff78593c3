"""GET /v1/schema/: the API door serves the OpenAPI document described in `resolver/openapi.py`.

The description (serializers, error codes, examples, the views' decorators)
lives below the doors, since the MCP door publishes the same shapes.
`BAD_REQUEST_CODES` is re-exported for a host whose SPECTACULAR_SETTINGS name
`resolver.api.schema.BAD_REQUEST_CODES`.
"""
from __future__ import annotations

from typing import Any, Callable

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2
from drf_spectacular.utils import OpenApiResponse, extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from resolver.api.base import ResolverApiView
from resolver.api.exceptions import envelope_exception_handler
from resolver.openapi import _COMMON_ERRORS, SPECTACULAR_SETTINGS, _spectacular, error_responses, response_headers
from resolver.openapi import BAD_REQUEST_CODES  # noqa: F401 - a host's SPECTACULAR_SETTINGS may name it here


class SchemaApi(SpectacularAPIView):
    """GET /v1/schema/: this OpenAPI document, as JSON, for authenticated clients only."""

    # JSON first: errors here are envelopes like everywhere else in the API.
    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer]
    permission_classes = [IsAuthenticated]
    # Ours, not the host project's (resolver/api/base.py says why).
    authentication_classes = ResolverApiView.authentication_classes
    schema = AutoSchema()
    custom_settings = SPECTACULAR_SETTINGS

    def get_exception_handler(self) -> Callable[..., Any]:
        return envelope_exception_handler

    @extend_schema(
        operation_id="schema_retrieve",
        summary="This OpenAPI document",
        responses={
            200: OpenApiResponse(
                response={"type": "object", "required": ["openapi", "paths"], "additionalProperties": True},
                description="The OpenAPI 3.1 document.",
            ),
            **error_responses(_COMMON_ERRORS),
        },
        parameters=response_headers(_COMMON_ERRORS),
        tags=["meta"],
    )
    @_spectacular
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)
