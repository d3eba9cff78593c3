"""The resolution pipeline: reference in, outcome out. Writes nothing, anywhere.

    resolve(request=..., calendar=..., judge=..., policy=..., request_id=...) -> Outcome

Deterministic first: an exact, unique match never reaches the judge. Anything
else ends in a clarification unless an approved threshold for exactly this
question, responding model and prompt fingerprint authorises the judge's top
candidate.
"""
from __future__ import annotations

import contextlib
import functools
import time
from collections import Counter
from datetime import datetime, timezone, tzinfo
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Sequence

from resolver.domain import deadline
from resolver.domain import judgment as jdg
from resolver.domain.codes import JUDGE_OFF_MESSAGE, JudgmentFailure, Reason, WarningCode
from resolver.domain.errors import CalendarUnavailable, CollectionNotFound
from resolver.domain.items import Item, Kind, Method, Occurrence, match_key, normalise, tokens_of
from resolver.domain.matching import Pool, build_pool, exact_matches
from resolver.domain.times import TimeRange, in_range, occurrence_for, occurrences_in
from resolver.domain.ports import CalendarSource, FetchResult, Judge, ThresholdPolicy, fetch_again
from resolver.domain.requests import ResolveRequest
from resolver.domain import relevance
from resolver.domain.semantic import widen
from resolver.domain import substitution
from resolver.domain.title_vectors import Encoder
from resolver.domain.timeexpr import find_time_expression_in_any
from resolver.domain.emptyrange import nothing_found
from resolver.domain.wordforms import DEFAULT_LANGUAGE


class Status(str, Enum):
    OK = "ok"
    NEEDS_CLARIFICATION = "needs_clarification"


@dataclass(frozen=True)
class OutcomeWarning:
    """A fact the caller should know (`candidate_narrowed` ...); not Python's Warning."""

    code: WarningCode
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, code: WarningCode, **details: Any) -> OutcomeWarning:
        """The warning with its one message (resolver.domain.codes)."""
        return cls(code=code, message=code.message, details=details)


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
    # Why a clarification was needed, for programs (resolver.domain.codes.Reason). None when resolved.
    reason: Reason | None = None
    # When the calendar was read for this request (aware, UTC).
    read_at: datetime | None = None
    # The approved threshold that authorised a resolution on confidence (provenance names it).
    rule: jdg.ThresholdRule | None = None


@deadline.bounded_by_default  # the request's deadline, opened by the services (resolver/domain/deadline.py)
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
    ranker: relevance.RelevanceModel | None = None,
    other_kind: bool = True,
) -> Outcome:
    """Read, match exactly, then by title and time, then rank and ask the judge: the first stage that answers.

    `other_kind`: may read the other kind to name an item of it the reference means (`_other_kind_named`)."""
    language = request.language or language
    max_candidates = min(max_candidates, jdg.MAX_CANDIDATES)
    started = time.perf_counter()
    fetched = calendar.fetch(kind=request.kind, collection_ids=request.collection_ids or None,
                             time_zone=request.time_zone)
    run = _Run(request=request, fetched=fetched, request_id=request_id, read_other_kind=other_kind,
               timings={"calendar_ms": _ms(time.perf_counter() - started)}, warnings=_skipped_warning(fetched),
               now=now or fetched.read_at or datetime.now(timezone.utc))
    exact = _exact(run, max_candidates)
    if exact is not None:
        return exact
    closed = exact_matches(request.text, fetched.closed) if fetched.closed else []
    if closed:
        # No live item has this ID, UID or title; a completed or cancelled one has.
        run.matched()
        return _closed(run, tuple(closed))
    # "Yoga class tomorrow": the time becomes a range, the rest must match a title.
    expression = find_time_expression_in_any(request.text, now=run.now, tz=run.tz, language=language,
                                             titled=functools.partial(_all_title_words, run.fetched.items))
    if expression is not None and expression.rest:
        dated = _title_and_time(expression.rest, fetched.items, expression.range, run.tz)
        if dated is not None:
            item, occurrence = dated
            run.matched()
            return run.outcome(status=Status.OK, method=Method.DETERMINISTIC, item=item,
                               occurrences={item.item_id: occurrence} if occurrence else {})
    pool, candidates, occurrences = _candidates(run, expression, max_candidates=max_candidates, language=language,
                                                semantic=semantic, ranker=ranker, calendar=calendar)
    if not candidates and pool.closed:
        return _closed(run, pool.closed)
    if not candidates:
        # A question by date alone that finds nothing says which range it searched.
        searched = expression.range if expression is not None and pool.by_date else None
        prompt, found = nothing_found(searched, run.tz)
        return run.outcome(status=Status.NEEDS_CLARIFICATION, method=None, reason=Reason.NO_CANDIDATES,
                           prompt=prompt, warnings=run.warnings + tuple(OutcomeWarning(**w) for w in found))
    return _judged(run, pool, candidates, occurrences, judge=judge, policy=policy,
                   time_range=expression.range if expression is not None else None)


