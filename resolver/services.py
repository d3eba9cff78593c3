"""The one application layer every door calls: settings and models in, outcomes and envelopes out.

A door (the API views, `manage.py resolve`, the page, the MCP door) parses its
input, calls one function here and renders what it returns. Every function is
keyword-only:

    resolve_reference(text=, kind=, collection_ids=, time_zone=, ...) -> Outcome
    resolve_document(document, ...) -> Outcome          # a JSON object: API body, --input -, MCP
    envelope_for(outcome, clarification_url=) -> dict
    error_envelope_for(error, request_id=) -> dict      # any exception; internals never leak
    collections_envelope(request_id=, calendar=) -> dict
    clarification_url(outcome, user_id=, base_url=) -> str | None   # clarification_path: the same, no host
    read_clarification(token, user_id=) -> ClarificationClaims
    clarification_candidates(claims, calendar=) -> list[LiveCandidate]
    select_item(item_id=, kind=, candidate_ids=, collection_ids=, ...) -> Outcome  # user_selected, re-read live
    select_from_clarification(claims, item_id=) -> Outcome          # select_item with a token's scope

Backends are chosen by dotted path in `RESOLVER` (`CALENDAR_BACKEND`,
`JUDGE_BACKEND`); nothing here writes to the calendar.
"""
from __future__ import annotations

import logging
import uuid
from typing import Any, Sequence

from django.urls import NoReverseMatch, reverse

from resolver import envelope
from resolver.conf import import_setting, resolver_settings
from resolver.domain import judgment as jdg
from resolver.domain.errors import CandidateGone, NotACandidate, ResolverError
from resolver.domain.items import Collection, Kind, Method
from resolver.domain.pipeline import Outcome, Status, resolve
from resolver.domain.ports import CalendarSource, Judge, ThresholdPolicy
from resolver.domain.requests import RequestLimits, ResolveRequest, parse_document, parse_request, parse_time_zone
from resolver.web import clarification as page
from resolver.web import tokens

logger = logging.getLogger("resolver.requests")
error_logger = logging.getLogger("resolver.errors")


def new_request_id() -> str:
    return "req_" + uuid.uuid4().hex


# --- backends ------------------------------------------------------------------


def calendar_from_settings() -> CalendarSource:
    """The calendar backend `RESOLVER["CALENDAR_BACKEND"]` names, configured from the settings."""
    return import_setting("CALENDAR_BACKEND")(settings=resolver_settings)


def judge_from_settings() -> Judge:
    """The backend RESOLVER['JUDGE_BACKEND'] names (a dotted path), built from its settings."""
    from django.utils.module_loading import import_string

    backend = import_string(resolver_settings.JUDGE_BACKEND)
    return backend.from_settings()


def policy_from_settings() -> ThresholdPolicy:
    from resolver.thresholds import DatabaseThresholdPolicy

    return DatabaseThresholdPolicy()


# --- requests --------------------------------------------------------------------


def request_limits() -> RequestLimits:
    """The request rules' limits, as the settings give them (read on every call)."""
    return RequestLimits(
        max_text_length=int(resolver_settings.MAX_TEXT_LENGTH),
        max_collection_ids=int(resolver_settings.MAX_COLLECTION_IDS),
        max_candidates=min(int(resolver_settings.MAX_CANDIDATES), jdg.MAX_CANDIDATES),
    )


def default_time_zone() -> str:
    return str(resolver_settings.TIME_ZONE)


def parse(*, text: Any, kind: Any, collection_ids: Any = None, time_zone: Any = None) -> ResolveRequest:
    return parse_request(text=text, kind=kind, collection_ids=collection_ids, time_zone=time_zone,
                         limits=request_limits(), default_time_zone=default_time_zone())


# --- resolving -------------------------------------------------------------------


def resolve_reference(
    *,
    text: Any,
    kind: Any,
    collection_ids: Any = None,
    time_zone: Any = None,
    request_id: str | None = None,
    door: str = "api",
    calendar: CalendarSource | None = None,
    judge: Judge | None = None,
    policy: ThresholdPolicy | None = None,
) -> Outcome:
    """Validate, resolve, and log provenance. Raises ResolverError subclasses."""
    request = parse(text=text, kind=kind, collection_ids=collection_ids, time_zone=time_zone)
    return _resolve(request, request_id=request_id, door=door, calendar=calendar, judge=judge, policy=policy)


def resolve_document(
    document: Any,
    *,
    request_id: str | None = None,
    door: str = "api",
    calendar: CalendarSource | None = None,
    judge: Judge | None = None,
    policy: ThresholdPolicy | None = None,
) -> Outcome:
    """`resolve_reference` for a JSON object `{"text", "kind", "collection_ids"?, "time_zone"?}`."""
    request = parse_document(document, limits=request_limits(), default_time_zone=default_time_zone())
    return _resolve(request, request_id=request_id, door=door, calendar=calendar, judge=judge, policy=policy)


