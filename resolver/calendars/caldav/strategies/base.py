"""What every read strategy shares: the pass it fills, what it reads with, and what it may ask the reader."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Protocol

from resolver.calendars.caldav.caches import Parsed, SyncState
from resolver.calendars.caldav.members import Resource
from resolver.calendars.ical import Window
from resolver.domain.items import Kind
from resolver.domain.ports import SkippedResource

if TYPE_CHECKING:
    from resolver.calendars.caldav import sync
    from resolver.calendars.caldav.http import Transport
    from resolver.calendars.caldav.options import ReadOptions


@dataclass
class Pass:
    """One collection's incremental read while it is made (reader.CalDAVReader._read_incremental)."""

    members: dict[str, str] = field(default_factory=dict)  # href -> ETag
    token: str | None = None
    fetched: dict[str, str | None] = field(default_factory=dict)  # href -> text downloaded now
    # hrefs whose kind the server did not choose (a sync lists both kinds).
    unsorted: set[str] = field(default_factory=set)
    # hrefs whose memo entry is not believed: downloaded and compared (reader._facts).
    recheck: set[str] = field(default_factory=set)
    stamps: dict[str, str] = field(default_factory=dict)  # href -> getlastmodified (no sync)
    # href -> the memo entry the download found for a member it did not download
    # (its ETag unchanged since): the sorting reads it from here, not the memo again.
    known: dict[str, Parsed] = field(default_factory=dict)
    # Answers without a usable status or ETag: skipped, never remembered.
    odd: list[Resource] = field(default_factory=list)
    # False when the sync state may have lost a member (a listed href the
    # server did not find): not kept, the next request reads afresh.
    keep: bool = True
    # The server showed a change since the last state (a new, changed or deleted member),
    # and of which kinds: "update" (a new or changed member), "delete".
    moved: bool = False
    changes: set[str] = field(default_factory=set)
    # A sync from a remembered token: that token, and the hrefs the report deleted (the other kind's state,
    # read from the same token, can take the same changes: reader.CalDAVReader._carry). None: no such sync.
    since: str | None = None
    deleted: list[str] = field(default_factory=list)

    def changed(self, how: str) -> None:
        self.moved = True
        self.changes.add(how)


class Keeper(Protocol):
    """What a strategy asks of the reader that remembers the account (reader.CalDAVReader)."""

    def bury(self, path: str, href: str, etag: str | None) -> None:
        """A member the server no longer holds: forgotten, and marked should its href come back."""

    def discard(self, href: str, etag: str | None) -> None:
        """One (href, ETag)'s memo entries, gone."""

    def agree(self, transport: Transport, path: str, changes: sync.Changes, *, known: Mapping[str, str]) -> None:
        """A sync report's hrefs in the collection's own form (hrefs.py), renamed in place."""


@dataclass(frozen=True)
class Context:
    """One collection's read: where, what kind, with which options, and who keeps what is learnt."""

    transport: Transport
    path: str
    kind: Kind
    window: Window
    options: ReadOptions
    skipped: list[SkippedResource]
    keeper: Keeper


class Strategy(Protocol):
    """One way of reading a collection from a remembered state; None: the server gave no usable answer."""

    name: str

    def read(self, ctx: Context, state: SyncState) -> Pass | None: ...
