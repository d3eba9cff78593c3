"""The OpenAPI description of the API: the envelope, every error code, examples.

Nothing here runs on a request except SchemaApi. The serializers below only
describe shapes for drf-spectacular; the envelope itself is built by
`resolver.envelope`, and the tests hold the two together (Schemathesis checks
every response against this schema).

The error codes come from `resolver.domain.errors`, so a code added there
shows up here without a second list to keep in step.
"""
from __future__ import annotations

import functools
from http import HTTPStatus
from typing import Any, Callable, Iterable, TypeVar

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from drf_spectacular.views import SpectacularAPIView
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from resolver.api.base import ResolverApiView
from resolver.api.exceptions import envelope_exception_handler
from resolver.api.serializers import ResolveInputSerializer
from resolver.conf import DEFAULTS
from resolver.domain import errors
from resolver.domain.items import Kind, Method
from resolver.domain.judgment import MAX_CANDIDATES
from resolver.envelope import SCHEMA_VERSION

F = TypeVar("F", bound=Callable[..., Any])

# drf-spectacular's settings for this document, applied by SchemaApi whatever
# the host project's SPECTACULAR_SETTINGS say.
SPECTACULAR_SETTINGS: dict[str, Any] = {
    "TITLE": "Reference resolver API",
    "DESCRIPTION": (
        "Resolves an informal reference to one live CalDAV task or event, or asks which one. "
        "Every response is an envelope: `status` is `ok`, `needs_clarification` or `error`, "
        "and an error carries a stable `error.code`."
    ),
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    # Request and response shapes differ (the request rejects unknown fields).
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"BadRequestCodeEnum": "resolver.api.schema.BAD_REQUEST_CODES"},
}

MAX_TEXT_LENGTH = DEFAULTS["MAX_TEXT_LENGTH"]
MAX_COLLECTION_IDS = DEFAULTS["MAX_COLLECTION_IDS"]

# Why a clarification was needed: `data.reason`, a stable code for programs.
REASONS: dict[str, str] = {
    "duplicate_titles": "Several live items match the reference exactly (ID, UID or title).",
    "ambiguous": "Several candidates and no decision: the judge is off or unavailable, a tie, "
                 "or the top candidate is below an approved threshold.",
    "single_candidate": "One candidate and no decision (the judge off or unavailable, or below an approved "
                        "threshold): the question is whether it is the item meant.",
    "judge_no_match": "The judge's most probable option is `no_match`.",
    "no_candidates": "Nothing matched the reference.",
}

# --- error codes, by HTTP status -------------------------------------------

_DOMAIN_ERRORS: tuple[type[errors.ResolverError], ...] = (
    errors.InvalidRequest,
    errors.CollectionNotFound,
    errors.CalendarUnavailable,
    errors.NoCalendarAccount,
    errors.InternalError,
)


def error_codes_by_status() -> dict[int, tuple[str, ...]]:
    """Every stable error code the API can send, grouped by its HTTP status."""
    by_status: dict[int, list[str]] = {}
    pairs = [(e.code, e.http_status) for e in _DOMAIN_ERRORS] + list(errors.HTTP_ONLY_CODES.items())
    for code, status in pairs:
        if code not in by_status.setdefault(status, []):
            by_status[status].append(code)
    return {status: tuple(codes) for status, codes in sorted(by_status.items())}


_WHEN: dict[str, str] = {
    "invalid_request": "The body is not a JSON object of the documented shape, breaks a limit "
    f"(text over {MAX_TEXT_LENGTH} characters, more than {MAX_COLLECTION_IDS} collection IDs, "
    f"a body over RESOLVER['MAX_BODY_BYTES'], {DEFAULTS['MAX_BODY_BYTES']} bytes by default), "
    "or is not valid JSON or valid Unicode.",
    "collection_not_found": "A collection ID names no collection on the calendar server.",
    "no_calendar_account": "Per-user accounts are on (RESOLVER['ACCOUNT_BACKEND']) and the caller has "
                           "connected no CalDAV account: connect one at /resolve/accounts/.",
    "not_authenticated": "No credentials, or a token that is not valid.",
    "permission_denied": "The credentials do not allow this (a session request without a CSRF token).",
    "not_found": "No such path.",
    "method_not_allowed": "The path does not take this HTTP method.",
    "not_acceptable": "The Accept header excludes JSON.",
    "unsupported_media_type": "The body is not application/json.",
    "throttled": "Too many resolutions by this client; retry after `Retry-After` seconds.",
    "internal_error": "A bug on our side; the body says nothing about internals.",
    "calendar_unavailable": "The calendar server could not be read (down, timing out, refusing our credentials).",
}

