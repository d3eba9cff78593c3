"""Outcome or error -> the response envelope shared by the API, the command and the page."""
from __future__ import annotations

from typing import Any

from resolver.domain.errors import ResolverError
from resolver.domain.items import Item, Kind
from resolver.domain.pipeline import Outcome, Status, Warning

SCHEMA_VERSION = 1


def _warning(warning: Warning) -> dict[str, Any]:
    return {"code": warning.code, "message": warning.message, "details": warning.details}


def candidate_dict(item: Item) -> dict[str, Any]:
    data: dict[str, Any] = {
        "item_id": item.item_id,
        "uid": item.uid,
        "collection_id": item.collection_id,
        "title": item.title,
        "etag": item.etag,
        "kind": item.kind.value,
    }
    if item.kind is Kind.TASK:
        data["due"] = item.due
    else:
        data["start"] = item.start
    return data


def outcome_envelope(
    outcome: Outcome, *, provenance: dict[str, Any] | None = None, clarification_url: str | None = None
) -> dict[str, Any]:
    method = outcome.method.value if outcome.method else None
    if outcome.status is Status.OK:
        assert outcome.item is not None
        item = outcome.item
        data: dict[str, Any] = {
            "item_id": item.item_id,
            "uid": item.uid,
            "collection_id": item.collection_id,
            "title": item.title,
            "kind": item.kind.value,
            "etag": item.etag,
            "method": method,
            "judgment_provenance": provenance,
        }
    else:
        candidates = []
        for item in outcome.candidates:
            entry = candidate_dict(item)
            if outcome.probabilities:
                entry["probability"] = outcome.probabilities.get(item.item_id, 0.0)
                entry["suggested"] = item.item_id == outcome.suggested_item_id
            candidates.append(entry)
        data = {
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
        }
        if clarification_url:
            data["clarification_url"] = clarification_url
    return {
        "schema_version": SCHEMA_VERSION,
        "request_id": outcome.request_id,
        "status": outcome.status.value,
        "data": data,
        "warnings": [_warning(w) for w in outcome.warnings],
        "error": None,
    }


def error_envelope(
    *, request_id: str, code: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "request_id": request_id,
        "status": "error",
        "data": None,
        "warnings": [],
        "error": {"code": code, "message": message, "details": details or {}},
    }


def resolver_error_envelope(error: ResolverError, *, request_id: str) -> dict[str, Any]:
    return error_envelope(request_id=request_id, code=error.code, message=error.message, details=error.details)
