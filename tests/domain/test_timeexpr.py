"""Time expressions in references: each form, the precision cases, the rest of the text."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from resolver.domain.timeexpr import find_time_expression

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=BERLIN)  # a Monday


def found(text: str):
    return find_time_expression(text, now=NOW, tz=BERLIN)


def span(text: str) -> tuple[str, str, str]:
    expression = found(text)
    assert expression is not None, text
    return expression.range.start.isoformat(), expression.range.end.isoformat(), expression.rest


@pytest.mark.parametrize("text, start, end, rest", [
    ("yoga today", "2027-01-11T00:00:00+01:00", "2027-01-12T00:00:00+01:00", "yoga"),
    ("dinner tonight", "2027-01-11T18:00:00+01:00", "2027-01-12T00:00:00+01:00", "dinner"),
    ("yoga tomorrow", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "yoga"),
    ("standup yesterday", "2027-01-10T00:00:00+01:00", "2027-01-11T00:00:00+01:00", "standup"),
    # As a chat or a note shortens them.
    ("standup tmrw", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "standup"),
    ("yoga TMR", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "yoga"),
    ("2moro dentist", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "dentist"),
    ("gym tonite", "2027-01-11T18:00:00+01:00", "2027-01-12T00:00:00+01:00", "gym"),
    ("the day after tomorrow dentist", "2027-01-13T00:00:00+01:00", "2027-01-14T00:00:00+01:00", "dentist"),
    ("Thursday's budget review", "2027-01-14T00:00:00+01:00", "2027-01-15T00:00:00+01:00", "budget review"),
    ("demo on Friday", "2027-01-15T00:00:00+01:00", "2027-01-16T00:00:00+01:00", "demo"),
    ("next Monday retro", "2027-01-18T00:00:00+01:00", "2027-01-19T00:00:00+01:00", "retro"),
    ("Monday retro", "2027-01-11T00:00:00+01:00", "2027-01-12T00:00:00+01:00", "retro"),
    ("last Friday notes", "2027-01-08T00:00:00+01:00", "2027-01-09T00:00:00+01:00", "notes"),
    ("planning this week", "2027-01-11T00:00:00+01:00", "2027-01-18T00:00:00+01:00", "planning"),
    ("planning next week", "2027-01-18T00:00:00+01:00", "2027-01-25T00:00:00+01:00", "planning"),
    ("rent this month", "2027-01-01T00:00:00+01:00", "2027-02-01T00:00:00+01:00", "rent"),
    ("rent next month", "2027-02-01T00:00:00+01:00", "2027-03-01T00:00:00+01:00", "rent"),
    ("review in 3 days", "2027-01-14T00:00:00+01:00", "2027-01-15T00:00:00+01:00", "review"),
    ("review in two weeks", "2027-01-25T00:00:00+01:00", "2027-01-26T00:00:00+01:00", "review"),
    ("dentist 2027-01-12", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "dentist"),
    ("the vet appointment on March 3", "2027-03-03T00:00:00+01:00", "2027-03-04T00:00:00+01:00",
     "the vet appointment"),
    ("dentist January 12", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "dentist"),
    ("dentist 12 January", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "dentist"),
    ("dentist Jan 12th", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "dentist"),
    ("dentist Jan 5", "2028-01-05T00:00:00+01:00", "2028-01-06T00:00:00+01:00", "dentist"),  # passed: next year
    ("call with Omar at 4pm", "2027-01-11T16:00:00+01:00", "2027-01-11T16:30:00+01:00", "call with Omar"),
    ("sync 10:30am", "2027-01-11T10:30:00+01:00", "2027-01-11T11:00:00+01:00", "sync"),
    ("sync at 15:00", "2027-01-11T15:00:00+01:00", "2027-01-11T15:30:00+01:00", "sync"),
    ("call at 8am", "2027-01-12T08:00:00+01:00", "2027-01-12T08:30:00+01:00", "call"),  # passed today: tomorrow
    ("lunch at noon", "2027-01-11T12:00:00+01:00", "2027-01-11T12:30:00+01:00", "lunch"),
    ("tomorrow at 3pm", "2027-01-12T15:00:00+01:00", "2027-01-12T15:30:00+01:00", ""),
    ("drinks friday evening", "2027-01-15T18:00:00+01:00", "2027-01-16T00:00:00+01:00", "drinks"),
    ("the invoice due tomorrow", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "the invoice"),
    ("gym on Sat", "2027-01-16T00:00:00+01:00", "2027-01-17T00:00:00+01:00", "gym"),
    # A change's new time ("to 8pm") is where the item goes: it names neither the occurrence nor the title.
    ("bump date night on the 29th to 8pm", "2027-01-29T00:00:00+01:00", "2027-01-30T00:00:00+01:00",
     "bump date night"),
    ("push the dentist on friday to 3pm", "2027-01-15T00:00:00+01:00", "2027-01-16T00:00:00+01:00",
     "push the dentist"),
    ("move standup tomorrow till 10:30", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "move standup"),
    ("date night on the 29th at 8pm", "2027-01-29T20:00:00+01:00", "2027-01-29T20:30:00+01:00", "date night"),
])
def test_time__recognised(text, start, end, rest):
    assert span(text) == (start, end, rest)


@pytest.mark.parametrize("text", [
    "1:1 with Omar", "lunch with May", "May", "buy 2 bottles", "Q3 report", "10k run", "Sat exam prep",
    "march for climate", "Review 1:1 notes", "order 3 boxes", "2 pm2 particles", "sun cream", "wed dress fitting",
])
def test_time__precision_cases_are_not_dates(text):
    assert found(text) is None


def test_time__impossible_dates_are_not_dates():
    assert found("dentist February 30") is None
    assert found("dentist 2027-13-01") is None


def test_time__the_zone_decides_what_today_is():
    late = datetime(2027, 1, 11, 23, 30, tzinfo=ZoneInfo("UTC"))
    tokyo = find_time_expression("yoga today", now=late, tz=ZoneInfo("Asia/Tokyo"))
    assert tokyo.range.start.isoformat() == "2027-01-12T00:00:00+09:00"


def test_time__a_time_alone_repeats_every_day():
    """"at 4pm" without a day is the next occurrence at 4pm, whichever day it falls on."""
    expression = found("call with Omar at 4pm")
    assert expression.range.every_day
    thursday = datetime(2027, 1, 14, 16, 0, tzinfo=BERLIN)
    assert expression.range.overlaps(thursday, thursday.replace(hour=17))
    assert not expression.range.overlaps(thursday.replace(hour=11), thursday.replace(hour=12))
    yesterday = datetime(2027, 1, 10, 16, 0, tzinfo=BERLIN)
    assert not expression.range.overlaps(yesterday, yesterday.replace(hour=17))
    late = datetime(2027, 1, 14, 15, 0, tzinfo=BERLIN)  # 15:00-17:00 runs through 16:00
    assert expression.range.overlaps(late, late.replace(hour=17))
    assert not found("dentist tomorrow").range.every_day


# -- issue 21: the new forms, one test each ---------------------------------------------------------

@pytest.mark.parametrize("text, start, end, rest", [
    # Day of the month said alone: the next such day, today included.
    ("standup on the 21st", "2027-01-21T00:00:00+01:00", "2027-01-22T00:00:00+01:00", "standup"),
    ("the task due the 3rd", "2027-02-03T00:00:00+01:00", "2027-02-04T00:00:00+01:00", "the task"),
    ("yoga the 11th", "2027-01-11T00:00:00+01:00", "2027-01-12T00:00:00+01:00", "yoga"),
    ("sprint planning on the twelfth", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "sprint planning"),
    ("dinner on the twenty-first", "2027-01-21T00:00:00+01:00", "2027-01-22T00:00:00+01:00", "dinner"),
    ("rent on the 31st", "2027-01-31T00:00:00+01:00", "2027-02-01T00:00:00+01:00", "rent"),
    ("demo on Friday the 15th", "2027-01-15T00:00:00+01:00", "2027-01-16T00:00:00+01:00", "demo"),
    ("call on the 21st at 3pm", "2027-01-21T15:00:00+01:00", "2027-01-21T15:30:00+01:00", "call"),
    # Counted from a day.
    ("standup a week from today", "2027-01-18T00:00:00+01:00", "2027-01-19T00:00:00+01:00", "standup"),
    ("review a week from tomorrow", "2027-01-19T00:00:00+01:00", "2027-01-20T00:00:00+01:00", "review"),
    ("seeds a week from Thursday", "2027-01-21T00:00:00+01:00", "2027-01-22T00:00:00+01:00", "seeds"),
    ("standup two weeks from today", "2027-01-25T00:00:00+01:00", "2027-01-26T00:00:00+01:00", "standup"),
    ("piano a fortnight from Thursday", "2027-01-28T00:00:00+01:00", "2027-01-29T00:00:00+01:00", "piano"),
    ("swim in a fortnight", "2027-01-25T00:00:00+01:00", "2027-01-26T00:00:00+01:00", "swim"),
    ("gym a week today", "2027-01-18T00:00:00+01:00", "2027-01-19T00:00:00+01:00", "gym"),
    # This coming weekday: the next one.
    ("date night this coming Friday", "2027-01-15T00:00:00+01:00", "2027-01-16T00:00:00+01:00", "date night"),
    ("choir coming Tuesday", "2027-01-12T00:00:00+01:00", "2027-01-13T00:00:00+01:00", "choir"),
    # The day after tomorrow, the day before yesterday.
    ("call the day after tomorrow", "2027-01-13T00:00:00+01:00", "2027-01-14T00:00:00+01:00", "call"),
    ("what was due the day before yesterday", "2027-01-09T00:00:00+01:00", "2027-01-10T00:00:00+01:00",
     "what was"),
    # End of the week (Friday to Sunday), of next week, of the month (its last seven days).
    ("guitar end of next week", "2027-01-22T00:00:00+01:00", "2027-01-25T00:00:00+01:00", "guitar"),
    ("cinema at the end of the week", "2027-01-15T00:00:00+01:00", "2027-01-18T00:00:00+01:00", "cinema"),
    ("report by the end of the month", "2027-01-25T00:00:00+01:00", "2027-02-01T00:00:00+01:00", "report"),
    ("report end of next month", "2027-02-22T00:00:00+01:00", "2027-03-01T00:00:00+01:00", "report"),
    # A month by name after "in": the next one (this one while it lasts).
    ("anything at home in February", "2027-02-01T00:00:00+01:00", "2027-03-01T00:00:00+01:00", "anything at home"),
    ("taxes in January", "2027-01-01T00:00:00+01:00", "2027-02-01T00:00:00+01:00", "taxes"),
])
def test_time_expression__new_forms(text, start, end, rest):
    assert span(text) == (start, end, rest)


@pytest.mark.parametrize("text", [
    "Review the 2nd draft",           # an ordinal followed by a noun is a word of the title
    "meeting on the second floor",
    "the third quarter numbers",
    "Friday the 14th",                # the 14th is no Friday: the weekday alone is read, not the 14th
    "lunch with May",
    "May's birthday in the office",
])
def test_time_expression__ordinals_and_months_that_are_words(text):
    expression = found(text)
    if text == "Friday the 14th":
        assert expression is not None and expression.range.start.day == 15 and expression.rest == "the 14th"
    else:
        assert expression is None, text


def test_time_expression__overdue_is_due_before_now():
    expression = found("what's overdue")
    assert expression is not None and expression.rest == "what's"
    assert expression.range.whole and expression.range.end == NOW
    due_today = datetime(2027, 1, 11, 0, 0, tzinfo=BERLIN)
    # A task due today (the whole day) is not overdue at 09:00; one due at 08:00 is, one due yesterday is.
    assert not expression.range.overlaps(due_today, datetime(2027, 1, 12, 0, 0, tzinfo=BERLIN))
    eight = datetime(2027, 1, 11, 8, 0, tzinfo=BERLIN)
    assert expression.range.overlaps(eight, eight)
    assert expression.range.overlaps(datetime(2027, 1, 10, tzinfo=BERLIN), due_today)
    assert found("the past due invoices").rest == "the invoices"


def test_time_expression__a_new_time_alone_names_no_time():
    """"move the dentist to 3pm": which dentist is not said by 3pm; the reference is read as words alone."""
    assert found("move the dentist to 3pm") is None
