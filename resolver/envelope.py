"""Outcome or error -> the response envelope. Every shape is built here, once.

The API, the command, the page and the MCP door all render these dicts; none
of them writes an envelope of its own. Additive changes keep SCHEMA_VERSION.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

from resolver.domain.errors import InternalError, ResolverError
from resolver.domain.items import Collection, Item, Kind
from resolver.domain.pipeline import Outcome, OutcomeWarning, Status
from resolver.domain.times import iso

SCHEMA_VERSION = 1


def _warning(warning: OutcomeWarning) -> dict[str, Any]:
    # Codes are StrEnum members (resolver.domain.codes); the envelope holds their plain values.
    return {"code": str(warning.code), "message": warning.message, "details": warning.details}


def iso_utc(moment: datetime | None) -> str | None:
    """`2026-05-05T09:00:00Z`: ISO 8601 in UTC, whatever zone the moment came in."""
    if moment is None:
        return None
    if moment.tzinfo is None:  # the calendar layer reports aware UTC; a naive one is UTC too
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def item_dict(item: Item, outcome: Outcome) -> dict[str, Any]:
    """The facts a caller acts on: where the item is (`href`), its version (`etag`), which instance."""
    data: dict[str, Any] = {
        "item_id": item.item_id,
        "uid": item.uid,
        "collection_id": item.collection_id,
        "href": item.href,
        "title": item.title,
        "etag": item.etag,
        "kind": item.kind.value,
    }
    if item.title_truncated:
        # Only on a cut title (items.MAX_TITLE_CHARS): every other envelope stays byte for byte as it was.
        data["title_truncated"] = True
    if item.kind is Kind.TASK:
        data["due"] = iso(item.due)  # as the calendar gave it: a date, or a date-time
    else:
        data["start"] = iso(item.start)
        occurrence = outcome.occurrences.get(item.item_id)
        data["occurrence"] = occurrence.as_dict() if occurrence is not None else None
    return data


def outcome_envelope(
    outcome: Outcome, *, provenance: dict[str, Any] | None = None, clarification_url: str | None = None
) -> dict[str, Any]:
    method = outcome.method.value if outcome.method else None
    if outcome.status is Status.OK:
        assert outcome.item is not None
        data: dict[str, Any] = {
            **item_dict(outcome.item, outcome),
            "method": method,
            "judgment_provenance": provenance,
            "read_at": iso_utc(outcome.read_at),
        }
    else:
        candidates = []
        for item in outcome.candidates:
            entry = item_dict(item, outcome)
            if outcome.probabilities:
                entry["probability"] = outcome.probabilities.get(item.item_id, 0.0)
                entry["suggested"] = item.item_id == outcome.suggested_item_id
            elif outcome.suggested_item_id is not None:
                # Advice only (a model without probabilities): its pick, with no number
                # that would read as a confidence. Advice never resolves on its own.
                entry["probability"] = None
                entry["suggested"] = item.item_id == outcome.suggested_item_id
            candidates.append(entry)
        data = {
            "reason": None if outcome.reason is None else str(outcome.reason),
            "questions": [
                {
                    "id": "reference_selection",
                    "prompt": outcome.prompt,
                    "options": [{"label": item.title, "value": item.item_id} for item in outcome.candidates],
                }
            ],
            "candidates": candidates,
            "method": method,
            "judgment_provenance": provenance,
            "read_at": iso_utc(outcome.read_at),
        }
        if clarification_url:
            data["clarification_url"] = clarification_url
    return _envelope(request_id=outcome.request_id, status=outcome.status.value, data=data,
                     warnings=[_warning(w) for w in outcome.warnings])


def clarification_link(envelope: dict[str, Any]) -> str | None:
    """The page where a person can choose, when `envelope` is a clarification that lists candidates."""
    data = envelope.get("data") or {}
    if envelope.get("status") != Status.NEEDS_CLARIFICATION.value or not data.get("candidates"):
        return None
    return data.get("clarification_url") or None


def collections_envelope(collections: Iterable[Collection], *, request_id: str) -> dict[str, Any]:
    data = {"collections": [{"collection_id": c.collection_id, "display_name": c.display_name}
                            for c in collections]}
    return _envelope(request_id=request_id, status="ok", data=data)


def error_envelope(
    *, request_id: str, code: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    return _envelope(request_id=request_id, status="error", data=None,
                     error={"code": str(code), "message": message, "details": details or {}})


def resolver_error_envelope(error: ResolverError, *, request_id: str) -> dict[str, Any]:
    return error_envelope(request_id=request_id, code=error.code, message=error.message, details=error.details)


def internal_error_envelope(*, request_id: str) -> dict[str, Any]:
    """A bug on our side: the code and a fixed message, never the exception's text."""
    return error_envelope(request_id=request_id, code=InternalError.code, message=InternalError.default_message)


def _envelope(*, request_id: str, status: str, data: dict[str, Any] | None,
              warnings: list[dict[str, Any]] | None = None, error: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "request_id": request_id,
        "status": status,
        "data": data,
        "warnings": warnings or [],
        "error": error,
    }
