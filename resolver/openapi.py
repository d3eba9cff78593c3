"""The OpenAPI description of the request and the envelope: every error code, examples.

Shared by the doors that publish these shapes, below all of them: the API
serves the document (`resolver/api/schema.py`, SchemaApi), the MCP door's tool
schemas are cut from it (`resolver/mcp/schemas.py`). Nothing here runs on a
request. The serializers below only describe shapes for drf-spectacular; the
envelope itself is built by `resolver.envelope`, and the tests hold the two
together (Schemathesis checks every response against this schema); requests
are validated by `resolver.domain.requests.parse_document`, never by
`ResolveInputSerializer`.

Reasons, warnings and error codes, with their texts and statuses, come from
`resolver.domain.codes`, so a code added there shows up here without a second
list to keep in step; the examples' values are data
(resolver/data/openapi_examples.json).
"""
from __future__ import annotations

import functools
import json
from http import HTTPStatus
from importlib.resources import files
from typing import Any, Callable, Iterable, TypeVar

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers

from resolver.conf import DEFAULTS
from resolver.domain.codes import ErrorCode, Reason, WarningCode
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
    "ENUM_NAME_OVERRIDES": {"BadRequestCodeEnum": "resolver.openapi.BAD_REQUEST_CODES"},
}

MAX_TEXT_LENGTH = DEFAULTS["MAX_TEXT_LENGTH"]
MAX_COLLECTION_IDS = DEFAULTS["MAX_COLLECTION_IDS"]

# Why a clarification was needed: `data.reason`, a stable code for programs.
REASONS: dict[str, str] = {reason.value: reason.description for reason in Reason}

# --- error codes, by HTTP status -------------------------------------------

# What `ErrorCode.when` may name: the limits' defaults, as the document states them.
_LIMITS = {"max_text_length": MAX_TEXT_LENGTH, "max_collection_ids": MAX_COLLECTION_IDS,
           "max_body_bytes": DEFAULTS["MAX_BODY_BYTES"]}


def error_codes_by_status() -> dict[int, tuple[str, ...]]:
    """Every stable error code the API can send, grouped by its HTTP status."""
    by_status: dict[int, list[str]] = {}
    for code in ErrorCode:
        if code.in_api:
            by_status.setdefault(code.http_status, []).append(code.value)
    return {status: tuple(codes) for status, codes in sorted(by_status.items())}


@functools.cache
def examples() -> dict[str, Any]:
    """The document's example values (resolver/data/openapi_examples.json): data, not code."""
    return json.loads(files("resolver").joinpath("data", "openapi_examples.json").read_text(encoding="utf-8"))


# --- the request body ---------------------------------------------------------


