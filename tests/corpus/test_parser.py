"""Every corpus file, straight into the resolver's reader, with no server in between.

Radicale refuses or silently drops about a third of the corpus, so the
server-backed tests (test_corpus.py) never show those bytes to the resolver.
A lenient server might serve them as they are; here each one reaches
`ical.live_items` directly: it may skip a resource (UnparseableResource,
with a reason), never crash.

Then the cheap pre-check that spares the parse of past events
(`ical.certainly_ended`) is checked for soundness against the full parse on
every real file: when it says "ended", the full parse finds nothing live.
"""
from __future__ import annotations

import re
from collections import Counter
from datetime import date, datetime, time, timedelta, timezone

import pytest

from resolver.calendars import ical
from resolver.calendars.ical import UnparseableResource, Window, certainly_ended, live_items, window_from
from resolver.domain.items import Kind
from tests.corpus.loader import corpus_files, corpus_root, split

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
_DATE = re.compile(r"(?m)^(?:DTSTART|DTEND)[^:\r\n]*:(\d{8})")


@pytest.fixture(scope="module")
def texts() -> list[tuple[str, str]]:
    """(file and piece, text) for every piece of every corpus file, decoded as a server might."""
    root = corpus_root()
    if root is None:
        pytest.skip("no iCalendar corpus next to the repository (set LIFEPROJECT_ICAL_CORPUS)")
    found = []
    for path in corpus_files(root):
        for piece in split(path.read_bytes()):
            try:
                text = piece.data.decode("utf-8-sig")
            except UnicodeDecodeError:
                text = piece.data.decode("latin-1")  # what a lenient server would make of it
            found.append((f"{path.relative_to(root).as_posix()}#{piece.name}", text))
    return found


def _read(text: str, kind: Kind, window: Window) -> list | str:
    try:
        return live_items(text, kind=kind, collection_path="/corpus/c/", etag='"e"', window=window)
    except UnparseableResource as err:
        return f"skipped: {err.reason}"


def test_parser__no_corpus_file_crashes_the_reader(texts: list[tuple[str, str]]) -> None:
    """Only UnparseableResource may come out; anything else is a crash."""
    outcomes: Counter[str] = Counter()
    for window in (window_from(NOW, 90), window_from(datetime(1900, 1, 1, tzinfo=timezone.utc), 73_000)):
        for _name, text in texts:
            for kind in Kind:
                result = _read(text, kind, window)
                outcomes[result if isinstance(result, str) else "read"] += 1
    assert outcomes["read"] > 0
    print("\nreader on raw corpus pieces (2 windows x 2 kinds each): "
          + ", ".join(f"{key} {count}" for key, count in outcomes.most_common()))
    # Every skip carries one of the reader's reasons.
    reasons = {key for key in outcomes if key != "read"}
    assert reasons <= {"skipped: not iCalendar", "skipped: bad property value", "skipped: event without dtstart",
                       "skipped: bad due", "skipped: bad dtstart", "skipped: bad dtend"}


def _instants(text: str) -> list[datetime]:
    """Moments around the dates the file itself names, where a wrong answer would show."""
    moments = {NOW}
    for value in _DATE.findall(text):
        try:
            day = date(int(value[:4]), int(value[4:6]), int(value[6:]))
        except ValueError:
            continue
        for offset in (-1, 0, 1, 2, 7, 8, 30):
            moments.add(datetime.combine(day + timedelta(days=offset), time.min, tzinfo=timezone.utc))
    return sorted(moments)


def test_parser__certainly_ended_is_sound_on_real_files(texts: list[tuple[str, str]], monkeypatch) -> None:
    """Whenever the pre-check says every event ended, the full parse finds no live event."""
    said_ended = 0
    for name, text in texts:
        for moment in _instants(text):
            if not certainly_ended(text, moment):
                continue
            said_ended += 1
            with monkeypatch.context() as patched:
                patched.setattr(ical, "certainly_ended", lambda text, before: False)
                result = _read(text, Kind.EVENT, window_from(moment, 90))
            assert result == [] or isinstance(result, str), (name, moment, result)
    assert said_ended > 100


