"""resolver/web/clarification.py: what a clarification card says about when its item is.

The offered occurrence where there is one, else the task's due or the event's
start; nothing for a candidate no longer live. The words themselves are
resolver/readable.py's (tests/test_readable.py); the page around the cards is
in tests/web/test_views.py.
"""
from __future__ import annotations

from datetime import datetime, timezone

from resolver.clarifications import LiveCandidate
from resolver.domain.items import Item, Kind, Occurrence, make_item
from resolver.domain.times import when_from_iso
from resolver.web.clarification import card_when

OFFERED = Occurrence(start=datetime(2026, 5, 12, 9, tzinfo=timezone.utc),
                     end=datetime(2026, 5, 12, 10, tzinfo=timezone.utc), recurrence_id="20260512T090000Z")


def card(item: Item | None, **offered) -> LiveCandidate:
    return LiveCandidate(number=1, item_id="i1", item=item, suggested=False, probability=None, **offered)


def task(due: str | None) -> Item:
    return make_item(collection_path="/u/w/", uid="t", title="Pay the rent", etag='"1"', kind=Kind.TASK,
                     due=when_from_iso(due))


YOGA = make_item(collection_path="/u/w/", uid="e", title="Yoga", etag='"1"', kind=Kind.EVENT,
                 start=when_from_iso("2026-05-05T09:00:00+00:00"))


def test_card_when__a_task_by_its_due_date() -> None:
    assert card_when(card(task("2026-05-05"))) == ("Due", "Tue 05 May 2026", "2026-05-05")


def test_card_when__an_event_by_its_start_unless_an_occurrence_was_offered() -> None:
    assert card_when(card(YOGA)) == ("Starts", "Tue 05 May 2026, 09:00 UTC", "2026-05-05T09:00:00+00:00")
    assert card_when(card(YOGA, occurrence=OFFERED)) == (
        "Occurrence", "Tue 12 May 2026, 09:00 UTC", "2026-05-12T09:00:00+00:00")
    assert card_when(card(YOGA, occurrence=OFFERED, next=True))[0] == "Next occurrence"


def test_card_when__nothing_without_a_date_or_a_live_item() -> None:
    assert card_when(card(task(None))) is None
    assert card_when(card(None)) is None
