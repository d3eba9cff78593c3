"""Signed clarification tokens: the state of one clarification, carried in its URL.

A token is Django's signing format (a timestamped HMAC over compressed JSON)
with its own salt, so no other signed value of the project can be replayed as
one. It is signed, not encrypted: anyone holding it can decode it. That is why
it carries only opaque identifiers (request ID, kind, collection IDs, item IDs,
the judge's suggestion and probabilities, the user's primary key) and never
the reference or an item's title; titles are read live when the page loads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core import signing

from resolver.domain.items import Kind
from resolver.domain.pipeline import Outcome

SALT = "resolver.clarification"
VERSION = 1


class TokenInvalid(Exception):
    """Tampered, malformed, or issued to another user: the page answers 404 for all three."""


class TokenExpired(Exception):
    """Genuine, for this user, but older than CLARIFICATION_MAX_AGE_SECONDS."""


@dataclass(frozen=True)
class ClarificationClaims:
    request_id: str
    kind: Kind
    collection_ids: tuple[str, ...]
    candidate_ids: tuple[str, ...]
    user_id: str
    suggested_item_id: str | None = None
    # Aligned with candidate_ids; empty when the judge gave no answer.
    probabilities: tuple[float, ...] = field(default=())
    # Why the clarification was needed (Outcome.reason): the page's heading follows it.
    reason: str | None = None

    def probability_of(self, item_id: str) -> float | None:
        if not self.probabilities or item_id not in self.candidate_ids:
            return None
        return self.probabilities[self.candidate_ids.index(item_id)]


def claims_for(outcome: Outcome, *, user_id: object) -> ClarificationClaims:
    candidate_ids = tuple(item.item_id for item in outcome.candidates)
    probabilities: tuple[float, ...] = ()
    if outcome.probabilities:
        probabilities = tuple(float(outcome.probabilities.get(i, 0.0)) for i in candidate_ids)
    suggested = outcome.suggested_item_id if outcome.suggested_item_id in candidate_ids else None
    return ClarificationClaims(
        request_id=outcome.request_id,
        kind=outcome.kind,
        collection_ids=tuple(outcome.collection_ids),
        candidate_ids=candidate_ids,
        user_id=str(user_id),
        suggested_item_id=suggested,
        probabilities=probabilities,
        reason=outcome.reason,
    )


def issue(claims: ClarificationClaims) -> str:
    # Short keys and a suggestion by position keep the URL short: up to 19
    # item IDs already make a token of several hundred characters.
    payload: dict[str, Any] = {
        "v": VERSION,
        "r": claims.request_id,
        "k": claims.kind.value,
        "c": list(claims.collection_ids),
        "i": list(claims.candidate_ids),
        "u": claims.user_id,
    }
    if claims.suggested_item_id is not None:
        payload["s"] = claims.candidate_ids.index(claims.suggested_item_id)
    if claims.probabilities:
        payload["p"] = [round(p, 4) for p in claims.probabilities]
    if claims.reason is not None:
        payload["w"] = claims.reason
    return signing.dumps(payload, salt=SALT, compress=True)


def read(token: str, *, user_id: object, max_age: int) -> ClarificationClaims:
    """The claims of a genuine, unexpired token issued to `user_id`.

    The user is checked before the age, so an expired token held by someone
    else is a plain 404 too and says nothing about being genuine.
    """
    try:
        payload = signing.loads(token, salt=SALT, max_age=max_age)
        expired = False
    except signing.SignatureExpired:
        payload = _loads_ignoring_age(token)
        expired = True
    except signing.BadSignature:
        raise TokenInvalid() from None
    claims = _claims(payload)
    if claims.user_id != str(user_id):
        raise TokenInvalid()
    if expired:
        raise TokenExpired()
    return claims


def _loads_ignoring_age(token: str) -> Any:
    try:
        return signing.loads(token, salt=SALT, max_age=None)
    except signing.BadSignature:  # cannot happen after SignatureExpired; be safe anyway
        raise TokenInvalid() from None


def _claims(payload: Any) -> ClarificationClaims:
    """Check the shape even though the signature is good: a token from a
    future version, or one signed with a leaked key, must not become a 500."""
    try:
        if not isinstance(payload, dict) or payload.get("v") != VERSION:
            raise ValueError("version")
        candidate_ids = _strings(payload["i"])
        probabilities = tuple(float(p) for p in payload.get("p", []))
        if probabilities and len(probabilities) != len(candidate_ids):
            raise ValueError("probabilities")
        suggested_index = payload.get("s")
        suggested = None
        if suggested_index is not None:
            if not isinstance(suggested_index, int) or not 0 <= suggested_index < len(candidate_ids):
                raise ValueError("suggestion")
            suggested = candidate_ids[suggested_index]
        request_id, user_id = payload["r"], payload["u"]
        if not isinstance(request_id, str) or not isinstance(user_id, str):
            raise ValueError("ids")
        reason = payload.get("w")
        if reason is not None and not isinstance(reason, str):
            raise ValueError("reason")
        return ClarificationClaims(
            request_id=request_id,
            kind=Kind(payload["k"]),
            collection_ids=_strings(payload["c"]),
            candidate_ids=candidate_ids,
            user_id=user_id,
            suggested_item_id=suggested,
            probabilities=probabilities,
            reason=reason,
        )
    except (KeyError, TypeError, ValueError):
        raise TokenInvalid() from None


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("list of strings")
    return tuple(value)
