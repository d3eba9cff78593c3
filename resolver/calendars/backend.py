"""What a calendar backend is: one protocol with everything the app uses of one, checked at start-up.

`RESOLVER["CALENDAR_BACKEND"]` names a class; `from_settings(settings)` builds
the calendar source a request reads (the settings' own account, or with
per-user accounts each person's account: its URL and credentials in place of
the settings'). What the app then calls on it is `CalendarBackend` below:
`collections()` and `fetch(...)` always (resolver.domain.ports.CalendarSource),
and `says_calendar_access()` where it has one. The system check
resolver.E012 (resolver/checks.py) names what a configured class lacks.
docs/calendars.md, "Adding a calendar backend", says how to write one.
"""
from __future__ import annotations

import inspect
import typing
from datetime import datetime, tzinfo
from typing import Any, Protocol, Sequence

from resolver.domain.items import Collection, Kind
from resolver.domain.ports import CalendarSource, FetchResult

# What every backend must have: the pipeline's port.
REQUIRED = ("collections", "fetch")
# What the app uses where a backend has it, and what it does without.
OPTIONAL = {
    "says_calendar_access": "connecting a per-user account that lists no calendar: without it, "
                            "the account is refused as not CalDAV",
    "fetch_since": "reading the other kind in the request that read one (other_kind_matched): without it, "
                   "`fetch` reads it again",
}


class CalendarBackend(Protocol):
    """Everything the app uses of a calendar backend (module docstring)."""

    @classmethod
    def from_settings(cls, settings: Any) -> CalendarSource:
        """The source for these settings (any object with the RESOLVER settings as attributes)."""
        ...

    def collections(self) -> Sequence[Collection]: ...

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo) -> FetchResult:
        """Live items of `kind` (resolver.domain.ports.CalendarSource.fetch)."""
        ...

    def says_calendar_access(self) -> bool:
        """Optional: whether the account's URL says it serves calendars (OPTIONS, RFC 4791 5.1)."""
        ...

    def fetch_since(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo,
                    since: datetime) -> FetchResult:
        """Optional: `fetch`, where what a read made at or after `since` showed is fresh enough (the same
        request's read of the other kind: resolver.domain.ports.fetch_again)."""
        ...


def built_class(backend: type) -> type:
    """The class `from_settings` builds: its return annotation where that names a class, else `backend`."""
    try:
        hints = typing.get_type_hints(backend.from_settings)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve says nothing
        return backend
    built = hints.get("return")
    return built if inspect.isclass(built) and built is not CalendarSource else backend


def lacks(backend: type) -> list[str]:
    """The methods the app needs that the class `backend` builds does not have."""
    built = built_class(backend)
    return [name for name in REQUIRED if not callable(getattr(built, name, None))]
