"""The API door: parse, call one service, render the envelope."""
from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from resolver import services
from resolver.api.base import ResolverApiView, ResolveThrottle
from resolver.openapi import collections_schema, resolve_schema
from resolver.request_ids import request_id_of


class ResolveApi(ResolverApiView):
    """POST /v1/resolve: a reference in, the item (or a clarification) out."""

    throttle_scope = "resolve"
    throttle_classes = [ResolveThrottle]

    @resolve_schema
    def post(self, request: Request) -> Response:
        caller = _caller(request)
        with services.request(caller):  # one deadline, one of the person's places in flight
            answer = services.answer(request.data, caller=caller, request_id=request_id_of(request))
        return Response(answer.envelope)


class CollectionsApi(ResolverApiView):
    """GET /v1/collections: the calendars this resolver can search (it reads them live: the same throttle)."""

    throttle_scope = "resolve"  # one bucket per person with /v1/resolve and /mcp
    throttle_classes = [ResolveThrottle]

    @collections_schema
    def get(self, request: Request) -> Response:
        caller = _caller(request)
        with services.request(caller):
            return Response(services.collections_envelope(request_id=request_id_of(request), caller=caller))


def _caller(request: Request) -> services.Caller:
    # The page link is bound to the authenticated client's user and built
    # from this request, so it points at the host the client reached.
    return services.Caller(door="api", user=request.user, base_url=request.build_absolute_uri("/"))
