"""The page's labels: dates people read, and what a card says about when an item is.

Presentation only: the candidates and their offered occurrences are
resolver.clarifications' (through resolver.services).
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any

from resolver.clarifications import LiveCandidate
from resolver.domain.items import Item, Kind, Occurrence


def when_label(item: Item) -> tuple[str, str] | None:
    """("Due" or "Starts", a readable date) for the page, or None."""
    value = item.when
    if value is None:
        return None
    label = "Due" if item.kind is Kind.TASK else "Starts"
    return label, readable_date(value)


def occurrence_label(occurrence: Occurrence, *, next: bool) -> tuple[str, str]:
    """For an event's offered occurrence: "Next occurrence" only when it is the next one."""
    if occurrence.recurrence_id is None:
        return "Starts", readable_date(occurrence.start)
    return ("Next occurrence" if next else "Occurrence"), readable_date(occurrence.start)


def card_when(candidate: LiveCandidate) -> tuple[str, str, str] | None:
    """(label, readable, machine-readable) of what a card shows: the offered occurrence, else due/start."""
    if candidate.item is None:
        return None
    if candidate.occurrence is not None:
        label, text = occurrence_label(candidate.occurrence, next=candidate.next)
        return label, text, candidate.occurrence.start.isoformat()
    found = when_label(candidate.item)
    if found is None:
        return None
    value = candidate.item.when
    return found[0], found[1], value.isoformat() if isinstance(value, (date, datetime)) else str(value)


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