class ResolveInputSerializer(serializers.Serializer):
    text = serializers.CharField(
        max_length=DEFAULTS["MAX_TEXT_LENGTH"], trim_whitespace=False,
        help_text="The reference, as the person wrote it. An item ID or UID matches exactly. "
                  "At most RESOLVER['MAX_TEXT_LENGTH'] characters.",
    )
    kind = serializers.ChoiceField(choices=["task", "event"])
    collection_ids = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, allow_null=True,
        max_length=DEFAULTS["MAX_COLLECTION_IDS"],
        help_text="Search only these collections (GET /v1/collections). At most RESOLVER['MAX_COLLECTION_IDS']; "
                  "absent, null or empty: all of them.",
    )
    time_zone = serializers.CharField(
        required=False, allow_null=True, max_length=64,
        help_text="IANA zone name (e.g. Europe/Berlin) that times in the reference and floating times in the "
                  "calendar are read in. Default RESOLVER['TIME_ZONE'] (Django's TIME_ZONE). "
                  "Absent or null: that default. An unknown zone is invalid_request.",
    )
    language = serializers.CharField(
        required=False, allow_null=True, max_length=32,
        help_text="The reference's language: its stems, stopwords and time expressions (\"morgen\", \"demain\", "
                  "\"mañana\"). A Snowball name (english, german, french, spanish, ...) or en, de, fr, es. "
                  "Default RESOLVER['LANGUAGE']. An unknown language is invalid_request.",
    )


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
        help_text="Stable code (more may be added): " + " ".join(f"`{code}`: {code.description}" for code in WarningCode)
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
    backend = serializers.CharField(help_text="The judge backend: jev or openai, or ranker (the built-in "
                                              "relevance model, under a certified threshold).")
    probability_source = serializers.ChoiceField(
        choices=["service", "logprobs", "none", "model"],
        help_text="service: Jev's distribution; logprobs: from token log-probabilities; none: advice only; "
                  "model: the built-in relevance model's calibrated distribution.",
    )
    probability = serializers.FloatField(
        required=False, min_value=0.0, max_value=1.0,
        help_text="Resolved on confidence: the chosen candidate's probability.")
    runner_up_probability = serializers.FloatField(
        required=False, min_value=0.0, max_value=1.0,
        help_text="Resolved on confidence: the next option's probability (no_match included).")
    threshold = serializers.FloatField(
        required=False, min_value=0.0, max_value=1.0,
        help_text="Resolved on confidence: the approved threshold (a certificate for the ranker) that allowed it.")
    threshold_id = serializers.IntegerField(
        required=False, allow_null=True, help_text="That approved threshold's ID (manage.py thresholds list).")
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
    title = serializers.CharField(allow_blank=True, help_text="At most 500 characters; a longer title is cut "
                                  "to its first 500, ends in `\u2026` and comes with `title_truncated`.")
    title_truncated = serializers.BooleanField(
        required=False, help_text="Present (true) only when the title was cut: the item still resolves by "
                                  "its item_id or uid, never by the cut text.")
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
    example = examples()["errors"].get(code, {"message": "", "details": {}})
    message, details = example["message"], example["details"]
    return OpenApiExample(
        code,
        value={
            "schema_version": SCHEMA_VERSION,
            "request_id": examples()["request_ids"]["error"],
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
        description = " ".join(f"`{code}`: {ErrorCode(code).describe(**_LIMITS)}" for code in codes)
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
BAD_REQUEST_CODES = tuple(error_codes_by_status()[400])

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

# --- examples (their values are data: resolver/data/openapi_examples.json) ---------


def _example(name: str, value: dict[str, Any], *, summary: str | None = None) -> OpenApiExample:
    return OpenApiExample(name, summary=summary, value=value, status_codes=["200"], response_only=True)


def _body(status: str, data: dict[str, Any], *, request_id: str,
          warnings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "request_id": request_id, "status": status, "data": data,
            "warnings": warnings or [], "error": None}


def _resolved(example: dict[str, Any]) -> OpenApiExample:
    data = examples()
    item = data["items"][example["item"]]
    return _example(example["name"], _body("ok", {**item, "method": "deterministic", "judgment_provenance": None,
                                                 "read_at": data["read_at"]}, request_id=data["request_ids"]["ok"]),
                    summary=example["summary"])


def _clarification(example: dict[str, Any]) -> OpenApiExample:
    data = examples()
    reason = Reason(example["reason"])
    named = example["candidates"]
    candidates = data["items"][named] if isinstance(named, str) else named
    judged = example.get("judged")
    listed = [{**c, "probability": judged[c["uid"]], "suggested": False} if judged is not None else dict(c)
              for c in candidates]
    value = {
        "reason": reason.value,
        "questions": [{
            "id": "reference_selection",
            "prompt": example["prompt"],
            "options": [{"label": c["title"], "value": c["item_id"]} for c in candidates],
        }],
        "candidates": listed,
        "method": example["method"],
        "judgment_provenance": data["judgment_provenance"] if judged is not None else None,
        "read_at": data["read_at"],
        "clarification_url": data["clarification_url"],
    }
    return _example(reason.value, _body("needs_clarification", value, request_id=data["request_ids"][
        "needs_clarification"], warnings=example.get("warnings")), summary=example["summary"])


def _collections() -> OpenApiExample:
    data = examples()
    return _example("collections", _body("ok", {"collections": data["collections"]},
                                         request_id=data["request_ids"]["collections"]))


def _request() -> OpenApiExample:
    return OpenApiExample("reference", value=examples()["request"], request_only=True)


# --- the decorators the views wear -------------------------------------------

_RESOLVE_ERRORS = (400, *_COMMON_ERRORS, 409, 415, 429, 503)
_COLLECTIONS_ERRORS = (*_COMMON_ERRORS, 409, 429, 503)


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
        examples=[_request(), *(_resolved(e) for e in examples()["resolved"]),
                  *(_clarification(e) for e in examples()["clarifications"])],
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
        examples=[_collections()],
        tags=["resolver"],
    )(_spectacular(func))


class ResolveInputExtension(OpenApiSerializerExtension):
    """The request body rejects unknown fields, so the schema says so."""

    target_class = "resolver.openapi.ResolveInputSerializer"

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