_EXAMPLE_ERRORS: dict[str, tuple[str, dict[str, Any]]] = {
    "invalid_request": (
        f"`text` must be at most {MAX_TEXT_LENGTH} characters.",
        {"field": "text", "max_length": MAX_TEXT_LENGTH},
    ),
    "collection_not_found": ("Unknown collection ID.", {"collection_ids": ["holidays"]}),
    "no_calendar_account": (errors.NoCalendarAccount.default_message, {}),
    "not_authenticated": ("Authentication credentials were not provided.", {}),
    "permission_denied": ("CSRF Failed: CSRF token missing.", {}),
    "not_found": ("Not found.", {}),
    "method_not_allowed": ('Method "GET" not allowed.', {}),
    "not_acceptable": ("Could not satisfy the request Accept header.", {}),
    "unsupported_media_type": ('Unsupported media type "text/plain" in request.', {}),
    "throttled": ("Request was throttled. Expected available in 12 seconds.", {"retry_after_seconds": 12}),
    "internal_error": ("An unexpected error occurred.", {}),
    "calendar_unavailable": ("The calendar server could not be read.", {"reason": "timeout"}),
}

# --- field helpers ----------------------------------------------------------


def _schema_field(schema: dict[str, Any], **kwargs: Any) -> serializers.Field:
    """A field described by a raw schema.

    A fresh class each time: serializers deep-copy their fields by re-creating
    them from the class, so an annotation on an instance would be lost.
    """
    cls = extend_schema_field(schema)(type("DescribedField", (serializers.Field,), {}))
    return cls(**kwargs)


def _enum(values: Iterable[Any], *, nullable: bool = False, description: str = "") -> serializers.Field:
    allowed = list(values)
    types = sorted({"integer" if isinstance(v, int) else "string" for v in allowed})
    schema: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    # `const` for a single value: drf-spectacular hoists every `enum` into a component
    # named after the field, and a dozen one-value "status" enums would collide.
    if len(allowed) == 1:
        schema["const"] = allowed[0]
    else:
        schema["enum"] = allowed
    if nullable:
        schema = {"oneOf": [schema, {"type": "null"}]}
    if description:
        schema["description"] = description
    return _schema_field(schema)


def _null(description: str) -> serializers.Field:
    return _schema_field({"type": "null", "description": description})


def _details(description: str) -> serializers.Field:
    return _schema_field({"type": "object", "additionalProperties": True, "description": description})


_KINDS = [k.value for k in Kind]
_METHODS = [m.value for m in Method]

# --- the envelope's parts -----------------------------------------------------


class WarningSerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text="Stable code: items_skipped, candidate_narrowed, judgment_unavailable, occurrence_outside_range "
                  "(more may be added)."
    )
    message = serializers.CharField()
    details = _details("Code-specific facts (counts, reasons); never user text or secrets.")


class JudgmentProvenanceSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="The question's ID, e.g. reference_match.v1.")
    fingerprint = serializers.CharField(help_text="Digest of the question's trusted wording.")
    model = serializers.CharField(help_text="The versioned model that answered.")
    jev_request_id = serializers.CharField(allow_null=True)
    candidate_count = serializers.IntegerField(min_value=1)
    latency_ms = serializers.IntegerField(min_value=0)
    attempts = serializers.IntegerField(min_value=1)
    backend = serializers.CharField(help_text="The judge backend: jev or openai.")
    probability_source = serializers.ChoiceField(
        choices=["service", "logprobs", "none"],
        help_text="service: Jev's distribution; logprobs: from token log-probabilities; none: advice only.",
    )
    attempt_validity = serializers.ListField(
        child=serializers.CharField(), help_text="Each model answer in order: valid, or the defect's reason."
    )
    retrieval_model = serializers.CharField(
        allow_null=True, required=False,
        help_text="The semantic signal's model when it chose or ordered the candidates (RESOLVER SEMANTIC); "
                  "null otherwise. Part of the fingerprint then.")


