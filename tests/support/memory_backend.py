"""A calendar backend for RESOLVER["CALENDAR_BACKEND"] in door tests: items set by the test, no server.

Used where the door's rendering is under test and the item's facts must be
exact (an href that is not the UID, an occurrence), never instead of the live
servers for reading behaviour.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from resolver.calendars.memory import MemoryCalendar
from resolver.domain.items import Kind, make_item

CALENDAR = MemoryCalendar()
PATH = "tests.support.memory_backend.MemoryBackend"


@contextmanager
def holding_two_tasks() -> Iterator[MemoryCalendar]:
    """CALENDAR holds two tasks, "Draft portfolio outline" and "Review portfolio slides", in /demo/work/."""
    CALENDAR.items = [
        make_item(collection_path="/demo/work/", uid=uid, title=title, etag='"e"', kind=Kind.TASK,
                  href=f"/demo/work/{uid}.ics")
        for uid, title in (("t1", "Draft portfolio outline"), ("t2", "Review portfolio slides"))
    ]
    try:
        yield CALENDAR
    finally:
        CALENDAR.items = []


class MemoryBackend:
    """Builds to the one CALENDAR above, whose items the test sets."""

    @classmethod
    def from_settings(cls, settings: Any) -> MemoryCalendar:
        return CALENDAR


def from_settings(*, settings: Any) -> MemoryCalendar:
    """A factory in the form CALENDAR_BACKEND once took (`settings=`): no longer a backend."""
    return CALENDAR




NOT_A_CALLABLE = 42
