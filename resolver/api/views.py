"""The API door: parse, call one service, render the envelope."""
from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from resolver import services
from resolver.api.exceptions import request_id_of
from resolver.api.schema import collections_schema, resolve_schema
from resolver.api.serializers import ResolveInputSerializer
from resolver.web import services as web_services


class ResolveApi(APIView):
    """POST /v1/resolve: a reference in, the item (or a clarification) out."""

    throttle_scope = "resolve"

    @resolve_schema
    def post(self, request: Request) -> Response:
        request_id = request_id_of(request)
        serializer = ResolveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        outcome = services.resolve_reference(
            **serializer.validated_data, request_id=request_id, door="api"
        )
        # The page link is bound to the authenticated client's user and built
        # from this request, so it points at the host the client reached.
        clarification_url = web_services.clarification_url(
            outcome, user_id=request.user.pk, base_url=request.build_absolute_uri("/")
        )
        return Response(services.envelope_for(outcome, clarification_url=clarification_url))


class CollectionsApi(APIView):
    """GET /v1/collections: the calendars this resolver can search."""

    @collections_schema
    def get(self, request: Request) -> Response:
        request_id = request_id_of(request)
        collections = services.list_collections()
        data = {
            "collections": [
                {"collection_id": c.collection_id, "display_name": c.display_name} for c in collections
            ]
        }
        return Response({"schema_version": 1, "request_id": request_id, "status": "ok", "data": data,
                         "warnings": [], "error": None})
