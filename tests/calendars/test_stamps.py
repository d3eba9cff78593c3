"""A modification time vouches for a resource only when it is clearly older than the listing (stamps.py)."""
from __future__ import annotations

import pytest

from resolver.calendars.caldav.stamps import RACY, doubted, settled

LISTED = "Thu, 03 Dec 2026 21:00:10 GMT"


@pytest.mark.parametrize("stamp, expected", [
    ("Thu, 03 Dec 2026 21:00:07 GMT", "Thu, 03 Dec 2026 21:00:07 GMT"),  # three seconds before: settled
    ("Thu, 03 Dec 2026 21:00:08 GMT", "Thu, 03 Dec 2026 21:00:08 GMT"),  # two: settled
    ("Thu, 03 Dec 2026 21:00:09 GMT", RACY),   # within the margin
    ("Thu, 03 Dec 2026 21:00:10 GMT", RACY),   # the listing's own second
    ("Thu, 03 Dec 2026 21:05:00 GMT", RACY),   # after it (a server clock ahead of its front)
    ("yesterday", RACY),                       # not a date: nothing vouched
    ("Thu, 03 Dec 2026 21:00:07 GMT" + " " * 60, RACY),  # too long to be read
])
def test_stamps__settled(stamp: str, expected: str) -> None:
    assert settled(stamp, LISTED) == expected


def test_stamps__no_stamp_stays_none() -> None:
    assert settled(None, LISTED) is None


def test_stamps__without_a_date_the_answer_is_compared_with_our_clock() -> None:
    assert settled("Thu, 01 Jan 2026 00:00:00 GMT", None) == "Thu, 01 Jan 2026 00:00:00 GMT"
    assert settled("Fri, 01 Jan 2100 00:00:00 GMT", None) == RACY
    assert settled("Thu, 01 Jan 2026 00:00:00 GMT", "not a date") == "Thu, 01 Jan 2026 00:00:00 GMT"


@pytest.mark.parametrize("before, now, expected", [
    ("Thu, 03 Dec 2026 21:00:07 GMT", "Thu, 03 Dec 2026 21:00:07 GMT", False),
    ("Thu, 03 Dec 2026 21:00:07 GMT", "Thu, 03 Dec 2026 21:00:08 GMT", True),   # written since
    (RACY, RACY, True),                                                        # still too near to tell
    (RACY, "Thu, 03 Dec 2026 21:00:07 GMT", True),                             # was too near to tell
    ("Thu, 03 Dec 2026 21:00:07 GMT", RACY, True),
    (None, "Thu, 03 Dec 2026 21:00:07 GMT", True),                             # time not known before
    ("Thu, 03 Dec 2026 21:00:07 GMT", None, True),                             # no longer sent
    (None, None, False),                                                       # a server without stamps
])
def test_stamps__doubted(before: str | None, now: str | None, expected: bool) -> None:
    assert doubted(before, now) is expected
