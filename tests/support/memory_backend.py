"""A calendar backend for RESOLVER["CALENDAR_BACKEND"] in door tests: items set by the test, no server.

Used where the door's rendering is under test and the item's facts must be
exact (an href that is not the UID, an occurrence), never instead of the live
servers for reading behaviour.
"""
from __future__ import annotations

from typing import Any

from resolver.calendars.memory import MemoryCalendar

CALENDAR = MemoryCalendar()
PATH = "tests.support.memory_backend.MemoryBackend"


class MemoryBackend:
    """Builds to the one CALENDAR above, whose items the test sets."""

    @classmethod
    def from_settings(cls, settings: Any) -> MemoryCalendar:
        return CALENDAR


def from_settings(*, settings: Any) -> MemoryCalendar:
    """A factory in the form CALENDAR_BACKEND once took (`settings=`): no longer a backend."""
    return CALENDAR




NOT_A_CALLABLE = 42
