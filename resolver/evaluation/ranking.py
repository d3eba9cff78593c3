"""The built-in ranker as a scorer for the certificate (`evaluate_reference_match --judge ranker`).

Each case is resolved by the real pipeline (`resolver.domain.pipeline.resolve`)
with the deployed relevance model and encoder, over a memory calendar of the
case's items, under one rule: the ranker's own threshold at 0 with the
deployed margin. So a case the ranker would resolve at some threshold resolves
here, and its probability is the one the pipeline would compare with the
approved threshold; everything the pipeline answers otherwise (an exact title,
a title plus a time, a question by date alone, no candidates, a tie, "none"
on top, too small a margin, a first candidate that swaps a word of the
reference for another in the same place) is never accepted, at any threshold. The
certificate is thus measured on exactly what the pipeline decides.

A calendar case's items become `Item`s as the retrieval bench builds them
(`calendar_items`: tasks with their due dates, events with their live
occurrences in [now, now + horizon], series expanded in the set's zone, not
live when COMPLETED or CANCELLED); a JSON Lines case's candidates become a
small calendar of their own (candidate n is the item `c<n>`), read at the
time of the evaluation.
"""
from __future__ import annotations

import hashlib
import json
import threading
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from resolver.domain.judgment import NO_MATCH, QUESTION_ID, RANKER_BACKEND, ThresholdRule, ranked_options
from resolver.evaluation.errors import InvalidEvaluation
from resolver.evaluation.metrics import CaseOutcome

if TYPE_CHECKING:
    from resolver.calendars.memory import MemoryCalendar
    from resolver.evaluation.cases import CalendarMeta, CalendarSet, Case, CalendarCase

# The question ID the ranker's thresholds are stored and approved under.
QUESTION = QUESTION_ID
NOT_LIVE = frozenset({"COMPLETED", "CANCELLED"})


class RankerScorer:
    """The deployed relevance model and encoder, answering a case through the pipeline."""

    name = "built-in ranker"
    backend = RANKER_BACKEND
    probability_source = "model"
    question = QUESTION

    def __init__(self, *, model: Any, encoder: Any, margin: float, language: str, other_kind: bool = True) -> None:
        encoder_name = encoder.name if encoder is not None else None
        self.relevance = model
        self.encoder = encoder
        self.margin = margin
        self.language = language
        self.other_kind = other_kind
        self.model = model.scorer_name(encoder_name)
        self.fingerprint = model.fingerprint(encoder_name)
        self._calendars: dict[str, MemoryCalendar] = {}
        self._lock = threading.Lock()

    def score(self, case: Case | CalendarCase) -> CaseOutcome:
        from resolver.evaluation.cases import CalendarCase

        if isinstance(case, CalendarCase):
            meta = case.calendar.meta
            calendar = self._calendar_of(case.calendar)
            outcome = self._resolve(case.reference, case.kind, calendar, now=meta.now, zone=ZoneInfo(meta.time_zone))
            return self._case_outcome(case.id, case.expected, outcome, key=lambda item: item.uid)
        calendar = _candidates_calendar(case)
        outcome = self._resolve(case.reference, case.kind, calendar, now=datetime.now(timezone.utc),
                                zone=timezone.utc)
        return self._case_outcome(case.id, case.expected, outcome, key=lambda item: item.uid[1:])

    def _calendar_of(self, calendar_set: CalendarSet) -> MemoryCalendar:
        from resolver.calendars.memory import MemoryCalendar

        with self._lock:
            if calendar_set.digest not in self._calendars:
                self._calendars[calendar_set.digest] = MemoryCalendar(
                    items=calendar_items(calendar_set.items, calendar_set.meta),
                    closed=closed_items(calendar_set.items, calendar_set.meta))
            return self._calendars[calendar_set.digest]

    def _resolve(self, text: str, kind: str, calendar: Any, *, now: datetime, zone: Any) -> Any:
        from resolver.domain.items import Kind
        from resolver.domain.pipeline import resolve
        from resolver.domain.requests import ResolveRequest
        from resolver.judges.disabled import DisabledJudge

        request = ResolveRequest(text=text, kind=Kind(kind), time_zone=zone)
        return resolve(request=request, calendar=calendar, judge=DisabledJudge(),
                       policy=_OwnRule(self.model, self.fingerprint, self.margin), request_id="eval-ranker",
                       now=now, language=self.language, semantic=self.encoder, ranker=self.relevance,
                       other_kind=self.other_kind)

    def _case_outcome(self, case_id: str, expected: Any, outcome: Any, *, key: Any) -> CaseOutcome:
        judgment = outcome.judgment
        resolved_by_ranker = (outcome.item is not None and judgment is not None
                              and getattr(judgment, "backend", None) == RANKER_BACKEND)
        if not resolved_by_ranker:
            # Never accepted at any threshold: exact, by date, nothing offered, a tie, none on top, a small margin.
            return CaseOutcome(case_id=case_id, expected=expected, top_option=NO_MATCH, top_probability=0.0,
                               runner_up_probability=0.0, settled=_settled(outcome))
        ranked = ranked_options(judgment.choice, judgment.probabilities)
        occurrence = outcome.occurrences.get(outcome.item.item_id)
        return CaseOutcome(case_id=case_id, expected=expected, top_option=key(outcome.item),
                           top_probability=ranked[0][1], runner_up_probability=ranked[1][1] if len(ranked) > 1 else 0.0,
                           occurrence_start=occurrence.start.isoformat() if occurrence is not None else None)


