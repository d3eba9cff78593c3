"""What the clarification page does, apart from HTTP: issue links, read candidates live, select.

Nothing here writes: selecting an item only re-reads it from the server.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from django.urls import NoReverseMatch, reverse

from resolver.calendars.base import CalendarSource
from resolver.conf import resolver_settings
from resolver.domain.errors import CollectionNotFound
from resolver.domain.items import Item, Kind
from resolver.domain.pipeline import Outcome, Status
from resolver.services import calendar_from_settings
from resolver.web import tokens
from resolver.web.tokens import ClarificationClaims

logger = logging.getLogger("resolver.requests")


class NotACandidate(Exception):
    """The chosen item ID is not one the token offered."""


class CandidateGone(Exception):
    """The chosen item was offered but is no longer live on the server."""


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


def clarification_path(token: str) -> str:
    return reverse("resolver_web:clarify", kwargs={"token": token})


def clarification_token(outcome: Outcome, *, user_id: object) -> str:
    return tokens.issue(tokens.claims_for(outcome, user_id=user_id))


def clarification_url(outcome: Outcome, *, user_id: object, base_url: str) -> str | None:
    """The absolute page URL for a clarification outcome, bound to `user_id`.

    `base_url` is the scheme and host (and any path prefix) the page is served
    under. None for a resolved outcome, and when the project did not mount the
    page's URLs: the app is reusable and the page is optional.
    """
    if outcome.status is not Status.NEEDS_CLARIFICATION:
        return None
    try:
        path = clarification_path(clarification_token(outcome, user_id=user_id))
    except NoReverseMatch:
        return None
    return base_url.rstrip("/") + path


def read_clarification(token: str, *, user_id: object) -> ClarificationClaims:
    """Raises tokens.TokenInvalid or tokens.TokenExpired."""
    return tokens.read(token, user_id=user_id, max_age=int(resolver_settings.CLARIFICATION_MAX_AGE_SECONDS))


def live_candidates(
    claims: ClarificationClaims, *, calendar: CalendarSource | None = None
) -> list[LiveCandidate]:
    """The token's candidates in its order, each with its item as the server has it now.

    Raises CalendarUnavailable when the server cannot be read.
    """
    by_id = _live_items(claims, calendar or calendar_from_settings())
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


def select(claims: ClarificationClaims, *, item_id: str, calendar: CalendarSource | None = None) -> Item:
    """The chosen candidate, re-read from the server now, so its ETag is current."""
    if item_id not in claims.candidate_ids:
        raise NotACandidate()
    item = _live_items(claims, calendar or calendar_from_settings()).get(item_id)
    if item is None:
        raise CandidateGone()
    # The same kind of line as services.log_outcome: IDs only, no text, no titles.
    logger.info("selection", extra={"request_id": claims.request_id, "door": "web",
                                    "status": Status.OK.value, "method": "user_selected"})
    return item


def _live_items(claims: ClarificationClaims, calendar: CalendarSource) -> dict[str, Item]:
    if not claims.candidate_ids:
        return {}
    collection_ids: Sequence[str] = claims.collection_ids
    try:
        fetched = calendar.fetch(kind=claims.kind, collection_ids=collection_ids or None)
    except CollectionNotFound as err:
        # A collection deleted since the token was issued: its items are gone,
        # the others may still be there.
        missing = set(err.details.get("collection_ids", []))
        if not missing:
            raise
        collection_ids = [cid for cid in collection_ids if cid not in missing]
        if not collection_ids:
            return {}
        fetched = calendar.fetch(kind=claims.kind, collection_ids=collection_ids)
    wanted = set(claims.candidate_ids)
    found: dict[str, Item] = {}
    for item in fetched.items:
        if item.item_id in wanted:
            found.setdefault(item.item_id, item)
    return found


def when_label(item: Item) -> tuple[str, str] | None:
    """("Due" or "Starts", a readable date) for the page, or None."""
    value = item.when
    if not value:
        return None
    label = "Due" if item.kind is Kind.TASK else "Starts"
    return label, readable_date(value)


def readable_date(value: str) -> str:
    """ISO 8601 from the calendar layer -> `Tue 05 May 2026, 09:00 UTC` (or the date alone)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    if "T" not in value:  # an all-day date
        return parsed.strftime("%a %d %b %Y")
    zone = parsed.strftime(" %Z") if parsed.tzinfo is not None else ""
    return parsed.strftime("%a %d %b %Y, %H:%M") + zone
