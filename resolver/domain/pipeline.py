"""The resolution pipeline: reference in, outcome out. Writes nothing, anywhere.

    resolve(request=..., calendar=..., judge=..., policy=..., request_id=...) -> Outcome

Deterministic first: an exact, unique match never reaches the judge. Anything
else ends in a clarification unless an approved threshold for exactly this
question, responding model and prompt fingerprint authorises the judge's top
candidate.
"""
from __future__ import annotations

import time
from collections import Counter
from datetime import datetime, timezone, tzinfo
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from resolver import deadline
from resolver.calendars.base import FetchResult
from resolver.domain import judgment as jdg
from resolver.domain.items import Item, Kind, Method, Occurrence, normalise
from resolver.domain.matching import Pool, build_pool, exact_matches
from resolver.domain.times import TimeRange, in_range, occurrence_for, occurrences_in
# The request and the ports live in their own modules; importable from here too.
from resolver.domain.ports import CalendarSource, Judge, NoThresholds, ThresholdPolicy  # noqa: F401
from resolver.domain.requests import ResolveRequest, parse_request  # noqa: F401
from resolver.domain.semantic import Encoder, widen
from resolver.domain.timeexpr import find_time_expression
from resolver.domain.emptyrange import nothing_found
from resolver.domain.wordforms import DEFAULT_LANGUAGE


class Status(str, Enum):
    OK = "ok"
    NEEDS_CLARIFICATION = "needs_clarification"