@dataclass
class _Run:
    """One resolution in progress: what was read, and what every outcome of it carries."""

    request: ResolveRequest
    fetched: FetchResult
    request_id: str
    timings: dict[str, float]
    warnings: tuple[OutcomeWarning, ...]
    now: datetime
    matching_started: float = field(default_factory=time.perf_counter)
    # The live items of the other kind (`_other_kind`), read when no live item holds every word; None: not read.
    other: FetchResult | None = None
    # Whether that read may be made at all (RESOLVER["OTHER_KIND"]).
    read_other_kind: bool = True

    @property
    def tz(self) -> tzinfo:
        return self.request.time_zone  # parsed at the boundary (requests.parse_time_zone)

    def matched(self) -> None:
        self.timings["matching_ms"] = _ms(time.perf_counter() - self.matching_started)

    def outcome(self, **fields: Any) -> Outcome:
        fields.setdefault("warnings", self.warnings)
        requests = self.fetched.requests + (self.other.requests if self.other is not None else 0)
        return Outcome(request_id=self.request_id, kind=self.request.kind, timings=self.timings,
                       collection_ids=self.fetched.collections_searched, calendar_requests=requests,
                       read_at=self.fetched.read_at, **fields)


def _exact(run: _Run, max_candidates: int) -> Outcome | None:
    """An ID, UID or title that names exactly one live item; several: a clarification among them."""
    exact = exact_matches(run.request.text, run.fetched.items)
    if not exact:
        return None
    run.matched()
    if len(exact) == 1:
        return run.outcome(status=Status.OK, method=Method.DETERMINISTIC, item=exact[0],
                           occurrences=_occurrences(exact[:1], None, run.tz))
    # Many items can share one title; a clarification still lists at most
    # max_candidates of them (in their stable order) and says so.
    listed = tuple(exact[:max_candidates])
    return run.outcome(
        status=Status.NEEDS_CLARIFICATION, method=Method.DETERMINISTIC, candidates=listed,
        reason=Reason.DUPLICATE_TITLES, prompt=Reason.DUPLICATE_TITLES.prompt(listed=len(listed), matched=len(exact)),
        warnings=run.warnings + _narrowed(matched=len(exact), kept=len(listed)),
        occurrences=_occurrences(listed, None, run.tz),
    )


