"""TEMPORARY: the application-layer functions the MCP door calls, until services.py has them.

Each function here has the name and signature it has in the application layer
(`resolver.services`); once that lands, the door imports `resolver.services`
instead and this module goes.
"""
from __future__ import annotations

from typing import Any, Sequence

from resolver import services
from resolver.calendars.base import CalendarSource
from resolver.domain.errors import InvalidRequest, ResolverError
from resolver.domain.items import Kind, Method
from resolver.domain.pipeline import Outcome, Status
from resolver.envelope import SCHEMA_VERSION, error_envelope, resolver_error_envelope
from resolver.web import services as web
from resolver.web.tokens import ClarificationClaims

NotACandidate = web.NotACandidate
CandidateGone = web.CandidateGone
new_request_id = services.new_request_id
envelope_for = services.envelope_for

_FIELDS = {"text", "kind", "collection_ids", "time_zone"}


def resolve_document(document: Any, *, request_id: str | None = None, door: str = "api") -> Outcome:
    if not isinstance(document, dict):
        raise InvalidRequest("Expected a JSON object.")
    unknown = sorted(set(document) - _FIELDS)
    if unknown:
        raise InvalidRequest("Unknown fields.", details={"fields": {n: ["Unknown field."] for n in unknown}})
    return services.resolve_reference(text=document.get("text"), kind=document.get("kind"),
                                      collection_ids=document.get("collection_ids"),
                                      request_id=request_id, door=door)


def error_envelope_for(error: BaseException, *, request_id: str) -> dict[str, Any]:
    if isinstance(error, ResolverError):
        return resolver_error_envelope(error, request_id=request_id)
    import logging

    logging.getLogger("resolver.mcp").error("unexpected error", exc_info=error, extra={"request_id": request_id})
    return error_envelope(request_id=request_id, code="internal_error", message="An unexpected error occurred.")


def collections_envelope(*, request_id: str, calendar: CalendarSource | None = None) -> dict[str, Any]:
    collections = services.list_collections(calendar=calendar)
    data = {"collections": [{"collection_id": c.collection_id, "display_name": c.display_name}
                            for c in collections]}
    return {"schema_version": SCHEMA_VERSION, "request_id": request_id, "status": "ok", "data": data,
            "warnings": [], "error": None}


def clarification_url(outcome: Outcome, *, user_id: object, base_url: str) -> str | None:
    return web.clarification_url(outcome, user_id=user_id, base_url=base_url)


def select_item(*, item_id: str, kind: Kind | str, candidate_ids: Sequence[str] | None = None,
                collection_ids: Sequence[str] = (), request_id: str | None = None,
                time_zone: str | None = None, door: str = "web",
                calendar: CalendarSource | None = None) -> Outcome:
    request_id = request_id or new_request_id()
    claims = ClarificationClaims(request_id=request_id, kind=Kind(kind), collection_ids=tuple(collection_ids),
                                 candidate_ids=tuple(candidate_ids or (item_id,)), user_id="")
    item = web.select(claims, item_id=item_id, calendar=calendar)
    outcome = Outcome(request_id=request_id, status=Status.OK, kind=Kind(kind), method=Method.USER_SELECTED,
                      item=item, collection_ids=tuple(collection_ids))
    services.log_outcome(outcome, door=door)
    return outcome