@dataclass(frozen=True)
class OutcomeWarning:
    """A fact the caller should know (`candidate_narrowed` ...); not Python's Warning."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


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
    warnings: tuple[OutcomeWarning, ...] = ()
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
    # ambiguous, single_candidate, judge_no_match, no_candidates. None when resolved.
    reason: str | None = None
    # When the calendar was read for this request (aware, UTC).
    read_at: datetime | None = None


@deadline.bounded  # RESOLVER_RESOLUTION_BUDGET_SECONDS for all of it (resolver/deadline.py)
def resolve(
    *,
    request: ResolveRequest,
    calendar: CalendarSource,
    judge: Judge,
    policy: ThresholdPolicy,
    request_id: str,
    max_candidates: int = jdg.MAX_CANDIDATES,
    now: datetime | None = None,
    language: str = DEFAULT_LANGUAGE,
    semantic: Encoder | None = None,
) -> Outcome:
    language = request.language or language
    max_candidates = min(max_candidates, jdg.MAX_CANDIDATES)
    tz = request.time_zone  # parsed at the boundary (requests.parse_time_zone)
    started = time.perf_counter()
    fetched = calendar.fetch(kind=request.kind, collection_ids=request.collection_ids or None,
                             time_zone=tz)
    timings = {"calendar_ms": _ms(time.perf_counter() - started)}
    base = dict(
        request_id=request_id,
        kind=request.kind,
        collection_ids=fetched.collections_searched,
        calendar_requests=fetched.requests,
        read_at=fetched.read_at,
    )
    warnings = _skipped_warning(fetched)
    now = now or fetched.read_at or datetime.now(timezone.utc)

    matching_started = time.perf_counter()
    exact = exact_matches(request.text, fetched.items)
    if len(exact) == 1:
        timings["matching_ms"] = _ms(time.perf_counter() - matching_started)
        return Outcome(status=Status.OK, method=Method.DETERMINISTIC, item=exact[0],
                       occurrences=_occurrences(exact[:1], None, tz),
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
            reason="duplicate_titles", prompt=prompt,
            warnings=warnings + _narrowed(matched=len(exact), kept=len(listed)),
            occurrences=_occurrences(listed, None, tz), timings=timings, **base,
        )

    # "Yoga class tomorrow": the time becomes a range, the rest must match a title.
    expression = find_time_expression(request.text, now=now, tz=tz, language=language)
    text = expression.rest if expression else request.text
    time_range = expression.range if expression else None
    if expression is not None and expression.rest:
        dated = _title_and_time(expression.rest, fetched.items, expression.range, tz)
        if dated is not None:
            item, occurrence = dated
            timings["matching_ms"] = _ms(time.perf_counter() - matching_started)
            return Outcome(status=Status.OK, method=Method.DETERMINISTIC, item=item,
                           occurrences={item.item_id: occurrence} if occurrence else {},
                           warnings=warnings, timings=timings, **base)

    pool = build_pool(text, fetched.items, limit=max_candidates, language=language, time_range=time_range,
                      tz=tz, bonus_words=expression.expression.split() if expression else (), memo=fetched.memo)
    pool = widen(pool, text, fetched.items, encoder=semantic, memo=fetched.memo, limit=max_candidates,
                 language=language)
    timings["matching_ms"] = _ms(time.perf_counter() - matching_started)
    warnings += _narrowed_warning(pool)
    candidates = tuple(c.item for c in pool.candidates)
    occurrences = _occurrences(candidates, time_range, tz)
    warnings += _outside_range_warning(candidates, occurrences, time_range)
    if not candidates:
        prompt, found = nothing_found(time_range if pool.by_date else None, tz)
        return Outcome(
            status=Status.NEEDS_CLARIFICATION, method=None, reason="no_candidates", prompt=prompt,
            warnings=warnings + tuple(OutcomeWarning(**w) for w in found), timings=timings, **base,
        )

    question = jdg.build_question(
        reference=request.text, kind=request.kind,
        candidates=[_facts(item, occurrences.get(item.item_id)) for item in candidates],
        today=now.astimezone(tz).date(), retrieval=pool.semantic_model,
    )
    numbering = {number: item.item_id for number, item in enumerate(candidates, start=1)}
    judging_started = time.perf_counter()
    # Past the resolution's deadline the judge is not asked: a clarification, in search order.
    judgment = (jdg.JudgmentUnavailable(reason="timeout", detail="resolution budget spent") if deadline.expired()
                else judge.judge(question, request_id=request_id))
    timings["judgment_ms"] = _ms(time.perf_counter() - judging_started)

    if isinstance(judgment, jdg.JudgmentUnavailable):
        warnings += (OutcomeWarning(
            code="judgment_unavailable",
            # The embedded default has no judge: say so, rather than that a service failed.
            message=("The judge is off; candidates are in search order." if judgment.reason == "disabled"
                     else "The judgment service gave no usable answer; candidates are in search order."),
            details={"reason": judgment.reason},
        ),)
        return Outcome(
            status=Status.NEEDS_CLARIFICATION, method=None, candidates=candidates, reason=_unsure(candidates),
            prompt=_prompt(pool, top_is_no_match=False, single=len(candidates) == 1), warnings=warnings,
            question=question,
            judgment=judgment, numbering=numbering, occurrences=occurrences, timings=timings, **base,
        )

    # The judge's own fingerprint: it covers what that backend sent (a chat
    # model's system prompt, correction and schema), not only the question.
    rule = policy.find(question=jdg.QUESTION_ID, model=judgment.model,
                       fingerprint=jdg.effective_fingerprint(question, judgment))
    decision = jdg.decide(judgment, rule)
    by_number = judgment.number_probabilities()
    probabilities = {numbering[n]: p for n, p in by_number.items() if n in numbering}
    shared = dict(question=question, judgment=judgment, decision=decision, numbering=numbering,
                  probabilities=probabilities, timings=timings, warnings=warnings, occurrences=occurrences)
    if decision.resolved_number is not None:
        item = candidates[decision.resolved_number - 1]
        return Outcome(status=Status.OK, method=Method.SEMANTIC, item=item, **shared, **base)

    top_is_no_match = decision.top_option == jdg.NO_MATCH
    suggested = None
    # A tie is no suggestion: marking one of two equals would be a guess. A model
    # without probabilities (advice only) still named one: it is suggested too.
    if not top_is_no_match and not jdg.is_tie(judgment):
        suggested = numbering[int(decision.top_option)]
    # The suggestion first, then by the judge's probability; equal ones keep search order.
    order = sorted(range(len(candidates)), key=lambda i: (candidates[i].item_id != suggested,
                                                          -probabilities.get(candidates[i].item_id, 0.0)))
    ranked = tuple(candidates[i] for i in order)
    return Outcome(
        status=Status.NEEDS_CLARIFICATION, method=Method.SEMANTIC, candidates=ranked,
        suggested_item_id=suggested,
        reason="judge_no_match" if top_is_no_match else _unsure(ranked),
        suggested_probability=probabilities.get(suggested) if suggested else None,
        prompt=_prompt(pool, top_is_no_match=top_is_no_match, single=len(ranked) == 1), **shared, **base,
    )


def _title_and_time(rest: str, items: tuple[Item, ...], time_range: TimeRange,
                    tz: tzinfo) -> tuple[Item, Occurrence | None] | None:
    """The title-plus-time rule: exactly one live item has the rest as its title,
    and exactly one occurrence (an event) or its due date (a task) in the range."""
    key = normalise(rest)
    titled = [item for item in items if item.title_key == key] if key else []
    if len(titled) != 1:
        return None  # an ID or UID plus a date is no title; two equal titles are a clarification
    item = titled[0]
    if item.kind is Kind.TASK:
        return (item, None) if in_range(item, time_range, tz) else None
    inside = occurrences_in(item, time_range, tz=tz)
    return (item, inside[0]) if len(inside) == 1 else None


def _occurrences(items: tuple[Item, ...] | list[Item], time_range: TimeRange | None,
                 tz: tzinfo) -> dict[str, Occurrence]:
    """By item ID: the occurrence inside the named range; when none falls in it, the
    nearest to it (not silently the next one); without a range, the next one."""
    found = {}
    for item in items:
        if item.kind is Kind.EVENT:
            occurrence = occurrence_for(item, time_range, tz=tz)
            if occurrence is not None and time_range is not None and not time_range.overlaps(
                    occurrence.start, occurrence.end):
                occurrence = _nearest(item, occurrence, time_range)
            if occurrence is not None:
                found[item.item_id] = occurrence
    return found


def _nearest(item: Item, fallback: Occurrence, time_range: TimeRange) -> Occurrence:
    """The live occurrence closest in time to the range (before or after it); ties go to the later."""
    def distance(o: Occurrence) -> tuple[float, float]:
        if o.end <= time_range.start:
            return (time_range.start - o.end).total_seconds(), 1.0
        return max(0.0, (o.start - time_range.end).total_seconds()), 0.0
    return min(item.occurrences or (fallback,), key=distance)


def _outside_range_warning(items: tuple[Item, ...], occurrences: dict[str, Occurrence],
                           time_range: TimeRange | None) -> tuple[OutcomeWarning, ...]:
    if time_range is None:
        return ()
    outside = [item.item_id for item in items if item.item_id in occurrences
               and not time_range.overlaps(occurrences[item.item_id].start, occurrences[item.item_id].end)]
    if not outside:
        return ()
    return (OutcomeWarning(
        code="occurrence_outside_range",
        message="No occurrence of these events falls in the time the reference names; the nearest is shown.",
        details={"item_ids": outside},
    ),)


def _facts(item: Item, occurrence: Occurrence | None) -> jdg.CandidateFacts:
    # The judge sees the occurrence the reference names, not only the next one.
    return jdg.facts_from_item(item, occurrence)


def _unsure(candidates: tuple[Item, ...]) -> str:
    """One candidate is a yes-or-no question, not a choice among several."""
    return "single_candidate" if len(candidates) == 1 else "ambiguous"


def _prompt(pool: Pool, *, top_is_no_match: bool, single: bool = False) -> str:
    parts = []
    if top_is_no_match:
        parts.append("None of these items seems to match the reference.")
    parts.append("Is this the item you mean?" if single else "Which item do you mean?")
    if pool.narrowed:
        parts.append(
            f"{pool.matched} items matched and only the best {len(pool.candidates)} are listed: "
            "narrow the scope with a collection or more words if yours is missing."
        )
    return " ".join(parts)


def _narrowed_warning(pool: Pool) -> tuple[OutcomeWarning, ...]:
    return _narrowed(matched=pool.matched, kept=len(pool.candidates))


def _narrowed(*, matched: int, kept: int) -> tuple[OutcomeWarning, ...]:
    if matched <= kept:
        return ()
    return (OutcomeWarning(
        code="candidate_narrowed",
        message="More items matched than can be listed; only the best matches are candidates.",
        details={"matched": matched, "kept": kept},
    ),)


def _skipped_warning(fetched: FetchResult) -> tuple[OutcomeWarning, ...]:
    found: tuple[OutcomeWarning, ...] = ()
    if fetched.skipped:
        reasons = Counter(s.reason for s in fetched.skipped)
        found += (OutcomeWarning(
            code="items_skipped",
            message="Some calendar resources could not be read and were skipped.",
            details={"count": len(fetched.skipped), "reasons": dict(sorted(reasons.items()))},
        ),)
    if fetched.server_filter_skipped:
        found += (OutcomeWarning(
            code="server_filter_skipped",
            message="The calendar server failed on its own time-range filter; events were read without it.",
            details={"collection_ids": list(fetched.server_filter_skipped)},
        ),)
    return found


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)