class OccurrenceSerializer(serializers.Serializer):
    start = serializers.CharField(help_text="ISO 8601 with offset.")
    end = serializers.CharField(help_text="ISO 8601 with offset.")
    recurrence_id = serializers.CharField(
        allow_null=True, help_text="The instance's RECURRENCE-ID (ISO 8601), to act on this one instance of "
                                   "a series; null for a single event."
    )


def _occurrence() -> serializers.Field:
    return OccurrenceSerializer(
        allow_null=True, required=False,
        help_text="Events only: the occurrence the reference names, else the next live one; null when unknown.",
    )


def _read_at() -> serializers.Field:
    return _schema_field({
        "oneOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
        "description": "When this request read the calendar: ISO 8601 in UTC (`Z`).",
    })


class ItemFieldsSerializer(serializers.Serializer):
    item_id = serializers.CharField(help_text="Stable ID derived from the collection path and the UID.")
    uid = serializers.CharField(allow_blank=True)
    collection_id = serializers.CharField(allow_blank=True)
    href = serializers.CharField(
        allow_blank=True, help_text="The resource's path exactly as the server reported it: the target of a "
                                    "conditional write (If-Match: etag). Never built from the UID."
    )
    title = serializers.CharField(allow_blank=True)
    etag = serializers.CharField(allow_blank=True, help_text="The ETag read just now, for a conditional write.")
    kind = _enum(_KINDS)
    due = serializers.CharField(allow_null=True, required=False, help_text="Tasks only.")
    start = serializers.CharField(allow_null=True, required=False, help_text="Events only.")
    occurrence = _occurrence()


class ResolvedItemSerializer(ItemFieldsSerializer):
    method = _enum(_METHODS, description="How the item was chosen.")
    judgment_provenance = JudgmentProvenanceSerializer(allow_null=True)
    read_at = _read_at()


class CandidateSerializer(ItemFieldsSerializer):
    probability = serializers.FloatField(
        min_value=0.0, max_value=1.0, required=False, allow_null=True,
        help_text="Only when the judgment service answered; null when it named an option without "
                  "probabilities (advice only).",
    )
    suggested = serializers.BooleanField(
        required=False, help_text="Only when the judgment service answered: its pick (ordered first). Advice: "
                                  "the person still chooses.")


class OptionSerializer(serializers.Serializer):
    label = serializers.CharField(allow_blank=True)
    value = serializers.CharField(help_text="An item_id.")


class ClarificationQuestionSerializer(serializers.Serializer):
    id = _enum(["reference_selection"])
    prompt = serializers.CharField()
    options = OptionSerializer(many=True)


class ClarificationSerializer(serializers.Serializer):
    reason = _enum(list(REASONS), description="Why a clarification was needed, for programs: "
                   + " ".join(f"`{code}`: {text}" for code, text in REASONS.items()))
    questions = ClarificationQuestionSerializer(many=True)
    candidates = CandidateSerializer(many=True, help_text=f"At most {MAX_CANDIDATES}, best first.")
    method = _enum(_METHODS, nullable=True)
    judgment_provenance = JudgmentProvenanceSerializer(allow_null=True)
    read_at = _read_at()
    clarification_url = serializers.URLField(required=False, help_text="A page where a person can choose.")


class CollectionSerializer(serializers.Serializer):
    collection_id = serializers.CharField()
    display_name = serializers.CharField(allow_blank=True)


class CollectionListSerializer(serializers.Serializer):
    collections = CollectionSerializer(many=True)


def _envelope(name: str, *, status: str, data: serializers.Field, error: serializers.Field) -> serializers.Serializer:
    return inline_serializer(
        name=name,
        fields={
            "schema_version": _enum([SCHEMA_VERSION]),
            "request_id": serializers.CharField(),
            "status": _enum([status]),
            "data": data,
            "warnings": WarningSerializer(many=True),
            "error": error,
        },
    )


RESOLVED_ENVELOPE = _envelope(
    "ResolvedEnvelope", status="ok", data=ResolvedItemSerializer(), error=_null("Always null when status is ok.")
)
CLARIFICATION_ENVELOPE = _envelope(
    "ClarificationEnvelope",
    status="needs_clarification",
    data=ClarificationSerializer(),
    error=_null("Always null when status is needs_clarification."),
)
COLLECTIONS_ENVELOPE = _envelope(
    "CollectionsEnvelope", status="ok", data=CollectionListSerializer(), error=_null("Always null when status is ok.")
)
RESOLVE_ENVELOPE = PolymorphicProxySerializer(
    component_name="ResolveEnvelope",
    serializers={"ok": RESOLVED_ENVELOPE, "needs_clarification": CLARIFICATION_ENVELOPE},
    resource_type_field_name="status",
)