def _other_kind(run: _Run, calendar: CalendarSource) -> FetchResult | None:
    """The live items of the other kind in the same collections: never candidates, but a reference that names
    one ("design review" asked as a task, when it is an event) is told so (`other_kind_matched`), not offered
    the tasks that look like it. A second read, so only when no live item of the kind holds every word of
    the reference (`_other_kind_named`); a server that fails on it costs the request nothing but this
    (None)."""
    started = time.perf_counter()
    left = deadline.remaining()
    # It may spend half of what the request has left, no more: a slow server costs the naming, never the
    # answer (a read past its budget ends as CalendarUnavailable, reason timeout).
    budget = deadline.starting(left / 2) if left is not None else contextlib.nullcontext()
    try:
        with budget:
            # What the first read showed of the other kind answers where the source can tell (fetch_again).
            return fetch_again(calendar, kind=run.request.kind.other,
                               collection_ids=run.fetched.collections_searched or None,
                               time_zone=run.request.time_zone, since=run.fetched.read_at)
    except (CalendarUnavailable, CollectionNotFound):
        return None
    finally:
        run.timings["calendar_ms"] = round(run.timings["calendar_ms"] + _ms(time.perf_counter() - started), 3)


def _all_title_words(items: Sequence[Item], expression: str) -> bool:
    """Whether every word of `expression` is a word of some title: then it names a title, not a time."""
    words = tokens_of(match_key(expression))
    return bool(words) and all(any(word in item.title_tokens for item in items) for word in words)


def _candidates(run: _Run, expression: Any, *, max_candidates: int, language: str, semantic: Encoder | None,
                ranker: relevance.RelevanceModel | None,
                calendar: CalendarSource) -> tuple[Pool, tuple[Item, ...], dict[str, Occurrence]]:
    """The ranked pool for the reference (less its time expression), and each candidate's occurrence."""
    text = expression.rest if expression else run.request.text
    time_range = expression.range if expression else None
    # With the model and the encoder, words that name no title are weighed by what the encoder brings;
    # otherwise the range's items are the only candidates such a reference has.
    pool = build_pool(text, run.fetched.items, limit=relevance.PREPOOL if ranker else max_candidates,
                      language=language, time_range=time_range, tz=run.tz,
                      bonus_words=expression.expression.split() if expression else (), memo=run.fetched.memo,
                      unmatched_by_date=ranker is None or semantic is None,
                      time_language=expression.language if expression else None)
    named = _other_kind_named(pool, text, run, calendar, language=language, time_range=time_range,
                              bonus_words=expression.expression.split() if expression else ())
    if named:
        run.matched()
        return Pool(candidates=(), matched=0, closed=named), (), {}
    if ranker is None:
        # The semantic signal adds what words miss and reorders; it never resolves (domain/semantic.py).
        pool = widen(pool, text, run.fetched.items, encoder=semantic, memo=run.fetched.memo, limit=max_candidates,
                     language=language)
    elif pool.by_date:
        # Asked by date alone: every item in the range is meant, nearest first; nothing to weigh.
        pool = Pool(candidates=pool.candidates[:max_candidates], matched=pool.matched, by_date=True)
    else:
        lexical, closed_ids = pool.candidates, frozenset[str]()
        if run.fetched.closed:
            lexical, closed_ids = _with_closed(pool, text, run, language=language, time_range=time_range,
                                               bonus_words=expression.expression.split() if expression else ())
        first = _words_first(ranker, text, run, lexical=lexical, matched=pool.matched, time_range=time_range,
                             language=language, unknown=pool.unknown, semantic=semantic,
                             max_candidates=max_candidates, closed=closed_ids)
        if first is not None:
            pool = first
        else:
            gathered = relevance.gather(text, run.fetched.items, lexical=lexical, matched=pool.matched,
                                        time_range=time_range, tz=run.tz, memo=run.fetched.memo, encoder=semantic,
                                        language=language, unknown=pool.unknown, centroid=ranker.centroid,
                                        words=ranker.reads_words, taxonomy=ranker.taxonomy)
            pool = _scored_pool(ranker, gathered, semantic, max_candidates, closed_ids, foreign=_foreign(semantic))
    run.matched()
    run.warnings += _narrowed_warning(pool)
    candidates = tuple(c.item for c in pool.candidates)
    occurrences = _occurrences(candidates, time_range, run.tz)
    run.warnings += _outside_range_warning(candidates, occurrences, time_range)
    return pool, candidates, occurrences


