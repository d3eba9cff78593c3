"""The ports: what the pipeline needs from the outside world, declared once.

Backends (resolver/calendars/, resolver/judges/, resolver/thresholds.py)
implement these protocols; settings name the implementations by dotted path
(`RESOLVER["CALENDAR_BACKEND"]`, `RESOLVER["JUDGE_BACKEND"]`). The semantic
signal's encoder (`RESOLVER["SEMANTIC_ENCODER"]`) has its protocol beside the
vectors it makes (resolver.domain.title_vectors.Encoder). Nothing here
imports Django.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from resolver.domain.items import Collection, Item, Kind
from resolver.domain.judgment import Judgment, JudgmentUnavailable, Question, ThresholdRule


@dataclass(frozen=True)
class SkippedResource:
    """A calendar resource a backend could not read: counted in the `items_skipped` warning."""

    href: str
    reason: str


@dataclass(frozen=True)
class FetchResult:
    """What `CalendarSource.fetch` returns: the live items, and what the read cost and left out."""

    items: tuple[Item, ...]
    skipped: tuple[SkippedResource, ...] = ()
    # Round trips to the server, for the benchmarks and the request log.
    requests: int = 0
    collections_searched: tuple[str, ...] = field(default=())
    # When this fetch read the calendar (aware, UTC): the envelope's `read_at`.
    read_at: datetime | None = None
    # Collections read without the server's time-range filter because the
    # server failed on it (now or recently): the `server_filter_skipped` warning.
    server_filter_skipped: tuple[str, ...] = ()
    # What matching remembers for the reader that read these items
    # (matching.MatchingMemo): its title indexes and title vectors, dropped with
    # the reader. None: the reader keeps nothing, matching starts afresh.
    memo: Any = field(default=None, compare=False, repr=False)
    # Items of the kind that are no longer live (a task COMPLETED or CANCELLED,
    # an event CANCELLED with an occurrence in the window), read with the live
    # ones: never candidates. A reference that names one is answered with
    # nothing open (`closed_item_matched`), not with the live items that look
    # like it ("buy rice" when "Buy rice" is done).
    closed: tuple[Item, ...] = ()


@runtime_checkable
class CalendarSource(Protocol):
    def collections(self) -> Sequence[Collection]: ...

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: tzinfo) -> FetchResult:
        """Live items of `kind`, from the given collections or all of them (and, in
        `FetchResult.closed`, those of the same resources that are completed or cancelled).

        `time_zone` is the request's zone, parsed at the boundary: floating
        times and all-day dates in the calendar data are read in it. Items
        carry `date`/`datetime` values (`Item.due`, `Item.start`), never strings.

        Raises CollectionNotFound for an unknown ID and CalendarUnavailable
        when the server cannot be read.
        """
        ...


def fetch_again(calendar: CalendarSource, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo,
                since: datetime | None) -> FetchResult:
    """A second read in one request (the other kind), where a read made at or after `since` (the first read's
    `read_at`) is fresh enough: the source's optional `fetch_since` may answer it from what that read showed,
    with no round trip (resolver/calendars/backend.py); a source without one, or no `since`, is read again."""
    again = getattr(calendar, "fetch_since", None)
    if since is None or not callable(again):
        return calendar.fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone)
    return again(kind=kind, collection_ids=collection_ids, time_zone=time_zone, since=since)


@runtime_checkable
class Judge(Protocol):
    """A judge backend: everything the app asks of one, and nothing else.

    Besides `judge`, the app reads `backend` (provenance, stored answers, the
    threshold rows it is evaluated for), `model` (what the evaluation asks
    for), `fingerprint` (what a threshold must have been evaluated under) and
    calls `close` when the process lets the judge go. The system check
    resolver.E011 names any of these a configured JUDGE_BACKEND class lacks.

    The process keeps one judge per configuration (resolver.judges.registry),
    so a judge must compare and hash by its configuration: a frozen dataclass
    whose connections are a `compare=False` field.
    """

    @property
    def backend(self) -> str:
        """A short name stored with everything it answered ("jev", "openai"); thresholds are per backend."""
        ...

    @property
    def model(self) -> str:
        """The model it asks for (the one a Judgment reports may be a versioned name of it)."""
        ...

    @property
    def fingerprint(self) -> str:
        """A digest of everything trusted it sends besides the question; a new wording retires thresholds.

        Empty for a judge that never answers (nothing can be approved for it).
        """
        ...

    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        """Answer `question`; never raise: every failure is a JudgmentUnavailable."""
        ...

    def close(self) -> None:
        """Release what it keeps between requests (its HTTP connections); it is not asked again."""
        ...


class Fingerprint:
    """A judge's `fingerprint` that follows from its code alone (its prompt), not its configuration.

        class JevJudge:
            fingerprint = Fingerprint(question_fingerprint)

    Computed on every read (a changed wording shows at once) and readable on
    the class as on a judge, so thresholds evaluated for a built-in backend
    that is not the configured one can still be checked (resolver.thresholds.judge_fingerprint).
    """

    def __init__(self, compute: Callable[[], str]) -> None:
        self._compute = compute

    def __get__(self, judge: object, owner: type | None = None) -> str:
        return self._compute()


class ThresholdPolicy(Protocol):
    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        """The approved rule for exactly this question, model and wording, or None."""
        ...


class NoThresholds:
    """The policy when nothing was approved: confidence never resolves."""

    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        return None
