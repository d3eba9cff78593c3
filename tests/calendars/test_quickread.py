"""The quick parse reads what icalendar reads, and leaves icalendar what it cannot be sure of."""
from __future__ import annotations

import icalendar
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolver.calendars import ical, quickread
from tests.corpus.loader import corpus_files, corpus_root


def outcome(text: str, *, quick: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    """What read_resource gives, with the quick parse or without it (repr: zones must match too)."""
    with monkeypatch.context() as patch:
        if not quick:
            patch.setattr(quickread, "parse", lambda text: None)
        try:
            return repr(ical.read_resource(text))
        except ical.UnparseableResource as err:
            return f"unparseable: {err.reason}"


def same_reading(text: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """True when the quick parse took the text; either way both reads must agree."""
    assert outcome(text, quick=True, monkeypatch=monkeypatch) == outcome(text, quick=False,
                                                                        monkeypatch=monkeypatch)
    return quickread.parse(text) is not None


def calendar(*lines: str, item: str = "VTODO") -> str:
    body = [f"BEGIN:{item}", "UID:u-1", "DTSTAMP:20260101T000000Z", *lines, f"END:{item}"]
    return "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", *body, "END:VCALENDAR", ""])


ZONE = "\r\n".join([
    "BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "BEGIN:STANDARD", "DTSTART:19701025T030000",
    "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "TZNAME:CET",
    "END:STANDARD", "END:VTIMEZONE",
])
TASK = ("SUMMARY:Renew passport", "STATUS:NEEDS-ACTION", "DUE:20270105T090000Z")
EVENT = ("SUMMARY:Yoga", "DTSTART:20270105T090000Z", "DTEND:20270105T100000Z")


@pytest.mark.parametrize("lines, item", [
    (TASK, "VTODO"),
    (EVENT, "VEVENT"),
    (("SUMMARY:Call mom\\, dad\\; and \\\\ the \\Nneighbours",), "VTODO"),
    (("SUMMARY;LANGUAGE=de:Führerschein verlängern", "DUE;VALUE=DATE:20270105"), "VTODO"),
    (("SUMMARY:Floating", "DUE:20270105T090000"), "VTODO"),
    (("SUMMARY:Zoned", "DUE;TZID=Europe/Berlin:20270105T090000"), "VTODO"),
    (("SUMMARY:Done", "STATUS:COMPLETED", "COMPLETED:20260105T090000Z"), "VTODO"),
    (("SUMMARY:One", "SUMMARY:Two", "DESCRIPTION:a\\nlong\\, text", "X-ANYTHING;X-P=1:?"), "VTODO"),
    (("SUMMARY:Weekly", "DTSTART;TZID=America/New_York:20270105T090000", "DURATION:PT1H",
      "RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=10", "EXDATE:20270107T140000Z,20270112T140000Z",
      "RDATE;VALUE=DATE:20270201"), "VEVENT"),
    (("SUMMARY:All day", "DTSTART;VALUE=DATE:20270105"), "VEVENT"),
    (("SUMMARY:Reminded", "DTSTART:20270105T090000Z", "BEGIN:VALARM", "TRIGGER:-PT15M",
      "ACTION:DISPLAY", "DESCRIPTION:Reminder", "END:VALARM"), "VEVENT"),
    (("SUMMARY:Long title that the client folded over more than one line of the resource",), "VTODO"),
    (("SUMMARY:",), "VTODO"),
    (("SUMMARY:A bad priority", "PRIORITY:"), "VTODO"),
    (("SUMMARY:Stray zone line", "TZOFFSETFROM:+0100"), "VTODO"),
])
def test_quick_parse__reads_plain_resources_as_icalendar_does(lines, item, monkeypatch):
    assert same_reading(calendar(*lines, item=item), monkeypatch)


@pytest.mark.parametrize("before", [True, False])
def test_quick_parse__a_vtimezone_of_a_zone_known_by_name_is_read_quickly(before, monkeypatch):
    event = calendar("SUMMARY:Berlin", "DTSTART;TZID=Europe/Berlin:20270105T090000", item="VEVENT")
    text = (event.replace("BEGIN:VEVENT", ZONE + "\r\nBEGIN:VEVENT") if before
            else event.replace("END:VCALENDAR", ZONE + "\r\nEND:VCALENDAR"))
    assert same_reading(text, monkeypatch)
    assert "Europe/Berlin" in outcome(text, quick=True, monkeypatch=monkeypatch)


def test_quick_parse__folded_lines_and_bare_newlines_read_as_icalendar_does(monkeypatch):
    text = calendar(*TASK).replace("SUMMARY:Renew passport", "SUMMARY:Renew pass\r\n port\r\n\tnow")
    assert same_reading(text, monkeypatch)
    assert same_reading(text.replace("\r\n", "\n"), monkeypatch)
    assert "Renew passportnow" in outcome(text, quick=True, monkeypatch=monkeypatch)


