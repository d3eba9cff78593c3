"""One collection's read context at the scripted server, for calling a read strategy on its own.

The keeper records what the strategy asks the reader to forget; a real
reader (through its calendar) gives the sync state a strategy reads from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

from resolver import deadline
from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
from resolver.calendars.caldav.caches import SyncState
from resolver.calendars.caldav.strategies import Context
from resolver.calendars.ical import Window
from resolver.domain.items import Kind
from tests.support.scripted_dav import COLLECTION, PASSWORD, USER, ScriptedDAV


@dataclass
class RecordingKeeper:
    buried: list[tuple[str, str | None]] = field(default_factory=list)
    discarded: list[tuple[str, str | None]] = field(default_factory=list)
    agreed: int = 0

    def bury(self, path: str, href: str, etag: str | None) -> None:
        self.buried.append((href, etag))

    def discard(self, href: str, etag: str | None) -> None:
        self.discarded.append((href, etag))

    def agree(self, transport: Any, path: str, changes: Any, *, known: Mapping[str, str]) -> None:
        self.agreed += 1


def calendar(server: ScriptedDAV, **options: Any) -> CalDAVCalendar:
    return CalDAVCalendar(url=server.url, username=USER, password=PASSWORD, timeout=5.0, registry=ReaderRegistry(),
                          **options)


def context(cal: CalDAVCalendar, *, kind: Kind = Kind.TASK) -> tuple[Context, RecordingKeeper]:
    keeper = RecordingKeeper()
    options = cal.options
    now = datetime.now(timezone.utc)
    return Context(transport=cal.reader().transport(options), path=COLLECTION, kind=kind,
                   window=Window(start=now, end=now + timedelta(days=90)), options=options, skipped=[],
                   keeper=keeper), keeper


def state_after_read(cal: CalDAVCalendar, *, kind: Kind = Kind.TASK) -> SyncState:
    """The sync state the calendar's reader keeps after one read of the collection."""
    deadline.bounded(lambda: cal.fetch(kind=kind, collection_ids=None))()
    state = cal.reader().states.get((COLLECTION, kind.value))
    assert state is not None
    return state


def requests_during(server: ScriptedDAV, work: Any) -> tuple[Any, list[tuple[str, str | None]]]:
    """What `work` returned, and the (method, report) of each request it sent."""
    before = len(server.seen)
    result = deadline.bounded(work)()
    return result, [(r.method, r.report) for r in server.seen[before:]]