@functools.cache
def _error_envelope(status: int, codes: tuple[str, ...]) -> serializers.Serializer:
    # One instance per status: drf-spectacular names components by class, and two
    # classes with one name would be two different components.
    phrase = HTTPStatus(status).phrase.title().replace(" ", "").replace("-", "")
    error = inline_serializer(
        name=f"Error{status}",
        fields={
            "code": _enum(codes),
            "message": serializers.CharField(help_text="For people; may change. Match on `code`."),
            "details": _details("Code-specific facts, e.g. the fields that failed validation."),
        },
    )
    return _envelope(f"{phrase}Envelope", status="error", data=_null("Always null when status is error."),
                     error=error)


def _error_example(status: int, code: str) -> OpenApiExample:
    message, details = _EXAMPLE_ERRORS.get(code, ("", {}))
    return OpenApiExample(
        code,
        value={
            "schema_version": SCHEMA_VERSION,
            "request_id": "req_0f8e2c1d4b5a49c6a7d8e9f001122334",
            "status": "error",
            "data": None,
            "warnings": [],
            "error": {"code": code, "message": message, "details": details},
        },
        status_codes=[str(status)],
        response_only=True,
    )


def error_responses(statuses: Iterable[int]) -> dict[int, OpenApiResponse]:
    by_status = error_codes_by_status()
    responses: dict[int, OpenApiResponse] = {}
    for status in statuses:
        codes = by_status[status]
        description = " ".join(f"`{code}`: {_WHEN.get(code, '')}" for code in codes)
        responses[status] = OpenApiResponse(
            response=_error_envelope(status, codes),
            description=description,
            examples=[_error_example(status, code) for code in codes],
        )
    return responses


# Errors any authenticated endpoint can answer with, whatever its input.
_COMMON_ERRORS = (401, 403, 404, 405, 406, 500)

# The 400 codes, named for ENUM_NAME_OVERRIDES: drf-spectacular would call the
# hoisted enum after the field ("CodeEnum"), which says nothing.
BAD_REQUEST_CODES = list(error_codes_by_status()[400])

_HEADERS: dict[int, OpenApiParameter] = {
    401: OpenApiParameter(
        "WWW-Authenticate", str, OpenApiParameter.HEADER, response=[401], required=True,
        description="The scheme to authenticate with: `Token`.",
    ),
    429: OpenApiParameter(
        "Retry-After", int, OpenApiParameter.HEADER, response=[429], required=True,
        description="Seconds to wait before the next resolution (also in `error.details`).",
    ),
}


def response_headers(statuses: Iterable[int]) -> list[OpenApiParameter]:
    return [_HEADERS[status] for status in statuses if status in _HEADERS]

# --- examples -----------------------------------------------------------------

_READ_AT = "2026-03-10T08:15:02.114Z"
_ITEM = {
    "item_id": "itm_4f2d8c0a9b7e6d5c4b3a291807f6e5d4",
    "uid": "t-portfolio",
    "collection_id": "work",
    "href": "/demo/work/not-the-uid-4711.ics",
    "title": "Draft portfolio outline",
    "etag": '"1700000000-42"',
    "kind": "task",
    "due": "2026-03-13T09:00:00+00:00",
}
_EVENT = {
    "item_id": "itm_9a8b7c6d5e4f30211203f4e5d6c7b8a9",
    "uid": "demo-weekly-sync",
    "collection_id": "work",
    "href": "/demo/work/demo-weekly-sync.ics",
    "title": "Weekly sync",
    "etag": '"1700000000-12"',
    "kind": "event",
    "start": "2025-03-11T09:00:00+00:00",
    "occurrence": {"start": "2026-03-17T09:00:00+00:00", "end": "2026-03-17T10:00:00+00:00",
                   "recurrence_id": "2026-03-17T09:00:00+00:00"},
}


