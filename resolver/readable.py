"""An answer as people read it: dates, and when a candidate is, for every door.

The page (resolver/web/), the MCP question (resolver/mcp/elicitation.py) and
the command (resolver/management/commands/resolve.py) each show a candidate
with the one date that tells it apart: the occurrence this clarification
offers, else its due date (a task) or its start (an event). Which date, and
the words for it, are decided here once; a door only lays them out. The
facts come typed (an Item and its Occurrence, on the page) or as an
envelope's candidate (the MCP door, the command): both give the same answer.

Plain Python: no door, and nothing of Django, is imported here.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from enum import Enum
from typing import Any

from resolver.domain.items import Item, Kind, Occurrence


class Moment(Enum):
    """Which date a candidate shows, with its words: a label (the page's) and inline (a one-line label's)."""

    DUE = ("Due", "due")
    STARTS = ("Starts", "starts")
    # An event's offered occurrence: "next" only when it is the next live one.
    NEXT = ("Next occurrence", "next")
    # A later occurrence, the one the reference's time names.
    OCCURRENCE = ("Occurrence", "on")

    def __init__(self, label: str, inline: str) -> None:
        self.label = label
        self.inline = inline


@dataclass(frozen=True)
class When:
    """The date a candidate shows: what it is, and its value (typed, or an envelope's ISO 8601 string)."""

    moment: Moment
    value: date | datetime | str

    @property
    def label(self) -> str:
        return self.moment.label

    @property
    def readable(self) -> str:
        return readable_date(self.value)

    @property
    def iso(self) -> str:
        """Machine-readable, for a page's `<time datetime>` and the command's line."""
        return self.value.isoformat() if isinstance(self.value, (date, datetime)) else str(self.value)

    @property
    def inline(self) -> str:
        """`due Tue 05 May 2026`: for a label on one line."""
        return f"{self.moment.inline} {self.readable}"


def when(*, occurrence_start: Any = None, recurring: bool = False, next: bool = False, due: Any = None,
         start: Any = None) -> When | None:
    """The date that tells a candidate apart: its offered occurrence, else its due, else its start; None if none.

    An occurrence of a series is "next" only when it is the next live one
    (`next`); a single event's occurrence is its start.
    """
    if occurrence_start:
        if not recurring:
            return When(Moment.STARTS, occurrence_start)
        return When(Moment.NEXT if next else Moment.OCCURRENCE, occurrence_start)
    if due:
        return When(Moment.DUE, due)
    if start:
        return When(Moment.STARTS, start)
    return None


def item_when(item: Item, occurrence: Occurrence | None = None, *, next: bool = False) -> When | None:
    """`when` of a typed item and the occurrence offered for it (the page's)."""
    return when(occurrence_start=occurrence.start if occurrence is not None else None,
                recurring=occurrence is not None and occurrence.recurrence_id is not None, next=next,
                due=item.due if item.kind is Kind.TASK else None,
                start=item.start if item.kind is Kind.EVENT else None)


def candidate_when(candidate: dict[str, Any], *, next: bool = False) -> When | None:
    """`when` of an envelope's candidate (or answer): the MCP door's and the command's."""
    occurrence = candidate.get("occurrence")
    offered = occurrence if isinstance(occurrence, dict) else {}
    return when(occurrence_start=offered.get("start"), recurring=offered.get("recurrence_id") is not None,
                next=next, due=candidate.get("due"), start=candidate.get("start"))


def candidate_label(candidate: dict[str, Any], *, next: bool = False) -> str:
    """`Title (collection, due Tue 05 May 2026)`: what tells two same-titled candidates apart, on one line.

    The judge's suggestion is marked.
    """
    title = (candidate.get("title") or "").strip() or "(untitled)"
    parts = [candidate.get("collection_id") or "?"]
    found = candidate_when(candidate, next=next)
    if found is not None:
        parts.append(found.inline)
    if candidate.get("suggested") is True:
        parts.append("suggested")
    return f"{title} ({', '.join(parts)})"


def readable_date(value: date | datetime | str | Any) -> str:
    """A due, a start (typed) or an envelope's ISO 8601 -> `Tue 05 May 2026, 09:00 UTC` (or the date alone).

    Anything that is not a date is shown as it came.
    """
    if isinstance(value, str):
        try:
            parsed: date = datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)
        except ValueError:
            return value
    elif isinstance(value, date):
        parsed = value
    else:
        return str(value)
    if not isinstance(parsed, datetime):  # an all-day date
        return parsed.strftime("%a %d %b %Y")
    zone = parsed.strftime(" %Z") if parsed.tzinfo is not None else ""
    return parsed.strftime("%a %d %b %Y, %H:%M") + zone