def _other_kind_named(pool: Pool, text: str, run: _Run, calendar: CalendarSource, *, language: str,
                      time_range: TimeRange | None, bonus_words: Sequence[str]) -> tuple[Item, ...]:
    """When no live item of the kind holds every word of the reference, the items of the other kind it names:
    by its whole text as an ID, UID or title, else by a title that has the reference's words and no other
    (any order, any form, as the matcher matches words): "tomato watering" asked as an event, when "Water the
    tomatoes" is a task; else by a title that holds the reference or that it holds whole, and explains more of
    it than any title of the kind asked for (`_other_kind_whole`).

    The nearest things to an exact title, and nearly as safe on the labelled set: unlike the model's
    probability (docs/retrieval.md, "Items of the other kind"), they took no reference to a live item from its
    train and calibration halves, and one from its test split (a German task only the encoder finds, for
    "skin doctor appointment"). A live item holding every word may be meant, and is offered; only without one
    is the other kind read at all."""
    if not run.read_other_kind or pool.by_date or any(c.unmatched == 0 for c in pool.candidates):
        return ()
    run.other = _other_kind(run, calendar)
    if run.other is None or not run.other.items:
        return ()
    exact = exact_matches(run.request.text, run.other.items)
    if exact:
        return tuple(exact)
    found = build_pool(text, run.other.items, limit=relevance.PREPOOL, language=language, time_range=time_range,
                       tz=run.tz, bonus_words=bonus_words, memo=run.other.memo, unmatched_by_date=False)
    same_words = tuple(c.item for c in found.candidates if c.unmatched == 0 and c.coverage >= 1.0)
    if same_words:
        return same_words
    return _other_kind_whole(found, pool, text, run, language=language, time_range=time_range,
                             bonus_words=bonus_words)


def _other_kind_whole(found: Pool, pool: Pool, text: str, run: _Run, *, language: str,
                      time_range: TimeRange | None, bonus_words: Sequence[str]) -> tuple[Item, ...]:
    """The titles of the other kind the reference holds whole, or that hold every word of it, and leave fewer of
    its words over than any title of the kind asked for, live or closed: "guitar lesson prep" asked as a task,
    when "Guitar lesson" is an event and no task holds both words; "seed swap", when the event is "Seed swap
    at the community garden". Never one that holds a word the reference negates ("the annual general meeting
    itself, not the agenda").

    Counted in words, not in the matcher's weights: the two kinds' titles weigh words differently."""
    negated = relevance.negated_words(text)
    whole = [c for c in found.candidates if (c.coverage >= 1.0 or c.unmatched == 0)
             and all(w in c.left_over for w in negated)]
    if not whole:
        return ()
    fewest = min(len(c.left_over) for c in whole)

    def as_good(candidates: Sequence[Any]) -> bool:
        return any(len(c.left_over) <= fewest for c in candidates)

    # The closed items are matched only when no live one is as good (the rare case this rule names something).
    if as_good(pool.candidates) or (run.fetched.closed and as_good(build_pool(
            text, run.fetched.closed, limit=relevance.PREPOOL, language=language, time_range=time_range,
            tz=run.tz, bonus_words=bonus_words, memo=run.fetched.memo, unmatched_by_date=False).candidates)):
        return ()
    return tuple(c.item for c in whole if len(c.left_over) == fewest)


def _with_closed(pool: Pool, text: str, run: _Run, *, language: str, time_range: TimeRange | None,
                 bonus_words: list[str]) -> tuple[tuple[Any, ...], frozenset[str]]:
    """The lexical pool joined by the closed items words match, best first (live first on a tie), at most
    relevance.PREPOOL; and the closed ones' item IDs. The model weighs them as it weighs the live ones.

    Not the other kind's items (`run.other`): joined here, an event more probable than the task meant lost
    references to live items (docs/retrieval.md, "Items of the other kind"); `_other_kind_named` reads them."""
    found = build_pool(text, run.fetched.closed, limit=relevance.PREPOOL, language=language, time_range=time_range,
                       tz=run.tz, bonus_words=bonus_words, memo=run.fetched.memo, unmatched_by_date=False)
    if found.by_date or not found.candidates:
        return pool.candidates, frozenset()
    # By score, the live ones too (the matcher's near-tie order is not quite by score): the model was trained
    # and measured on pools joined this way; keeping the live order instead lost a cross-language reference.
    joined = sorted(pool.candidates + found.candidates, key=lambda c: -c.score)[:relevance.PREPOOL]
    return tuple(joined), frozenset(c.item.item_id for c in joined) & {c.item.item_id for c in found.candidates}