def _ok(name: str, summary: str, item: dict[str, Any]) -> OpenApiExample:
    return OpenApiExample(
        name,
        summary=summary,
        value={
            "schema_version": SCHEMA_VERSION,
            "request_id": "req_2b1f3c4d5e6f47a8b9c0d1e2f3a4b5c6",
            "status": "ok",
            "data": {**item, "method": "deterministic", "judgment_provenance": None, "read_at": _READ_AT},
            "warnings": [],
            "error": None,
        },
        status_codes=["200"],
        response_only=True,
    )


RESOLVED_EXAMPLE = _ok("resolved", "Exactly one live item matches exactly", _ITEM)
RESOLVED_EVENT_EXAMPLE = _ok("resolved_event", "A recurring event: act on `occurrence.recurrence_id`", _EVENT)

_OFFSITE = [
    {"item_id": "itm_a1b2c3d4e5f60718293a4b5c6d7e8f90", "uid": "t-offsite-personal", "collection_id": "personal",
     "href": "/demo/personal/t-offsite-personal.ics", "title": "Team offsite planning",
     "etag": '"1700000000-7"', "kind": "task", "due": None},
    {"item_id": "itm_0f9e8d7c6b5a49382716f5e4d3c2b1a0", "uid": "t-offsite-work", "collection_id": "work",
     "href": "/demo/work/0b1c9e4e-offsite.ics", "title": "Team offsite planning",
     "etag": '"1700000000-9"', "kind": "task", "due": "2026-03-14T09:00:00+00:00"},
]
_DESIGN = [
    {"item_id": "itm_5d4c3b2a1f0e49d8c7b6a5f4e3d2c1b0", "uid": "demo-design-review", "collection_id": "work",
     "href": "/demo/work/demo-design-review.ics", "title": "Design review", "etag": '"1700000000-3"',
     "kind": "event", "start": "2026-03-12T09:00:00+00:00",
     "occurrence": {"start": "2026-03-12T09:00:00+00:00", "end": "2026-03-12T10:00:00+00:00",
                    "recurrence_id": None}},
    {"item_id": "itm_b0c1d2e3f4a5968778695a4b3c2d1e0f", "uid": "demo-design-retro", "collection_id": "work",
     "href": "/demo/work/demo-design-retro.ics", "title": "Design retro", "etag": '"1700000000-4"',
     "kind": "event", "start": "2026-03-14T09:00:00+00:00",
     "occurrence": {"start": "2026-03-14T09:00:00+00:00", "end": "2026-03-14T10:00:00+00:00",
                    "recurrence_id": None}},
]
_JUDGED = {"question": "reference_match.v1", "fingerprint": "sha256:3f1e...", "model": "jev-2026-01",
           "jev_request_id": "jev_8c7b6a", "candidate_count": 2, "latency_ms": 412, "attempts": 1,
           "backend": "jev", "probability_source": "service", "attempt_validity": ["valid"]}


def _clarification(reason: str, summary: str, prompt: str, candidates: list[dict[str, Any]], *,
                   method: str | None, warnings: list[dict[str, Any]] | None = None,
                   judged: dict[str, float] | None = None) -> OpenApiExample:
    listed = []
    for candidate in candidates:
        entry = dict(candidate)
        if judged is not None:
            entry["probability"] = judged[candidate["uid"]]
            entry["suggested"] = False
        listed.append(entry)
    return OpenApiExample(
        reason,
        summary=summary,
        value={
            "schema_version": SCHEMA_VERSION,
            "request_id": "req_7c6b5a4f3e2d41c0b9a8f7e6d5c4b3a2",
            "status": "needs_clarification",
            "data": {
                "reason": reason,
                "questions": [{
                    "id": "reference_selection",
                    "prompt": prompt,
                    "options": [{"label": c["title"], "value": c["item_id"]} for c in candidates],
                }],
                "candidates": listed,
                "method": method,
                "judgment_provenance": _JUDGED if judged is not None else None,
                "read_at": _READ_AT,
                "clarification_url": "https://resolver.example/resolve/clarify/eyJ0b2tlbiI6Ii4uLiJ9/",
            },
            "warnings": warnings or [],
            "error": None,
        },
        status_codes=["200"],
        response_only=True,
    )


_UNAVAILABLE = {"code": "judgment_unavailable",
                "message": "The judgment service gave no usable answer; candidates are in search order.",
                "details": {"reason": "disabled"}}
