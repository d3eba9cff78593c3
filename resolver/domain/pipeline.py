"""The resolution pipeline: reference in, outcome out. Writes nothing, anywhere.

    resolve(request=..., calendar=..., judge=..., policy=..., request_id=...) -> Outcome

Deterministic first: an exact, unique match never reaches the judge. Anything
else ends in a clarification unless an approved threshold for exactly this
question, responding model and prompt fingerprint authorises the judge's top
candidate.
"""
from __future__ import annotations

import re
import time
from datetime import datetime
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from resolver.calendars.base import CalendarSource, FetchResult
from resolver.domain import judgment as jdg
from resolver.domain.errors import InvalidRequest
from resolver.domain.items import Item, Kind, Method, Occurrence
from resolver.domain.matching import Pool, build_pool, exact_matches

MAX_TEXT_LENGTH = 500
MAX_COLLECTION_IDS = 50
# A JSON `\ud800` escape decodes to an unpaired surrogate: a str that cannot be
# encoded as UTF-8, so echoing it (an error's details, Jev's request, stdout) fails.
_SURROGATE = re.compile("[\ud800-\udfff]")


class Status(str, Enum):
    OK = "ok"
    NEEDS_CLARIFICATION = "needs_clarification"


@dataclass(frozen=True)
class Warning:
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResolveRequest:
    text: str
    kind: Kind
    collection_ids: tuple[str, ...] = ()
    # IANA name of the zone the reference's time expressions and the
    # calendar's floating times are read in; None means UTC.
    time_zone: str | None = None


class Judge(Protocol):
    def judge(self, question: jdg.Question, *, request_id: str) -> jdg.Judgment | jdg.JudgmentUnavailable: ...


class ThresholdPolicy(Protocol):
    def find(self, *, question: str, model: str, fingerprint: str) -> jdg.ThresholdRule | None: ...


class NoThresholds:
    """The policy when nothing was approved: confidence never resolves."""

    def find(self, *, question: str, model: str, fingerprint: str) -> jdg.ThresholdRule | None:
        return None


@dataclass(frozen=True)
class Outcome:
    request_id: str
    status: Status
    kind: Kind
    method: Method | None
    item: Item | None = None
    candidates: tuple[Item, ...] = ()
    # By item ID, present only when the judge answered.
    probabilities: dict[str, float] = field(default_factory=dict)
    suggested_item_id: str | None = None
    suggested_probability: float | None = None
    prompt: str = ""
    warnings: tuple[Warning, ...] = ()
    question: jdg.Question | None = None
    judgment: jdg.Judgment | jdg.JudgmentUnavailable | None = None
    decision: jdg.Decision | None = None
    # Candidate number -> item ID, for the provenance log.
    numbering: dict[int, str] = field(default_factory=dict)
    collection_ids: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    calendar_requests: int = 0
    # By item ID: the occurrence the reference names (inside its time range),
    # else the next live one. Events only; filled by the pipeline.
    occurrences: dict[str, Occurrence] = field(default_factory=dict)
    # Why a clarification was needed, for programs: duplicate_titles,
    # ambiguous, judge_no_match, no_candidates. None when resolved.
    reason: str | None = None
    # When the calendar was read for this request (aware, UTC).
    read_at: datetime | None = None