# A clarification names at most this many of the closed items a reference matches.
CLOSED_SHOWN = 3


def _closed(run: _Run, items: tuple[Item, ...]) -> Outcome:
    """Nothing live of the kind is named; a completed or cancelled item is, or an item of the other kind: no
    candidates, and which item it is."""
    if items[0].kind is not run.request.kind:
        code = WarningCode.OTHER_KIND_MATCHED
        shown = [{"item_id": item.item_id, "title": item.title, "kind": item.kind.value,
                  "collection_id": item.collection_id} for item in items[:CLOSED_SHOWN]]
    else:
        code = WarningCode.CLOSED_ITEM_MATCHED
        shown = [{"item_id": item.item_id, "title": item.title, "status": item.status or "",
                  "collection_id": item.collection_id} for item in items[:CLOSED_SHOWN]]
    # "it names an event", or "it names events" when several are named ("meeting" asked as a task).
    prompt = code.prompt.format(asked=run.request.kind.value, named=items[0].kind.value,
                                named_with_article=items[0].kind.with_article if len(items) == 1
                                else f"{items[0].kind.value}s")
    return run.outcome(status=Status.NEEDS_CLARIFICATION, method=None, reason=Reason.NO_CANDIDATES,
                       prompt=prompt, warnings=run.warnings + (OutcomeWarning.of(code, items=shown),))


def _words_first(ranker: relevance.RelevanceModel, text: str, run: _Run, *, lexical: Sequence[Any], matched: int,
                 time_range: TimeRange | None, language: str, unknown: float, semantic: Encoder | None,
                 max_candidates: int, closed: frozenset[str]) -> Pool | None:
    """The model's pool without the encoder, when a live title holds every word of the reference and the words
    first variant is as sure as the model file says (`RelevanceModel.words_first`), or the pool is crowded with
    such titles (its order then never resolved on: `RelevanceModel.first_answer`); else None: encode.

    On the calibration split such answers never put a worse first than the encoder's variant, and never offer a
    reference to nothing what it answers with nothing (docs/retrieval.md, "Words first"). They are the model's
    answers under its own name and fingerprint, which cover the rule: a certificate for the model covers them.
    """
    if semantic is None or ranker.words_first is None or run.fetched.memo is None \
            or not relevance.holds_every_word(lexical, closed):
        return None
    gathered = relevance.gather(text, run.fetched.items, lexical=lexical, matched=matched, time_range=time_range,
                                tz=run.tz, memo=run.fetched.memo, encoder=None, language=language, unknown=unknown,
                                taxonomy=ranker.taxonomy)
    scored = ranker.first_answer(gathered, limit=max_candidates, closed=closed)
    if scored is None:
        return None
    return _scored_pool(ranker, gathered, None, max_candidates, closed, scored=scored, named_for=semantic.name,
                        foreign=_foreign(semantic))


def _foreign(semantic: Encoder | None) -> Any:
    """Whether a text is mostly in a language other than English, by the encoder's dictionaries (None without
    them: `substitution.swapped_words`)."""
    glossary = getattr(semantic, "glossary", None)
    return None if glossary is None else (lambda text: glossary.gloss(text) is not None)