def _settled(outcome: Any) -> bool:
    """The pipeline answered before the model weighed a candidate: an exact title, ID or UID (resolved, or a
    tie of exact titles), or a question by date alone (its clarification lists the range's items in date
    order, and its question names no model's order)."""
    from resolver.domain.items import Method

    if outcome.method is Method.DETERMINISTIC:
        return True
    return outcome.question is not None and outcome.question.retrieval is None


class _OwnRule:
    """The ranker's own threshold at 0 with the deployed margin; nothing for any other model."""

    def __init__(self, model: str, fingerprint: str, margin: float) -> None:
        self._key = (model, fingerprint)
        self._rule = ThresholdRule(threshold=0.0, margin=margin)

    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        return self._rule if (model, fingerprint) == self._key and question == QUESTION else None


def build_scorer() -> RankerScorer:
    """The deployed ranker (RESOLVER RELEVANCE_MODEL, SEMANTIC, LANGUAGE, THRESHOLD_MARGIN, OTHER_KIND) as a
    scorer: what the pipeline decides in this deployment is what is certified."""
    from resolver.conf import resolver_settings
    from resolver.rankers import relevance_model, semantic_encoder

    model = relevance_model()
    if model is None:
        raise InvalidEvaluation("the built-in ranker is off (RESOLVER['RELEVANCE_MODEL'] is None)")
    return RankerScorer(model=model, encoder=semantic_encoder(),
                        margin=float(resolver_settings.THRESHOLD_MARGIN), language=str(resolver_settings.LANGUAGE),
                        other_kind=bool(resolver_settings.OTHER_KIND))


# -- calendars ---------------------------------------------------------------------------------------------

def _candidates_calendar(case: Case) -> MemoryCalendar:
    """A JSON Lines case's candidates as a calendar: candidate n is the item c<n>, as the judge is shown them."""
    from resolver.calendars.memory import MemoryCalendar
    from resolver.domain.items import Kind, Occurrence, make_item
    from resolver.domain.times import when_from_iso

    kind = Kind(case.kind)
    items = []
    for number, candidate in enumerate(case.candidates, start=1):
        uid = f"c{number}"
        common = dict(collection_path=f"/cases/{candidate.get('collection') or 'cases'}/", uid=uid,
                      title=str(candidate.get("title") or ""), etag=f'"{uid}"', kind=kind,
                      status=candidate.get("status"), href=f"/cases/{uid}.ics")
        if kind is Kind.TASK:
            items.append(make_item(**common, due=when_from_iso(candidate.get("due"))))
        else:
            start = when_from_iso(candidate.get("start"))
            occurrences = ()
            if isinstance(start, datetime):
                occurrences = (Occurrence(start=start, end=start + timedelta(hours=1), recurrence_id=None),)
            items.append(make_item(**common, start=start, occurrences=occurrences))
    return MemoryCalendar(items=items)