def parse_request(*, text: Any, kind: Any, collection_ids: Any = None) -> ResolveRequest:
    """Validate the three inputs every door accepts; raises InvalidRequest."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequest("`text` must be a non-empty string.", details={"field": "text"})
    if len(text) > MAX_TEXT_LENGTH:
        raise InvalidRequest(
            f"`text` must be at most {MAX_TEXT_LENGTH} characters.",
            details={"field": "text", "max_length": MAX_TEXT_LENGTH},
        )
    if "\x00" in text:
        raise InvalidRequest("`text` must not contain NUL characters.", details={"field": "text"})
    if _SURROGATE.search(text):
        raise InvalidRequest("`text` must be valid Unicode (no unpaired surrogates).", details={"field": "text"})
    try:
        parsed_kind = Kind(kind)
    except ValueError:
        raise InvalidRequest("`kind` must be `task` or `event`.", details={"field": "kind"}) from None
    if collection_ids is None:
        collection_ids = []
    if not isinstance(collection_ids, (list, tuple)) or not all(
        isinstance(cid, str) and cid.strip() for cid in collection_ids
    ):
        raise InvalidRequest(
            "`collection_ids` must be a list of non-empty strings.", details={"field": "collection_ids"}
        )
    if any(_SURROGATE.search(cid) for cid in collection_ids):
        raise InvalidRequest(
            "`collection_ids` must be valid Unicode (no unpaired surrogates).", details={"field": "collection_ids"}
        )
    if len(collection_ids) > MAX_COLLECTION_IDS:
        raise InvalidRequest(
            f"At most {MAX_COLLECTION_IDS} collection IDs.",
            details={"field": "collection_ids", "max_items": MAX_COLLECTION_IDS},
        )
    return ResolveRequest(text=text, kind=parsed_kind, collection_ids=tuple(collection_ids))


def resolve(
    *,
    request: ResolveRequest,
    calendar: CalendarSource,
    judge: Judge,
    policy: ThresholdPolicy,
    request_id: str,
    max_candidates: int = jdg.MAX_CANDIDATES,
    now: datetime | None = None,
) -> Outcome:
    max_candidates = min(max_candidates, jdg.MAX_CANDIDATES)
    started = time.perf_counter()
    fetched = calendar.fetch(kind=request.kind, collection_ids=request.collection_ids or None,
                             time_zone=request.time_zone)
    timings = {"calendar_ms": _ms(time.perf_counter() - started)}
    base = dict(
        request_id=request_id,
        kind=request.kind,
        collection_ids=fetched.collections_searched,
        calendar_requests=fetched.requests,
        read_at=fetched.read_at,
    )
    warnings = _skipped_warning(fetched)

    matching_started = time.perf_counter()
    exact = exact_matches(request.text, fetched.items)
    if len(exact) == 1:
        timings["matching_ms"] = _ms(time.perf_counter() - matching_started)
        return Outcome(status=Status.OK, method=Method.DETERMINISTIC, item=exact[0],
                       warnings=warnings, timings=timings, **base)
    if exact:
        timings["matching_ms"] = _ms(time.perf_counter() - matching_started)
        # Many items can share one title; a clarification still lists at most
        # max_candidates of them (in their stable order) and says so.
        listed = tuple(exact[:max_candidates])
        prompt = f"{len(exact)} items match this reference exactly. Which one do you mean?"
        if len(listed) < len(exact):
            prompt += (f" Only the first {len(listed)} are listed: narrow the scope with a collection "
                       "if yours is missing.")
        return Outcome(
            status=Status.NEEDS_CLARIFICATION, method=Method.DETERMINISTIC, candidates=listed,
            reason="duplicate_titles", prompt=prompt, warnings=warnings + _narrowed(matched=len(exact), kept=len(listed)),
            timings=timings, **base,
        )

    pool = build_pool(request.text, fetched.items, limit=max_candidates)
    timings["matching_ms"] = _ms(time.perf_counter() - matching_started)
    warnings += _narrowed_warning(pool)
    candidates = tuple(c.item for c in pool.candidates)
    if not candidates:
        return Outcome(
            status=Status.NEEDS_CLARIFICATION, method=None, reason="no_candidates",
            prompt="Nothing matches this reference. Rephrase it, or use more of the item's title.",
            warnings=warnings, timings=timings, **base,
        )

    question = jdg.build_question(
        reference=request.text, kind=request.kind,
        candidates=[jdg.facts_from_item(item) for item in candidates],
    )
    numbering = {number: item.item_id for number, item in enumerate(candidates, start=1)}
    judging_started = time.perf_counter()
    judgment = judge.judge(question, request_id=request_id)
    timings["judgment_ms"] = _ms(time.perf_counter() - judging_started)

    if isinstance(judgment, jdg.JudgmentUnavailable):
        warnings += (Warning(
            code="judgment_unavailable",
            message="The judgment service gave no usable answer; candidates are in search order.",
            details={"reason": judgment.reason},
        ),)
        return Outcome(
            status=Status.NEEDS_CLARIFICATION, method=None, candidates=candidates, reason="ambiguous",
            prompt=_prompt(pool, top_is_no_match=False), warnings=warnings, question=question,
            judgment=judgment, numbering=numbering, timings=timings, **base,
        )

    # The judge's own fingerprint: it covers what that backend sent (a chat
    # model's system prompt, correction and schema), not only the question.
    rule = policy.find(question=jdg.QUESTION_ID, model=judgment.model,
                       fingerprint=judgment.fingerprint or question.fingerprint)
    decision = jdg.decide(judgment, rule)
    by_number = judgment.number_probabilities()
    probabilities = {numbering[n]: p for n, p in by_number.items() if n in numbering}
    shared = dict(question=question, judgment=judgment, decision=decision, numbering=numbering,
                  probabilities=probabilities, timings=timings, warnings=warnings)
    if decision.resolved_number is not None:
        item = candidates[decision.resolved_number - 1]
        return Outcome(status=Status.OK, method=Method.SEMANTIC, item=item, **shared, **base)

    # Reorder by the judge's probability; equal probabilities keep search order.
    order = sorted(range(len(candidates)), key=lambda i: -probabilities.get(candidates[i].item_id, 0.0))
    ranked = tuple(candidates[i] for i in order)
    top_is_no_match = decision.top_option == jdg.NO_MATCH
    suggested = None
    # A tie is no suggestion: marking one of two equals would be a guess.
    if not top_is_no_match and not jdg.is_tie(judgment):
        suggested = numbering[int(decision.top_option)]
    return Outcome(
        status=Status.NEEDS_CLARIFICATION, method=Method.SEMANTIC, candidates=ranked,
        suggested_item_id=suggested,
        reason="judge_no_match" if top_is_no_match else "ambiguous",
        suggested_probability=probabilities.get(suggested) if suggested else None,
        prompt=_prompt(pool, top_is_no_match=top_is_no_match), **shared, **base,
    )


def _prompt(pool: Pool, *, top_is_no_match: bool) -> str:
    parts = []
    if top_is_no_match:
        parts.append("None of these items seems to match the reference.")
    parts.append("Which item do you mean?")
    if pool.narrowed:
        parts.append(
            f"{pool.matched} items matched and only the best {len(pool.candidates)} are listed: "
            "narrow the scope with a collection or more words if yours is missing."
        )
    return " ".join(parts)


def _narrowed_warning(pool: Pool) -> tuple[Warning, ...]:
    return _narrowed(matched=pool.matched, kept=len(pool.candidates))


def _narrowed(*, matched: int, kept: int) -> tuple[Warning, ...]:
    if matched <= kept:
        return ()
    return (Warning(
        code="candidate_narrowed",
        message="More items matched than can be listed; only the best matches are candidates.",
        details={"matched": matched, "kept": kept},
    ),)


def _skipped_warning(fetched: FetchResult) -> tuple[Warning, ...]:
    if not fetched.skipped:
        return ()
    reasons = Counter(s.reason for s in fetched.skipped)
    return (Warning(
        code="items_skipped",
        message="Some calendar resources could not be read and were skipped.",
        details={"count": len(fetched.skipped), "reasons": dict(sorted(reasons.items()))},
    ),)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)