def _scored_pool(ranker: relevance.RelevanceModel, gathered: relevance.Gathered, semantic: Encoder | None,
                 limit: int, closed: frozenset[str] = frozenset(), *, scored: relevance.Scored | None = None,
                 named_for: str | None = None, foreign: Any = None) -> Pool:
    """The model's order and cut: the candidates it finds probable enough, most probable first.

    `scored`: the model's answer already (`_words_first`'s); `named_for`: the encoder the scorer is named for
    when it answered without it; `foreign`: whether a text is mostly not English (`substitution.swapped_words`).
    """
    scored = scored if scored is not None else ranker.rank(gathered, limit=limit, closed=closed)
    if scored.closed_top is not None:
        return Pool(candidates=(), matched=0, closed=(scored.closed_top.item,))
    encoder_name = semantic.name if semantic is not None and gathered.context.with_signal else None
    # Narrowed: more reached the floor than are listed, or words matched more than the model
    # could weigh and the weakest it weighed still reached the floor.
    matched = scored.above_floor
    weighed = sum(1 for c in gathered.lexical if c.item.item_id not in closed)  # live ones words found
    if gathered.matched > weighed and scored.lexical_tail_kept:
        matched += gathered.matched - weighed
    return Pool(candidates=scored.candidates, matched=max(matched, len(scored.candidates)),
                semantic_model=encoder_name,
                similarities={c.item.item_id: gathered.context.cosines[c.item.item_id] for c in scored.candidates
                              if c.item.item_id in gathered.context.cosines},
                scored=relevance.PoolScore(scorer=ranker.scorer_name(named_for or encoder_name),
                                           fingerprint=ranker.fingerprint(named_for or encoder_name),
                                           retrieval=ranker.retrieval(named_for or encoder_name),
                                           probabilities=scored.probabilities, none=scored.none,
                                           crowded=scored.crowded,
                                           swapped=_swapped(gathered.context.text, scored.candidates, foreign)))


def _swapped(text: str, candidates: Sequence[Any], foreign: Any) -> tuple[str, str] | None:
    """The words the model's first candidate and the reference swap, if they do (never resolved on)."""
    if not candidates or candidates[0].score <= 0:
        return None  # nothing listed, or only the encoder found it: no words to compare
    first = candidates[0]
    return substitution.swapped_words(text, first.left_over, first.uncovered, first.item.title,
                                      first.item.title_tokens,
                                      skip=relevance.function_words() | relevance.filler_words(), foreign=foreign)


def _judged(run: _Run, pool: Pool, candidates: tuple[Item, ...], occurrences: dict[str, Occurrence], *,
            judge: Judge, policy: ThresholdPolicy, time_range: TimeRange | None = None) -> Outcome:
    """The judge's answer, and what an approved threshold for it allows: the item, or a clarification.

    The relevance model, when it ordered the pool, is asked first: only a threshold certified
    and approved for its name and fingerprint lets its top candidate be the answer.
    """
    question = jdg.build_question(
        reference=run.request.text, kind=run.request.kind,
        candidates=[_facts(item, occurrences.get(item.item_id)) for item in candidates],
        today=run.now.astimezone(run.tz).date(), retrieval=_retrieval(pool),
    )
    numbering = {number: item.item_id for number, item in enumerate(candidates, start=1)}
    if pool.scored is not None:
        resolved = _ranker_resolved(run, pool, candidates, occurrences, question, numbering, policy, time_range)
        if resolved is not None:
            return resolved
    judging_started = time.perf_counter()
    # Past the resolution's deadline the judge is not asked: a clarification, in search order.
    judgment = (jdg.JudgmentUnavailable(reason=JudgmentFailure.TIMEOUT.value, detail="resolution budget spent")
                if deadline.expired() else judge.judge(question, request_id=run.request_id))
    run.timings["judgment_ms"] = _ms(time.perf_counter() - judging_started)
    if isinstance(judgment, jdg.JudgmentUnavailable):
        run.warnings += (_unavailable_warning(judgment),)
        reason = _unsure(candidates)
        return run.outcome(
            status=Status.NEEDS_CLARIFICATION, method=None, candidates=candidates, reason=reason,
            prompt=_prompt(reason, pool), question=question,
            judgment=judgment, numbering=numbering, occurrences=occurrences,
        )
    # The judge's own fingerprint: it covers what that backend sent (a chat
    # model's system prompt, correction and schema), not only the question.
    rule = policy.find(question=jdg.QUESTION_ID, model=judgment.model,
                       fingerprint=jdg.effective_fingerprint(question, judgment))
    decision = _untwinned(run, jdg.decide(judgment, rule), candidates, time_range)
    by_number = judgment.number_probabilities()
    probabilities = {numbering[n]: p for n, p in by_number.items() if n in numbering}
    shared = dict(question=question, judgment=judgment, decision=decision, numbering=numbering,
                  probabilities=probabilities, occurrences=occurrences)
    if decision.resolved_number is not None:
        return run.outcome(status=Status.OK, method=Method.SEMANTIC,
                           item=candidates[decision.resolved_number - 1], rule=rule, **shared)
    return _undecided(run, pool, candidates, judgment, decision, shared)


