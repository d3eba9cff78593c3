"""The ports: what the pipeline needs from the outside world, declared once.

Backends (resolver/calendars/, resolver/judges/, resolver/thresholds.py)
implement these protocols; settings name the implementations by dotted path
(`RESOLVER["CALENDAR_BACKEND"]`, `RESOLVER["JUDGE_BACKEND"]`). Nothing here
imports Django.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, Protocol, Sequence, runtime_checkable

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


@runtime_checkable
class CalendarSource(Protocol):
    def collections(self) -> Sequence[Collection]: ...

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: tzinfo) -> FetchResult:
        """Live items of `kind`, from the given collections or all of them.

        `time_zone` is the request's zone, parsed at the boundary: floating
        times and all-day dates in the calendar data are read in it. Items
        carry `date`/`datetime` values (`Item.due`, `Item.start`), never strings.

        Raises CollectionNotFound for an unknown ID and CalendarUnavailable
        when the server cannot be read.
        """
        ...


@runtime_checkable
class Judge(Protocol):
    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        """Answer `question`; never raise: every failure is a JudgmentUnavailable."""
        ...


class ThresholdPolicy(Protocol):
    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        """The approved rule for exactly this question, model and wording, or None."""
        ...


class NoThresholds:
    """The policy when nothing was approved: confidence never resolves."""

    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        return None