CLARIFICATION_EXAMPLES = [
    _clarification("duplicate_titles", "Two items share the title; the person chooses",
                   "2 items match this reference exactly. Which one do you mean?", _OFFSITE, method="deterministic"),
    _clarification("ambiguous", "Several candidates, the judge off: no decision",
                   "Which item do you mean?", _DESIGN, method=None, warnings=[_UNAVAILABLE]),
    _clarification("judge_no_match", "The judge's most probable option is no_match",
                   "None of these items seems to match the reference. Which item do you mean?", _DESIGN,
                   method="semantic", judged={"demo-design-review": 0.21, "demo-design-retro": 0.09}),
    _clarification("no_candidates", "Nothing matched",
                   "Nothing matches this reference. Rephrase it, or use more of the item's title.", [],
                   method=None),
]
REQUEST_EXAMPLE = OpenApiExample(
    "reference",
    value={"text": "draft the portfolio outline", "kind": "task", "collection_ids": ["work"],
           "time_zone": "Europe/Berlin"},
    request_only=True,
)
COLLECTIONS_EXAMPLE = OpenApiExample(
    "collections",
    value={
        "schema_version": SCHEMA_VERSION,
        "request_id": "req_5e4d3c2b1a0f49e8d7c6b5a493827160",
        "status": "ok",
        "data": {"collections": [{"collection_id": "personal", "display_name": "Personal"},
                                 {"collection_id": "work", "display_name": "Work"}]},
        "warnings": [],
        "error": None,
    },
    status_codes=["200"],
    response_only=True,
)

# --- the decorators the views wear -------------------------------------------

_RESOLVE_ERRORS = (400, *_COMMON_ERRORS, 409, 415, 429, 503)
_COLLECTIONS_ERRORS = (*_COMMON_ERRORS, 409, 503)


def _spectacular(func: F) -> F:
    """Have extend_schema build on drf-spectacular's AutoSchema, not the project's DEFAULT_SCHEMA_CLASS.

    Without this, in a project whose REST_FRAMEWORK names no schema class, the
    decorated method would get DRF's own AutoSchema and the document a 500.
    """
    func.schema = AutoSchema  # type: ignore[attr-defined]
    return func


def resolve_schema(func: F) -> F:
    return extend_schema(
        operation_id="resolve",
        summary="Resolve a reference to one live task or event",
        description=(
            "Reads the calendar live and answers with the item (`status: ok`) or a clarification "
            f"(`status: needs_clarification`, with `data.reason`) listing at most {MAX_CANDIDATES} candidates. "
            "Never writes anything: act on the answer with a conditional write (`If-Match: etag` on `href`). "
            "Throttled per client (`throttled`, 429, with `Retry-After`)."
        ),
        request=ResolveInputSerializer,
        responses={
            200: OpenApiResponse(response=RESOLVE_ENVELOPE, description="Resolved, or a clarification."),
            **error_responses(_RESOLVE_ERRORS),
        },
        parameters=response_headers(_RESOLVE_ERRORS),
        examples=[REQUEST_EXAMPLE, RESOLVED_EXAMPLE, RESOLVED_EVENT_EXAMPLE, *CLARIFICATION_EXAMPLES],
        tags=["resolver"],
    )(_spectacular(func))


def collections_schema(func: F) -> F:
    return extend_schema(
        operation_id="collections_list",
        summary="The collections a resolution can be scoped to",
        responses={
            200: OpenApiResponse(response=COLLECTIONS_ENVELOPE, description="Every collection."),
            **error_responses(_COLLECTIONS_ERRORS),
        },
        parameters=response_headers(_COLLECTIONS_ERRORS),
        examples=[COLLECTIONS_EXAMPLE],
        tags=["resolver"],
    )(_spectacular(func))


class ResolveInputExtension(OpenApiSerializerExtension):
    """The request body rejects unknown fields, so the schema says so."""

    target_class = "resolver.api.serializers.ResolveInputSerializer"

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        schema["additionalProperties"] = False
        return schema


def api_document() -> dict[str, Any]:
    """The document SchemaApi serves, built with this module's settings (the MCP door's schemas)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.settings import patched_settings

    with patched_settings(SPECTACULAR_SETTINGS):
        return SchemaGenerator().get_schema(request=None, public=True)


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
