"""One connected CalDAV account as the calendar layer needs it (a leaf: it imports nothing of the app).

resolver/models.py builds it from a CalendarAccount row; resolver/accounts.py
turns it into a calendar source. Neither module imports the other for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ConnectedAccount:
    """One CalDAV account as the calendar layer needs it. The password never shows in a repr."""

    key: str  # stable identity: "settings", or "account:<pk>"
    url: str
    username: str
    password: str = field(repr=False)
    slug: str = ""
    label: str = ""