def _retrieval(pool: Pool) -> str | None:
    """What chose and ordered the candidates, for the judge's fingerprint: the relevance model
    (name and fingerprint), else the semantic signal's model when it changed the pool."""
    if pool.scored is not None:
        return pool.scored.retrieval
    return pool.semantic_model


def ranker_judgment(scored: Any) -> jdg.Judgment:
    """The relevance model's distribution as a judgment over the listed candidates: option n is the
    n-th candidate, `no_match` is everything else (none of them, or one the floor left out)."""
    probabilities = {str(n): p for n, p in enumerate(scored.probabilities, start=1)}
    probabilities[jdg.NO_MATCH] = round(max(0.0, 1.0 - sum(scored.probabilities)), 6)
    choice = max(probabilities, key=lambda key: (probabilities[key], key != jdg.NO_MATCH))
    return jdg.Judgment(model=scored.scorer, choice=choice, probabilities=probabilities, server_request_id=None,
                        latency_ms=0, attempts=1, backend=jdg.RANKER_BACKEND,
                        probability_source=jdg.ProbabilitySource.MODEL, fingerprint=scored.fingerprint)


def _ranker_resolved(run: _Run, pool: Pool, candidates: tuple[Item, ...], occurrences: dict[str, Occurrence],
                     question: jdg.Question, numbering: dict[int, str],
                     policy: ThresholdPolicy, time_range: TimeRange | None = None) -> Outcome | None:
    """The model's top candidate when a certified, approved threshold for this model authorises it; else None
    (always for a crowded pool's order, `relevance.Scored.crowded`, and for a first candidate that swaps a word
    of the reference for another in the same place, `substitution.swapped_words`)."""
    if pool.scored.crowded:
        return None
    judgment = ranker_judgment(pool.scored)
    rule = policy.find(question=jdg.QUESTION_ID, model=judgment.model, fingerprint=judgment.fingerprint)
    decision = _untwinned(run, jdg.decide(judgment, rule), candidates, time_range)
    if decision.resolved_number is None:
        return None
    if pool.scored.swapped is not None:
        # The threshold would resolve it: say why it is asked instead.
        reference_word, title_word = pool.scored.swapped
        run.warnings += (OutcomeWarning.of(WarningCode.WORD_SWAPPED, item_id=candidates[0].item_id,
                                           reference_word=reference_word, title_word=title_word),)
        return None
    probabilities = {numbering[n]: p for n, p in judgment.number_probabilities().items()}
    return run.outcome(status=Status.OK, method=Method.SEMANTIC, item=candidates[decision.resolved_number - 1],
                       question=question, judgment=judgment, decision=decision, numbering=numbering,
                       probabilities=probabilities, occurrences=occurrences, rule=rule)