@pytest.mark.parametrize("text", [
    calendar(*TASK).replace("BEGIN:VTODO", "BEGIN:VTIMEZONE\r\nTZID:X\r\nEND:VTIMEZONE\r\nBEGIN:VTODO"),
    calendar("summary:lower case", "DUE:20270105T090000Z"),
    calendar("SUMMARY;ALTREP=\"cid:x\":Quoted parameter"),
    calendar("SUMMARY;X-FOO=1:Unknown parameter"),
    calendar("SUMMARY:Due with a bad date", "DUE:2027-01-05"),
    calendar("SUMMARY:Empty due", "DUE:"),
    calendar("SUMMARY:A zone on a text", "STATUS;TZID=Europe/Berlin:NEEDS-ACTION"),
    calendar("SUMMARY:Value period", "DTSTART;VALUE=PERIOD:20270105T090000Z/PT1H", item="VEVENT"),
    calendar("SUMMARY:Ends wrong", "END:VEVENT"),
    calendar("SUMMARY:Nested", "BEGIN:VALARM", "BEGIN:VTODO", "END:VTODO", "END:VALARM"),
    calendar("SUMMARY:Bad alarm date", "BEGIN:VALARM", "DTSTART:soon", "END:VALARM"),
    calendar(*EVENT, item="VEVENT").replace("BEGIN:VEVENT", ZONE.replace("Europe/Berlin", "Berlin Time")
                                            + "\r\nBEGIN:VEVENT"),
    calendar(*EVENT, item="VEVENT").replace("BEGIN:VEVENT", ZONE.replace("TZID:Europe/Berlin",
                                            "TZID:Europe/Berlin\r\nTZID:Europe/Paris") + "\r\nBEGIN:VEVENT"),
    calendar(*EVENT, item="VEVENT").replace("BEGIN:VEVENT", ZONE.replace("+0100", "one hour")
                                            + "\r\nBEGIN:VEVENT"),
    calendar("SUMMARY:Zone inside", *ZONE.split("\r\n"), item="VEVENT"),
    calendar(*TASK) + "X-AFTER:the end\r\n",
    "SUMMARY:outside\r\n" + calendar(*TASK),
    calendar(*TASK) + calendar(*TASK),
    calendar("SUMMARY:A lone\rcarriage return"),
    calendar("SUMMARY:No colon", "X-BROKEN-LINE"),
    calendar(*TASK).replace("\r\nEND:VCALENDAR\r\n", "\r\n"),
])
def test_quick_parse__declines_what_it_is_not_sure_of_and_icalendar_reads_it(text, monkeypatch):
    assert quickread.parse(text) is None
    assert not same_reading(text, monkeypatch)


def test_quick_parse__a_plain_resource_never_reaches_icalendars_parser(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("icalendar's parser was called")

    monkeypatch.setattr(icalendar.Calendar, "from_ical", refuse)
    facts = ical.read_resource(calendar(*TASK))
    assert [c.title for c in facts.components] == ["Renew passport"]


def test_quick_parse__the_ical_corpus_reads_the_same_both_ways(monkeypatch):
    root = corpus_root()
    if root is None:
        pytest.skip("the iCalendar corpus is not next to this checkout")
    taken = 0
    for path in corpus_files(root):
        text = path.read_bytes().decode("utf-8", "replace")
        taken += same_reading(text, monkeypatch)
    # Not a vacuous comparison: a good share of real files is plain.
    assert taken >= 20


_LINES = st.sampled_from([
    "SUMMARY:Plain title", "SUMMARY:Comma\\, semi\\; slash\\\\", "SUMMARY;LANGUAGE=fr:Réunion",
    "SUMMARY;ALTREP=\"x\":Quoted", "UID:u-2", "STATUS:COMPLETED", "STATUS:", "DUE:20270105T090000Z",
    "DUE;VALUE=DATE:20270105", "DUE;TZID=Europe/Paris:20270105T090000", "DUE;TZID=Nowhere/City:20270105T090000",
    "DUE:not a date", "DTSTART:20270105T090000Z", "DTSTART;VALUE=DATE:20270105", "DTEND:20270105T100000Z",
    "DURATION:PT1H", "DURATION:1 hour", "RRULE:FREQ=DAILY;COUNT=3", "RRULE:FREQ=SOMETIMES",
    "EXDATE:20270106T090000Z", "EXDATE:", "RDATE:", "RECURRENCE-ID:20270106T090000Z", "COMPLETED:20260101T000000Z",
    "COMPLETED:yesterday", "PRIORITY:", "PRIORITY:1", "X-THING;X-A=b:c", "BEGIN:VALARM", "END:VALARM",
    "TRIGGER:-PT5M", "DESCRIPTION:Line\\nbreak", "ATTENDEE;CN=\"Doe, J\":mailto:j@example.org",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(item=st.sampled_from(["VTODO", "VEVENT"]), lines=st.lists(_LINES, max_size=8))
def test_quick_parse__whenever_it_reads_a_resource_icalendar_reads_it_alike(item, lines, monkeypatch):
    same_reading(calendar(*lines, item=item), monkeypatch)
