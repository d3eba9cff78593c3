"""CS:getctag as a witness that nothing changed: what a reader learns of its server's ctag, and the rule.

Before a sync, a collection's CS:getctag is asked: unchanged and settled (2 s
after it first showed, by the answers' Date), on a server whose ctag has been
seen moving with a PUT and a DELETE and never stayed while a change was read,
it answers from the memo with no sync. Until it is such a witness it is only
paid for (on Radicale it costs about what the sync report does), so it is
asked at most every `ask_seconds` per collection and kind.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from resolver.calendars.caldav import stamps, sync
from resolver.calendars.caldav.caches import SyncState
from resolver.calendars.caldav.http import Transport
from resolver.calendars.caldav.multistatus import GETCTAG, answered, propfind_body
from resolver.calendars.caldav.options import ReadOptions
from resolver.calendars.caldav.strategies import Pass
from resolver.domain.errors import CalendarUnavailable

logger = logging.getLogger("resolver.calendars")

# A ctag is a short tag (a number, a hash, a URI); longer text is not one.
MAX_CTAG_CHARS = 1024
# Seconds between two asks of a ctag that is not yet a witness (Ctags.asks).
CTAG_ASK_SECONDS = 10.0
# The kinds of change a server's ctag must have been seen moving with before it is a witness.
CTAG_EVIDENCE = frozenset({"update", "delete"})


class Ctags:
    """One reader's knowledge of its server's ctags (module docstring)."""

    def __init__(self, where: str) -> None:
        self.where = where  # the server, for the log
        # Whether an unchanged CS:getctag stands for an unchanged collection on
        # this server: until a change is read under a ctag that did not move.
        self.trusted = True
        # False once this server answered no getctag: not asked again.
        self.given = True
        # Until the ctag is a witness, it is asked at most this often per collection and kind.
        self.ask_seconds = CTAG_ASK_SECONDS
        # The kinds of change ("update", "delete") read under a ctag that moved:
        # until both, nothing says this server's ctag moves with every change
        # (SOGo 5.8's did not move on PUTs in docs/servers.md's probe; one that never moves is never a witness).
        self.moved: set[str] = set()

    def forget(self) -> None:
        self.trusted, self.given, self.moved = True, True, set()

    def unchanged(self, transport: Transport, path: str, state: SyncState | None,
                  options: ReadOptions) -> tuple[Pass | None, str | None, str | None]:
        """The remembered members when the ctag is an unchanged witness; and the ctag and Date asked, if any."""
        if state is None or not self.asks(state, options):
            return None, None, None
        ctag, served = self.ask(transport, path)
        if ctag is not None and ctag == state.ctag and self.witness(state):
            # Unchanged since these members were read, and not racy: the memo answers.
            return Pass(members=dict(state.members), token=state.token, stamps=dict(state.stamps)), ctag, served
        return None, ctag, served

    def after(self, transport: Transport, path: str, state: SyncState | None, ctag: str | None,
              read: Pass) -> str | None:
        """What a read that found changes says of the ctag asked before it; the ctag to keep, if any."""
        if ctag is not None and read.moved and state is not None and state.ctag is not None:
            if ctag == state.ctag:
                self.contradicted(transport, path, ctag)
                return None  # this state is newer than the ctag: not stored with it
            if len(read.changes) == 1:
                # Moved with one kind of change only: evidence for that kind.
                self.moved |= read.changes
        return ctag

    def ask(self, transport: Transport, path: str) -> tuple[str | None, str | None]:
        """The collection's CS:getctag and the answer's Date (Depth 0 PROPFIND), or (None, None).

        A server that answers none (or not a multistatus) is not asked again.
        A failure that ends the request (a timeout) ends it; any other is only
        the ctag missing: the sync decides.
        """
        try:
            answer = transport.propfind(path, propfind_body(GETCTAG), depth=0)
        except CalendarUnavailable as err:
            if err.details.get("reason") in sync.FATAL:
                raise
            return None, None
        found = answered(answer, required=False)
        for response in (found.responses if found is not None else ()):
            ctag = (response.text(GETCTAG) or "").strip()
            if ctag and len(ctag) <= MAX_CTAG_CHARS:
                return ctag, found.served  # type: ignore[union-attr]
        if self.given:
            logger.info("caldav %s: no CS:getctag: read by sync or listing only", path)
        self.given = False
        return None, None

    def witness(self, state: SyncState) -> bool:
        """Whether an unchanged ctag stands for this state's members (module docstring)."""
        return state.ctag is not None and state.ctag_settled and self.trusted and self.moved >= CTAG_EVIDENCE

    def asks(self, state: SyncState, options: ReadOptions) -> bool:
        """Ask the ctag before the sync? Always where it is a witness; else at most every ask_seconds."""
        if not (options.ctag and self.trusted and self.given) or state.moved:
            return False
        if self.witness(state) or state.ctag_asked is None:
            return True
        return time.monotonic() - state.ctag_asked >= self.ask_seconds

    def fields(self, state: SyncState | None, ctag: str | None, served: str | None, read: Pass) -> dict[str, Any]:
        """What the new state remembers of the ctag (caches.SyncState).

        Asked now: that value, since when it shows, and whether these members
        were read 2 s after. Not asked: what the last state had, while nothing
        changed since (the members it stands for are the same); else nothing.
        """
        if ctag is None or served is None:
            if state is None or read.moved or state.ctag is None:
                return {"ctag_asked": state.ctag_asked if state is not None else None}
            return {"ctag": state.ctag, "ctag_since": state.ctag_since, "ctag_settled": state.ctag_settled,
                    "ctag_asked": state.ctag_asked}
        since = state.ctag_since if state is not None and state.ctag == ctag and state.ctag_since else served
        return {"ctag": ctag, "ctag_since": since, "ctag_settled": stamps.apart(since, served),
                "ctag_asked": time.monotonic()}

    def contradicted(self, transport: Transport, path: str, ctag: str) -> None:
        """A change was read under an unchanged ctag: asked once more, and if still unmoved, ctags are not trusted.

        Asked again because the change may have come between the ctag and the
        sync; a ctag still unmoved after the sync listed it does not move with
        every change on this server.
        """
        again, _ = self.ask(transport, path)
        if again is not None and again == ctag:
            self.trusted = False
            logger.warning("caldav %s: a change under an unchanged CS:getctag (%s): ctags on %s are not trusted "
                           "from now on", path, ctag, self.where)