def _resolve(request: ResolveRequest, *, request_id: str | None, door: str, calendar: CalendarSource | None,
             judge: Judge | None, policy: ThresholdPolicy | None) -> Outcome:
    outcome = resolve(
        request=request,
        calendar=calendar or calendar_from_settings(),
        judge=judge or judge_from_settings(),
        policy=policy or policy_from_settings(),
        request_id=request_id or new_request_id(),
        max_candidates=request_limits().max_candidates,
        language=str(resolver_settings.LANGUAGE),
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


# --- envelopes -------------------------------------------------------------------


def envelope_for(outcome: Outcome, *, clarification_url: str | None = None) -> dict[str, Any]:
    return envelope.outcome_envelope(outcome, provenance=provenance_of(outcome),
                                     clarification_url=clarification_url)


def error_envelope_for(error: BaseException, *, request_id: str) -> dict[str, Any]:
    """The envelope for any failure: a ResolverError as it is, anything else as internal_error.

    Only ResolverErrors say what went wrong; an unexpected exception is logged
    here with its traceback and the caller learns nothing about internals.
    """
    if isinstance(error, ResolverError):
        return envelope.resolver_error_envelope(error, request_id=request_id)
    error_logger.error("unexpected error", exc_info=error, extra={"request_id": request_id})
    return envelope.internal_error_envelope(request_id=request_id)


def list_collections(*, calendar: CalendarSource | None = None) -> Sequence[Collection]:
    return (calendar or calendar_from_settings()).collections()


def collections_envelope(*, request_id: str, calendar: CalendarSource | None = None) -> dict[str, Any]:
    return envelope.collections_envelope(list_collections(calendar=calendar), request_id=request_id)


# --- the clarification page --------------------------------------------------------


def clarification_url(outcome: Outcome, *, user_id: object, base_url: str) -> str | None:
    """The absolute page URL for a clarification outcome, bound to `user_id`.

    `base_url` is the scheme and host (and any path prefix) the page is served
    under. None for a resolved outcome, and when the project did not mount the
    page's URLs: the app is reusable and the page is optional.
    """
    path = clarification_path(outcome, user_id=user_id)
    return None if path is None else base_url.rstrip("/") + path


def clarification_path(outcome: Outcome, *, user_id: object) -> str | None:
    if outcome.status is not Status.NEEDS_CLARIFICATION:
        return None
    token = tokens.issue(tokens.claims_for(outcome, user_id=user_id))
    try:
        return reverse("resolver_web:clarify", kwargs={"token": token})
    except NoReverseMatch:
        return None


def read_clarification(token: str, *, user_id: object) -> tokens.ClarificationClaims:
    """Raises tokens.TokenInvalid or tokens.TokenExpired."""
    return tokens.read(token, user_id=user_id, max_age=int(resolver_settings.CLARIFICATION_MAX_AGE_SECONDS))


def clarification_candidates(claims: tokens.ClarificationClaims, *,
                             calendar: CalendarSource | None = None) -> list[page.LiveCandidate]:
    """The token's candidates in its order, each as the server has it now."""
    return page.live_candidates(claims, calendar=calendar or calendar_from_settings(),
                                time_zone=parse_time_zone(default_time_zone()))


def select_item(
    *,
    item_id: str,
    kind: Kind | str,
    candidate_ids: Sequence[str] | None = None,
    collection_ids: Sequence[str] = (),
    request_id: str | None = None,
    time_zone: str | None = None,
    door: str = "web",
    calendar: CalendarSource | None = None,
) -> Outcome:
    """The person picked `item_id`: re-read it live and return the `user_selected` outcome.

    The ETag, href and occurrence are the server's now, so a write conditional
    on them is safe. Raises NotACandidate when `candidate_ids` is given and
    does not offer `item_id`, CandidateGone when the item is no longer live,
    CalendarUnavailable when the server cannot be read.
    """
    if candidate_ids is not None and item_id not in candidate_ids:
        raise NotACandidate()
    kind = Kind(kind)
    zone = parse_time_zone(default_time_zone() if time_zone is None else time_zone)
    items, read_at = page.live_items(kind=kind, collection_ids=tuple(collection_ids), wanted=(item_id,),
                                     calendar=calendar or calendar_from_settings(), time_zone=zone)
    item = items.get(item_id)
    if item is None:
        raise CandidateGone()
    occurrences = {item.item_id: item.occurrences[0]} if item.occurrences else {}
    outcome = Outcome(request_id=request_id or new_request_id(), status=Status.OK, kind=kind,
                      method=Method.USER_SELECTED, item=item, collection_ids=tuple(collection_ids),
                      occurrences=occurrences, read_at=read_at)
    log_outcome(outcome, door=door)
    return outcome


def select_from_clarification(claims: tokens.ClarificationClaims, *, item_id: str,
                              calendar: CalendarSource | None = None) -> Outcome:
    """`select_item` for the page: the candidates and scope are the token's."""
    return select_item(item_id=item_id, kind=claims.kind, candidate_ids=claims.candidate_ids,
                       collection_ids=claims.collection_ids, request_id=claims.request_id, calendar=calendar)


# --- logging ---------------------------------------------------------------------


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
