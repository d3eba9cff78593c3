"""The service every door calls: Django settings and models in, pipeline outcome out."""
from __future__ import annotations

import logging
import uuid
from typing import Any, Sequence

from resolver.calendars.base import CalendarSource
from resolver.calendars.caldav import CalDAVCalendar
from resolver.conf import resolver_settings
from resolver.domain import judgment as jdg
from resolver.domain.items import Collection
from resolver.domain.pipeline import Judge, Outcome, ThresholdPolicy, parse_request, resolve
from resolver.envelope import outcome_envelope

logger = logging.getLogger("resolver.requests")


def new_request_id() -> str:
    return "req_" + uuid.uuid4().hex


def calendar_from_settings() -> CalDAVCalendar:
    return CalDAVCalendar(
        url=resolver_settings.CALDAV_URL,
        username=resolver_settings.CALDAV_USERNAME,
        password=resolver_settings.CALDAV_PASSWORD,
        timeout=float(resolver_settings.CALDAV_TIMEOUT),
        horizon_days=int(resolver_settings.EVENT_HORIZON_DAYS),
        event_time_range=bool(resolver_settings.EVENT_TIME_RANGE_FILTER),
    )


def judge_from_settings() -> Judge:
    """The backend RESOLVER['JUDGE_BACKEND'] names (a dotted path), built from its settings."""
    from django.utils.module_loading import import_string

    backend = import_string(resolver_settings.JUDGE_BACKEND)
    return backend.from_settings()


def policy_from_settings() -> ThresholdPolicy:
    from resolver.thresholds import DatabaseThresholdPolicy

    return DatabaseThresholdPolicy()


def resolve_reference(
    *,
    text: Any,
    kind: Any,
    collection_ids: Any = None,
    request_id: str | None = None,
    door: str = "api",
    calendar: CalendarSource | None = None,
    judge: Judge | None = None,
    policy: ThresholdPolicy | None = None,
) -> Outcome:
    """Validate, resolve, and log provenance. Raises ResolverError subclasses."""
    request = parse_request(text=text, kind=kind, collection_ids=collection_ids)
    outcome = resolve(
        request=request,
        calendar=calendar or calendar_from_settings(),
        judge=judge or judge_from_settings(),
        policy=policy or policy_from_settings(),
        request_id=request_id or new_request_id(),
        max_candidates=int(resolver_settings.MAX_CANDIDATES),
    )
    _record_provenance(outcome)
    log_outcome(outcome, door=door)
    return outcome


def provenance_of(outcome: Outcome) -> dict[str, Any] | None:
    if outcome.question is None or not isinstance(outcome.judgment, jdg.Judgment):
        return None
    from resolver.provenance import provenance_dict

    return provenance_dict(outcome.question, outcome.judgment)


def _record_provenance(outcome: Outcome) -> None:
    provenance = provenance_of(outcome)
    if provenance is None or outcome.decision is None:
        return
    from resolver.provenance import record

    assert isinstance(outcome.judgment, jdg.Judgment)
    record(
        request_id=outcome.request_id,
        provenance=provenance,
        probabilities_by_number=outcome.judgment.number_probabilities(),
        number_to_item_id=outcome.numbering,
        decision=outcome.status.value,
        reason=outcome.decision.reason,
    )


def envelope_for(outcome: Outcome, *, clarification_url: str | None = None) -> dict[str, Any]:
    return outcome_envelope(outcome, provenance=provenance_of(outcome), clarification_url=clarification_url)


def list_collections(*, calendar: CalendarSource | None = None) -> Sequence[Collection]:
    return (calendar or calendar_from_settings()).collections()


def log_outcome(outcome: Outcome, *, door: str) -> None:
    """One structured line per resolution: no user text, no titles, no secrets."""
    logger.info(
        "resolution",
        extra={
            "request_id": outcome.request_id,
            "door": door,
            "status": outcome.status.value,
            "method": outcome.method.value if outcome.method else None,
            "calendar_ms": outcome.timings.get("calendar_ms"),
            "matching_ms": outcome.timings.get("matching_ms"),
            "judgment_ms": outcome.timings.get("judgment_ms"),
            "candidates": len(outcome.candidates),
            "calendar_requests": outcome.calendar_requests,
        },
    )
