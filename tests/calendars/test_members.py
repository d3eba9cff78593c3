"""resolver/calendars/caldav/members.py: a member is read only on the account's own origin, its href kept.

The same rule at a misbehaving server, through the reader, is in
tests/calendars/test_hostile_server.py (a member elsewhere is skipped).
"""
from __future__ import annotations

from resolver.calendars.caldav.account import Origin
from resolver.calendars.caldav.members import FOREIGN_ORIGIN, member_path
from resolver.domain.ports import SkippedResource

ORIGIN = Origin.of("http://127.0.0.1:5232/")
COLLECTION = "/alice/work/"


def test_member_path__on_the_origin_the_href_is_kept_byte_for_byte() -> None:
    skipped: list[SkippedResource] = []
    kept = "/alice/work/a%2Eb.ics"
    assert member_path(ORIGIN, kept, collection=COLLECTION, skipped=skipped) == kept
    assert member_path(ORIGIN, "http://127.0.0.1:5232/alice/work/c.ics", collection=COLLECTION,
                       skipped=skipped) == "/alice/work/c.ics"
    assert member_path(ORIGIN, "d.ics", collection=COLLECTION, skipped=skipped) == "/alice/work/d.ics"
    assert skipped == []


def test_member_path__only_forbidden_characters_are_escaped() -> None:
    skipped: list[SkippedResource] = []
    escaped = member_path(ORIGIN, "/alice/work/a b%.ics", collection=COLLECTION, skipped=skipped)
    assert escaped == "/alice/work/a%20b%25.ics"
    assert skipped == []


def test_member_path__another_origin_is_skipped_with_its_reason() -> None:
    skipped: list[SkippedResource] = []
    assert member_path(ORIGIN, "http://127.0.0.2:5232/alice/work/x.ics", collection=COLLECTION, skipped=skipped) is None
    assert member_path(ORIGIN, "//evil.example/x.ics", collection=COLLECTION, skipped=skipped) is None
    assert skipped == [SkippedResource("http://127.0.0.2:5232/alice/work/x.ics", FOREIGN_ORIGIN),
                       SkippedResource("//evil.example/x.ics", FOREIGN_ORIGIN)]
    assert FOREIGN_ORIGIN == "foreign_origin"