def _untwinned(run: _Run, decision: jdg.Decision, candidates: tuple[Item, ...],
               time_range: TimeRange | None) -> jdg.Decision:
    """The decision, refused ("same_title") when it resolves one of live items with the same title (trimmed,
    case-folded) that the reference's time range, if it names one, does not tell apart.

    Such items differ in nothing the reference says: which one a scorer prefers is an accident of the pool
    (one copy among the words' best, the other brought by the encoder alone), a tie (invariant 5).
    """
    if decision.resolved_number is None:
        return decision
    chosen = candidates[decision.resolved_number - 1]
    inside = time_range is not None and in_range(chosen, time_range, run.tz)
    for item in run.fetched.items:
        if item.title_key == chosen.title_key and item.item_id != chosen.item_id and (
                time_range is None or in_range(item, time_range, run.tz) == inside):
            return jdg.Decision(resolved_number=None, reason="same_title", top_option=decision.top_option,
                                top_probability=decision.top_probability)
    return decision


def _undecided(run: _Run, pool: Pool, candidates: tuple[Item, ...], judgment: jdg.Judgment,
               decision: jdg.Decision, shared: dict[str, Any]) -> Outcome:
    """The judge answered but nothing is authorised: the candidates, its suggestion first (never a tie's)."""
    numbering, probabilities = shared["numbering"], shared["probabilities"]
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
    reason = Reason.JUDGE_NO_MATCH if top_is_no_match else _unsure(ranked)
    return run.outcome(
        status=Status.NEEDS_CLARIFICATION, method=Method.SEMANTIC, candidates=ranked,
        suggested_item_id=suggested, reason=reason,
        suggested_probability=probabilities.get(suggested) if suggested else None,
        prompt=_prompt(reason, pool), **shared,
    )


def _unavailable_warning(judgment: jdg.JudgmentUnavailable) -> OutcomeWarning:
    return OutcomeWarning(
        code=WarningCode.JUDGMENT_UNAVAILABLE,
        # The embedded default has no judge: say so, rather than that a service failed.
        message=(JUDGE_OFF_MESSAGE if judgment.reason == JudgmentFailure.DISABLED
                 else WarningCode.JUDGMENT_UNAVAILABLE.message),
        details={"reason": judgment.reason},
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
    return (OutcomeWarning.of(WarningCode.OCCURRENCE_OUTSIDE_RANGE, item_ids=outside),)


def _facts(item: Item, occurrence: Occurrence | None) -> jdg.CandidateFacts:
    # The judge sees the occurrence the reference names, not only the next one.
    return jdg.facts_from_item(item, occurrence)


def _unsure(candidates: tuple[Item, ...]) -> Reason:
    """One candidate is a yes-or-no question, not a choice among several."""
    return Reason.SINGLE_CANDIDATE if len(candidates) == 1 else Reason.AMBIGUOUS


def _prompt(reason: Reason, pool: Pool) -> str:
    """The reason's question for the candidates listed (its texts: resolver/domain/codes.py)."""
    return reason.prompt(listed=len(pool.candidates), matched=pool.matched)


def _narrowed_warning(pool: Pool) -> tuple[OutcomeWarning, ...]:
    return _narrowed(matched=pool.matched, kept=len(pool.candidates))


def _narrowed(*, matched: int, kept: int) -> tuple[OutcomeWarning, ...]:
    if matched <= kept:
        return ()
    return (OutcomeWarning.of(WarningCode.CANDIDATE_NARROWED, matched=matched, kept=kept),)


def _skipped_warning(fetched: FetchResult) -> tuple[OutcomeWarning, ...]:
    found: tuple[OutcomeWarning, ...] = ()
    if fetched.skipped:
        reasons = Counter(s.reason for s in fetched.skipped)
        found += (OutcomeWarning.of(WarningCode.ITEMS_SKIPPED, count=len(fetched.skipped),
                                    reasons=dict(sorted(reasons.items()))),)
    if fetched.server_filter_skipped:
        found += (OutcomeWarning.of(WarningCode.SERVER_FILTER_SKIPPED,
                                    collection_ids=list(fetched.server_filter_skipped)),)
    return found


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)

