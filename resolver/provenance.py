"""Short-lived judgment provenance, kept in the default cache for staff to inspect.

An entry says which question wording and model judged a request, what the
probabilities per candidate number were, which item each number stood for and
what was decided. It holds no reference text and no titles: only numbers,
item IDs, model names and fixed-vocabulary reasons. Entries expire after
PROVENANCE_TTL_SECONDS; once gone they are gone (nothing is written elsewhere).
"""
from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Mapping
from typing import Any

from django.core.cache import cache

from resolver.conf import resolver_settings
from resolver.domain.judgment import (
    QUESTION_ID,
    Judgment,
    JudgmentUnavailable,
    Question,
    ThresholdRule,
    effective_fingerprint,
    ranked_options,
)

logger = logging.getLogger("resolver.provenance")

KEY_PREFIX = "resolver:provenance:"
INDEX_KEY = "resolver:provenance-index"
# The index only needs to cover what recent() can show.
INDEX_SIZE = 200
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# The only fields of a judgment_provenance dict that are ever stored.
PROVENANCE_FIELDS = (
    "question",
    "fingerprint",
    # What chose the candidates (the relevance model, its encoder and fingerprint): names only, no text.
    "retrieval_model",
    "model",
    "jev_request_id",
    "candidate_count",
    "latency_ms",
    "attempts",
    "backend",
    "probability_source",
    "attempt_validity",
    "probability",
    "runner_up_probability",
    "threshold",
    "threshold_id",
)


def provenance_dict(question: Question, judgment: Judgment | JudgmentUnavailable,
                    rule: ThresholdRule | None = None) -> dict[str, Any] | None:
    """The envelope's `judgment_provenance`, or None when there was no judgment.

    A resolution on confidence (`rule`, the approved threshold that allowed it) also names
    the probability, the runner-up's and the threshold with its ID: what a reviewer checks.
    """
    if not isinstance(judgment, Judgment):
        return None
    authorised = {}
    if rule is not None:
        ranked = ranked_options(judgment.choice, judgment.probabilities)
        authorised = {"probability": ranked[0][1], "runner_up_probability": ranked[1][1] if len(ranked) > 1 else 0.0,
                      "threshold": rule.threshold, "threshold_id": rule.approved_id}
    return {
        "question": QUESTION_ID,
        "fingerprint": effective_fingerprint(question, judgment),
        # The semantic signal's model when it chose or ordered the candidates, else null.
        "retrieval_model": question.retrieval,
        "model": judgment.model,
        # The key as published when Jev was the only judge: it is any server's request ID.
        "jev_request_id": judgment.server_request_id,
        "candidate_count": question.candidate_count,
        "latency_ms": judgment.latency_ms,
        "attempts": judgment.attempts,
        "backend": judgment.backend,
        # "service" (Jev's distribution), "logprobs" (derived from token
        # log-probabilities) or "none" (advice only: no threshold can apply).
        "probability_source": judgment.probability_source.value,
        # Each answer received, in order: "valid" or the defect's reason.
        "attempt_validity": list(judgment.attempt_validity),
        **authorised,
    }


def cache_key(request_id: str) -> str:
    # Cache backends restrict key characters and length (memcached: no spaces,
    # 250 bytes); anything unusual is hashed so every request ID maps to a key.
    if _SAFE_REQUEST_ID.fullmatch(request_id):
        return KEY_PREFIX + request_id
    return KEY_PREFIX + "sha256-" + hashlib.sha256(request_id.encode("utf-8")).hexdigest()


def ttl_seconds() -> int:
    return max(1, int(resolver_settings.PROVENANCE_TTL_SECONDS))


def _sanitise_provenance(provenance: Mapping[str, Any] | None) -> dict[str, Any] | None:
    # A whitelist, not a copy: whatever else a caller puts in never reaches the cache.
    if provenance is None:
        return None
    return {name: provenance.get(name) for name in PROVENANCE_FIELDS}


def record(
    *,
    request_id: str,
    provenance: Mapping[str, Any] | None,
    probabilities_by_number: Mapping[int, float],
    number_to_item_id: Mapping[int, str],
    decision: str,
    reason: str,
) -> None:
    """Store one entry. Never raises: provenance must not break a resolution."""
    entry = {
        "request_id": request_id,
        "recorded_at": time.time(),
        "provenance": _sanitise_provenance(provenance),
        # String keys: the entry is JSON-shaped whatever the cache serialises with.
        "probabilities_by_number": {str(int(n)): float(p) for n, p in probabilities_by_number.items()},
        "number_to_item_id": {str(int(n)): str(item_id) for n, item_id in number_to_item_id.items()},
        "decision": str(decision),
        "reason": str(reason),
    }
    ttl = ttl_seconds()
    try:
        cache.set(cache_key(request_id), entry, timeout=ttl)
        # Read-modify-write: two concurrent requests may drop one ID from the
        # index. Acceptable for a best-effort staff view; the entry stays readable
        # by its request ID either way.
        index = [rid for rid in (cache.get(INDEX_KEY) or []) if rid != request_id]
        cache.set(INDEX_KEY, [request_id, *index][:INDEX_SIZE], timeout=ttl)
    except Exception as exc:  # noqa: BLE001
        logger.warning("provenance not recorded request_id=%s error=%s", cache_key(request_id), type(exc).__name__)


def get(request_id: str) -> dict[str, Any] | None:
    try:
        entry = cache.get(cache_key(request_id))
    except Exception as exc:  # noqa: BLE001
        logger.warning("provenance not read error=%s", type(exc).__name__)
        return None
    return entry if isinstance(entry, dict) else None


def recent(limit: int = 50) -> list[dict[str, Any]]:
    """Newest first; entries that have expired are skipped."""
    if limit <= 0:
        return []
    try:
        index = cache.get(INDEX_KEY) or []
        keys = [cache_key(rid) for rid in index]
        found = cache.get_many(keys) if keys else {}
    except Exception as exc:  # noqa: BLE001
        logger.warning("provenance index not read error=%s", type(exc).__name__)
        return []
    entries = [found[key] for key in keys if isinstance(found.get(key), dict)]
    return entries[:limit]