def calendar_items(raw_items: Any, meta: CalendarMeta) -> list[Any]:
    """A calendar set's live items as `Item`s: what the retrieval bench resolves against."""
    return _items(raw_items, meta, closed=False)


def closed_items(raw_items: Any, meta: CalendarMeta) -> list[Any]:
    """Its completed tasks and cancelled events (an event's with an occurrence in the horizon), as the reader
    keeps them apart (FetchResult.closed): never candidates, a reference that names one is told so."""
    return _items(raw_items, meta, closed=True)


def _items(raw_items: Any, meta: CalendarMeta, *, closed: bool) -> list[Any]:
    from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM, Kind, Occurrence, make_item
    from resolver.domain.times import when_from_iso

    built = []
    for raw in raw_items:
        status = str(raw.get("status") or "").upper()
        if (status in NOT_LIVE) is not closed:
            continue  # a completed task or a cancelled event is not live (the reader keeps them apart)
        kind = Kind(raw["kind"])
        etag = '"' + hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:16] + '"'
        path = f"/user/{raw['collection']}/"
        common = dict(collection_path=path, uid=raw["uid"], title=raw["title"], etag=etag, kind=kind,
                      status=status if closed else "NEEDS-ACTION" if kind is Kind.TASK else None,
                      href=f"{path}{raw['uid']}.ics")
        if kind is Kind.TASK:
            built.append(make_item(**common, due=when_from_iso(raw.get("due"))))
            continue
        spans = occurrences(raw, meta, limit=MAX_OCCURRENCES_PER_ITEM)
        if not spans:
            continue  # no occurrence in the horizon: not live, nor kept as cancelled
        occ = tuple(Occurrence(start=s, end=e, recurrence_id=rid) for s, e, rid in spans)
        built.append(make_item(**common, start=occ[0].start, occurrences=occ))
    return built


def occurrences(item: dict[str, Any], meta: Any, *, limit: int) -> list[tuple[datetime, datetime, str | None]]:
    """The event's live occurrences (start, end, recurrence_id) in [now, now + horizon], by start.

    A series is expanded in wall-clock time in the set's zone, so that a
    weekly 18:30 stays at 18:30 across the change to summer time, as a
    calendar with TZID does. An occurrence is live when it ends after `now`
    and starts before the horizon's end.
    """
    from dateutil.rrule import rrulestr

    zone = ZoneInfo(meta.time_zone)
    start = _when(item["start"], zone)
    end = _when(item["end"], zone)
    length = end - start
    window_end = meta.now + timedelta(days=meta.horizon_days)
    if not item.get("rrule"):
        return [(start, end, None)] if end > meta.now and start < window_end else []
    naive = start.replace(tzinfo=None)
    rule = rrulestr(item["rrule"], dtstart=naive)
    lo = (meta.now - length).astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
    hi = window_end.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
    excluded = {datetime.fromisoformat(value) for value in item.get("exdate", ())}
    moved = {datetime.fromisoformat(o["recurrence_id"]): o for o in item.get("overrides", ())}
    spans = []
    for wall in rule.between(lo, hi, inc=True):
        original = wall.replace(tzinfo=zone)
        if original in excluded:
            continue
        rid = original.isoformat()
        if original in moved:
            o = moved[original]
            spans.append((_when(o["start"], zone), _when(o["end"], zone), rid))
        else:
            spans.append((original, original + length, rid))
    live = [s for s in spans if s[1] > meta.now and s[0] < window_end]
    live.sort(key=lambda s: s[0])
    return live[:limit]


def _when(value: str, zone: ZoneInfo) -> datetime:
    """An event's time: an all-day date is its midnight in the set's zone."""
    if len(value) == 10:
        day = date.fromisoformat(value)
        return datetime(day.year, day.month, day.day, tzinfo=zone)
    return datetime.fromisoformat(value).astimezone(zone)