def _event(*lines: str) -> str:
    body = "".join(f"{line}\r\n" for line in lines)
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:u\r\n{body}END:VEVENT\r\nEND:VCALENDAR\r\n"


@pytest.mark.parametrize("text, ended", [
    (_event("DTSTART:20250101T100000Z", "DTEND:20250101T110000Z"), True),
    (_event("DTSTART;VALUE=DATE:20250101"), True),
    (_event("DTSTART;TZID=Pacific/Kiritimati:20250101T100000"), True),
    (_event("dtstart:20250101T100000Z"), True),  # names are case-insensitive
    (_event("DTSTART:2025", " 0101T100000Z"), True),  # a folded value is unfolded first
    (_event("DTSTART:20260525T100000Z"), True),  # a week before: outside the slack
    (_event("DTSTART:20260528T100000Z"), False),  # within the week of slack: the parse decides
    (_event("DTSTART:20260701T100000Z"), False),  # future
    (_event("DTSTART:20250101T100000Z", "DTEND:20270101T100000Z"), False),  # ends in the future
    (_event("DTSTART:20250101T100000Z", "RRULE:FREQ=WEEKLY"), False),  # a series
    (_event("DTSTART:20250101T100000Z", "RDATE:20260701T100000Z"), False),
    (_event("DTSTART:20250101T100000Z", "RECURRENCE-ID:20250101T100000Z"), False),
    (_event("DTSTART:20250101T100000Z", "DURATION:P400D"), False),  # a DURATION can reach anywhere
    (_event("SUMMARY:no start"), False),
    (_event("DTSTART:20250101T1000000Z"), False),  # seven digits: unreadable, so unknown
    (_event("DTSTART:20251340T100000Z"), False),  # no such date
    (_event("DTSTART:20250101T100000Z", "BEGIN:VALARM", "TRIGGER;RELATED=END:PT0S", "DURATION:PT5M",
            "REPEAT:2", "END:VALARM"), True),  # an alarm's DURATION is not the event's
    ("BEGIN:VCALENDAR\r\nBEGIN:VTIMEZONE\r\nTZID:X\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\n"
     "RRULE:FREQ=YEARLY\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
     "BEGIN:VEVENT\r\nUID:u\r\nDTSTART;TZID=X:20250101T100000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", True),
    ("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTART:20250101T100000Z\r\nEND:VCALENDAR\r\n", False),
    ("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:u\r\nDUE:20250101T100000Z\r\nEND:VTODO\r\nEND:VCALENDAR\r\n", False),
])
def test_certainly_ended__cases(text: str, ended: bool) -> None:
    assert certainly_ended(text, NOW) is ended


def _todo(*lines: str) -> str:
    body = "".join(f"{line}\r\n" for line in lines)
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VTODO\r\nUID:t\r\n{body}END:VTODO\r\nEND:VCALENDAR\r\n"


def test_parser__an_unreadable_value_we_never_use_does_not_hide_a_task() -> None:
    """DAVx5's `PRIORITY:` (empty) made icalendar reject the whole VTODO; the task is open."""
    window = window_from(NOW, 90)
    found = live_items(_todo("SUMMARY:Alex Geschenkeliste", "PRIORITY:", "PERCENT-COMPLETE:x"),
                       kind=Kind.TASK, collection_path="/c/", etag='"e"', window=window)
    assert [(item.title, item.status) for item in found] == [("Alex Geschenkeliste", None)]
    # A broken value the resolver does read still skips the resource.
    with pytest.raises(UnparseableResource):
        live_items(_todo("SUMMARY:Broken due", "PRIORITY:", "DUE:notadate"),
                   kind=Kind.TASK, collection_path="/c/", etag='"e"', window=window)


def test_parser__the_davx5_empty_priority_file_is_read() -> None:
    root = corpus_root()
    if root is None:
        pytest.skip("no iCalendar corpus next to the repository (set LIFEPROJECT_ICAL_CORPUS)")
    text = (root / "ical4android" / "tasks" / "empty-priority.ics").read_text(encoding="utf-8")
    found = live_items(text, kind=Kind.TASK, collection_path="/c/", etag='"e"', window=window_from(NOW, 90))
    assert [(item.title, item.status) for item in found] == [("Alex Geschenkeliste", "NEEDS-ACTION")]
