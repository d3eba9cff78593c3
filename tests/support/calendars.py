"""The test calendars: every core scenario's items, seeded through the caldav package."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from lifeproject.seeding import Spec

NOW = datetime.now(timezone.utc).replace(microsecond=0)
DAY = timedelta(days=1)

BULK_COUNT = 25  # more than 19 items share the word "bulk"


def listed_at_most() -> int:
    """How many candidates a clarification over the bulk collection lists: the shipped relevance model's
    count with the encoder (the default), within the 19 the pipeline lists at most."""
    from resolver.domain.relevance import RelevanceModel

    return min(19, RelevanceModel.load().variant(True).offer_at_most or 19)


def scenario_collections() -> dict[str, tuple[str, list[Spec]]]:
    work = [
        Spec("t-portfolio", "Draft portfolio outline", when=NOW + 3 * DAY),
        Spec("t-slides", "Review portfolio slides", when=NOW + 5 * DAY),
        Spec("t-report", "Weekly report", status="NEEDS-ACTION"),
        Spec("t-strasse", "Straße reparieren", status="IN-PROCESS"),
        Spec("t-paid", "Pay invoice", status="COMPLETED", completed=NOW - DAY),
        Spec("t-cancelled", "Cancelled errand", status="CANCELLED"),
        Spec("t-completed-date", "File taxes", completed=NOW - 2 * DAY),
        Spec("t-nostatus", "Call the plumber"),
        Spec("t-offsite-work", "Team offsite planning"),
        Spec("t-untitled", None),
        Spec("t-spaces", "  Padded   title  "),
        Spec("e-weekly", "Weekly sync", kind="event", when=NOW - 365 * DAY, rrule={"freq": "weekly"}),
        Spec("e-past", "Past retro", kind="event", when=NOW - 2 * DAY, end=NOW - DAY),
        Spec("e-cancelled", "Cancelled launch", kind="event", status="CANCELLED", when=NOW + DAY),
        Spec("e-design", "Design review", kind="event", when=NOW + 2 * DAY),
        Spec("e-ongoing", "Ongoing conference", kind="event", when=NOW - DAY, end=NOW + DAY),
        Spec("e-far", "Far future gala", kind="event", when=NOW + 400 * DAY),
    ]
    personal = [
        Spec("t-offsite-personal", "Team offsite planning"),
        Spec("t-groceries", "Buy groceries"),
        Spec("e-dentist", "Dentist appointment", kind="event", when=NOW + 6 * DAY),
    ]
    bulk = [Spec(f"t-bulk-{n:02d}", f"Bulk chore {n:02d}") for n in range(1, BULK_COUNT + 1)]
    return {
        "work": ("Work", work),
        "personal": ("Personal", personal),
        "bulk": ("Bulk", bulk),
    }


def weekly_sync_start(weeks_ahead: int, *, now: datetime | None = None) -> datetime:
    """The start of the scenario's "Weekly sync" `weeks_ahead` weeks after its next live occurrence."""
    first = NOW - 365 * DAY
    now = now or datetime.now(timezone.utc)
    # Live while it has not ended (an hour long): the next is the first ending after now.
    weeks = max(0, -(-((now - timedelta(hours=1)) - first) // (7 * DAY)))
    while first + weeks * 7 * DAY + timedelta(hours=1) <= now:
        weeks += 1
    return first + (weeks + weeks_ahead) * 7 * DAY
