"""How one fetch reads: the options the reader is handed, built once from the settings.

Every option is spelled here and in the settings (resolver/conf.py): the
calendar (calendar.CalDAVCalendar) builds one `ReadOptions` from its
settings object and hands it to its reader with every call; the reader keeps
none of it.
"""
from __future__ import annotations

from dataclasses import dataclass

from resolver.calendars.ical import Limits

SYNC_MODES = ("auto", "off")


@dataclass(frozen=True)
class ReadOptions:
    """How one fetch reads: from the settings (calendar.CalDAVCalendar), not the reader's to keep."""

    timeout: float
    max_bytes: int
    horizon_days: int = 90
    event_time_range: bool = True
    sync: str = "auto"
    incremental: bool = True
    # Concurrent fetches share one read (flight.py); False: each reads for itself.
    shared: bool = True
    # An unchanged, settled CS:getctag may stand for the collection (ctags.py).
    ctag: bool = True
    limits: Limits = Limits()
    filter_retry_seconds: float = 3600.0
