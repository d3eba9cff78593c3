"""The clarification page's reads: its candidates as the server has them now, and date labels.

Nothing here writes, and nothing here chooses a backend: the callers
(resolver.services) pass the calendar in.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from typing import Sequence

from resolver.domain.errors import CollectionNotFound
from resolver.domain.items import Item, Kind
from resolver.domain.ports import CalendarSource
from resolver.web.tokens import ClarificationClaims


@dataclass(frozen=True)
class LiveCandidate:
    number: int
    item_id: str
    # None when the item is no longer live: deleted, completed, or moved.
    item: Item | None
    suggested: bool
    probability: float | None

    @property
    def gone(self) -> bool:
        return self.item is None

    @property
    def percent(self) -> int | None:
        return None if self.probability is None else round(self.probability * 100)

    @property
    def when(self) -> tuple[str, str] | None:
        return when_label(self.item) if self.item is not None else None


def live_candidates(claims: ClarificationClaims, *, calendar: CalendarSource,
                    time_zone: tzinfo) -> list[LiveCandidate]:
    """The token's candidates in its order, each with its item as the server has it now.

    Raises CalendarUnavailable when the server cannot be read.
    """
    by_id, _ = live_items(kind=claims.kind, collection_ids=claims.collection_ids, wanted=claims.candidate_ids,
                          calendar=calendar, time_zone=time_zone)
    return [
        LiveCandidate(
            number=number,
            item_id=item_id,
            item=by_id.get(item_id),
            suggested=item_id == claims.suggested_item_id,
            probability=claims.probability_of(item_id),
        )
        for number, item_id in enumerate(claims.candidate_ids, start=1)
    ]


def live_items(*, kind: Kind, collection_ids: Sequence[str], wanted: Sequence[str], calendar: CalendarSource,
               time_zone: tzinfo) -> tuple[dict[str, Item], datetime | None]:
    """The wanted items that are live now, by item ID, and when the calendar was read."""
    if not wanted:
        return {}, None
    scope: Sequence[str] = collection_ids
    try:
        fetched = calendar.fetch(kind=kind, collection_ids=scope or None, time_zone=time_zone)
    except CollectionNotFound as err:
        # A collection deleted since the question was asked: its items are gone,
        # the others may still be there.
        missing = set(err.details.get("collection_ids", []))
        if not missing:
            raise
        scope = [cid for cid in scope if cid not in missing]
        if not scope:
            return {}, None
        fetched = calendar.fetch(kind=kind, collection_ids=scope, time_zone=time_zone)
    wanted_ids = set(wanted)
    found: dict[str, Item] = {}
    for item in fetched.items:
        if item.item_id in wanted_ids:
            found.setdefault(item.item_id, item)
    return found, fetched.read_at


def when_label(item: Item) -> tuple[str, str] | None:
    """("Due" or "Starts", a readable date) for the page, or None."""
    value = item.when
    if value is None:
        return None
    label = "Due" if item.kind is Kind.TASK else "Starts"
    return label, readable_date(value)


def readable_date(value: date | datetime | str) -> str:
    """A due, a start (typed) or an envelope's ISO 8601 -> `Tue 05 May 2026, 09:00 UTC` (or the date alone)."""
    if isinstance(value, str):
        try:
            parsed: date = datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)
        except ValueError:
            return value
    else:
        parsed = value
    if not isinstance(parsed, datetime):  # an all-day date
        return parsed.strftime("%a %d %b %Y")
    zone = parsed.strftime(" %Z") if parsed.tzinfo is not None else ""
    return parsed.strftime("%a %d %b %Y, %H:%M") + zone
