"""Time expressions in a reference: "yoga tomorrow", "Thursday's budget review".

A small closed grammar (English), chosen over dateparser, ctparse and
timefhuman after measuring them on the labelled precision cases
(`bench/time_parsers.py`): each of them turns ordinary words of a title into
dates ("May" the person, "2 bottles", "Q3", "10k run", "1:1 with Omar"),
which here would silently reorder the candidates. The grammar recognises only
what it can read without doubt:

- days: today, tonight, tomorrow, yesterday, the day after tomorrow, the day
  before yesterday, weekday names ("on Friday", "Friday's", "next Friday",
  "this coming Friday"; abbreviations only after on/this/next/last, so "Sat"
  alone stays a word), this/next/last week, this weekend, this/next month,
  "in February", "in N days" / "in N weeks" / "in a fortnight", "a week from
  today" / "two weeks from Friday" / "a fortnight from tomorrow", "the end of
  (next) week" (its Friday to Sunday) and "the end of the month" (its last
  seven days), ISO dates (2027-01-12), month-day dates ("January 12",
  "12 January", "Jan 12th") and a day of the month alone ("on the 3rd",
  "due the 21st", "on the twelfth": the next such day, today included; only
  where nothing but a time or the end of the sentence follows, so "the 2nd
  floor" and "on the second draft" stay words);
- "overdue" / "past due": due before now (a task due later today is not);
- times: "at 3pm", "3 pm", "10:30am", "15:00", noon, midnight, and parts of a
  day (morning, afternoon, evening) after a day word.

The expression is removed from the words that must match a title, and
becomes a half-open range [start, end) of aware datetimes in the request's
time zone (`TimeRange`, in resolver/domain/times.py with the other time helpers).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from resolver.domain.times import TimeRange

_MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
    "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
    "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}
_WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
}
_WEEKDAY_ABBREVIATIONS = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6,
}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10}
_PARTS_OF_DAY = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 24)}

_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(_WEEKDAYS)
_ABBREVIATION = "|".join(sorted(_WEEKDAY_ABBREVIATIONS, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th)?"
_POSSESSIVE = r"(?:['’]s)?"
_PART = r"(?:\s+(?P<part>morning|afternoon|evening|night))?"
_ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}
for _unit, _n in (("first", 1), ("second", 2), ("third", 3), ("fourth", 4), ("fifth", 5), ("sixth", 6),
                  ("seventh", 7), ("eighth", 8), ("ninth", 9)):
    _ORDINAL_WORDS[f"twenty-{_unit}"] = 20 + _n
_ORDINAL_WORDS["thirty-first"] = 31
_ORDINAL_WORD = "|".join(w.replace("-", r"[-\s]") for w in sorted(_ORDINAL_WORDS, key=len, reverse=True))
_COUNT = r"(?P<n>\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
# What may follow a day of the month said alone: the end, punctuation, or a time.
_ORDINAL_END = (r"(?=\s*$|\s*[?.!,;:)]|\s+(?:at|in|of|for|on|and|or|please|morning|afternoon|evening|night"
                r"|\d{1,2}(?::\d\d)?\s*(?:am|pm)|\d{1,2}:\d\d|noon|midday|midnight)\b)")
_MONTH_NAMES = "january|february|march|april|may|june|july|august|september|october|november|december"

# Each pattern names the groups its reader uses; the first that matches wins.
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_DAY_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", _rx(r"\b(?:on\s+)?(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b" + _POSSESSIVE)),
    ("month_day", _rx(
        rf"\b(?:on\s+)?(?P<month>{_MONTH})\.?\s+(?P<d>\d{{1,2}}){_ORDINAL}\b(?:,?\s+(?P<y>\d{{4}})\b)?"
        + _POSSESSIVE)),
    ("day_month", _rx(
        rf"\b(?:on\s+)?(?:the\s+)?(?P<d>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<month>{_MONTH})\b\.?"
        rf"(?:,?\s+(?P<y>\d{{4}})\b)?" + _POSSESSIVE)),
    ("day_after_tomorrow", _rx(r"\b(?:the\s+)?day\s+after\s+tomorrow\b" + _POSSESSIVE + _PART)),
    ("day_before_yesterday", _rx(r"\b(?:the\s+)?day\s+before\s+yesterday\b" + _POSSESSIVE + _PART)),
    ("from_base", _rx(
        _COUNT.join((r"\b", r"\s+(?P<unit>days?|weeks?|fortnights?)\s+"))
        + rf"(?:from\s+(?P<base>today|now|tomorrow|{_WEEKDAY})|(?P<base2>today|tomorrow))\b" + _POSSESSIVE)),
    ("end_of", _rx(
        r"\b(?:(?:at|by|for|until|before)\s+)?(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(?P<which>next\s+)?"
        r"(?P<unit>week|month)\b" + _POSSESSIVE)),
    ("ordinal", _rx(
        rf"\b(?:(?:on|due|by|for|from|until)\s+)?(?:(?P<weekday>{_WEEKDAY})\s+)?the\s+"
        rf"(?P<d>\d{{1,2}}(?:st|nd|rd|th)|{_ORDINAL_WORD})\b" + _POSSESSIVE + _PART + _ORDINAL_END)),
    ("in_month", _rx(rf"\bin\s+(?P<month>{_MONTH_NAMES})\b(?!['’]s|\s+\d)")),
    ("relative", _rx(r"\b(?P<word>today|tonight|tomorrow|yesterday)\b" + _POSSESSIVE + _PART)),
    ("this_part", _rx(r"\bthis\s+(?P<part>morning|afternoon|evening)\b")),
    ("in_n", _rx(
        r"\bin\s+(?P<n>\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
        r"(?P<unit>days?|weeks?|fortnights?)\b")),
    ("week", _rx(r"\b(?P<which>this|next|last)\s+(?P<unit>week|month)\b" + _POSSESSIVE)),
    ("weekend", _rx(r"\b(?P<which>this|next)\s+weekend\b" + _POSSESSIVE)),
    ("weekday", _rx(
        rf"\b(?:(?P<which>on|this\s+coming|this|next|last|coming)\s+)?(?P<weekday>{_WEEKDAY})s?\b"
        + _POSSESSIVE + _PART)),
    ("weekday_abbreviation", _rx(
        rf"\b(?P<which>on|this\s+coming|this|next|last|coming)\s+(?P<weekday>{_ABBREVIATION})\b\.?"
        + _POSSESSIVE + _PART)),
]
_TIME_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("meridiem", _rx(
        r"\b(?:at\s+)?(?P<h>1[0-2]|0?[1-9])(?::(?P<min>[0-5]\d))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?=\W|$)")),
    ("clock", _rx(r"\b(?:at\s+)?(?P<h>[01]?\d|2[0-3]):(?P<min>[0-5]\d)\b(?!:)")),
    ("named", _rx(r"\b(?:at\s+)?(?P<named>noon|midday|midnight)\b")),
]
# Due before now: what is overdue (an item counts only when all of it lies before now).
_OVERDUE = _rx(r"\b(?:over\s?due|past\s+due)\b")
# Words that only tie an expression to the sentence ("due tomorrow", "for Friday").
_FILLER = re.compile(r"\b(?:due|by|for|from|until|on|at)\s*$", re.IGNORECASE)
# A time point is matched as this long a stretch: "at 3pm" finds what runs at 3.
TIME_POINT = timedelta(minutes=30)


@dataclass(frozen=True)
class TimeExpression:
    range: TimeRange
    rest: str  # the reference without the expression
    expression: str  # what was recognised, as written


def find_time_expression(text: str, *, now: datetime, tz: tzinfo) -> TimeExpression | None:
    """The time expression in `text`, if any; `now` is aware."""
    # Patterns ignore case and run on the text itself, so that spans index it.
    lowered = text
    local_now = now.astimezone(tz)
    today = local_now.date()
    spans: list[tuple[int, int]] = []
    days: tuple[date, date] | None = None
    part: tuple[int, int] | None = None
    for name, pattern in _DAY_PATTERNS:
        match = pattern.search(lowered)
        if match is None:
            continue
        found = _read_day(name, match, today)
        if found is None:
            continue
        days, part = found
        spans.append(match.span())
        break
    clock: time | None = None
    for _name, pattern in _TIME_PATTERNS:
        for match in pattern.finditer(lowered):
            if any(match.start() < end and match.end() > start for start, end in spans):
                continue
            clock = _read_time(match)
            if clock is not None:
                spans.append(match.span())
                break
        if clock is not None:
            break
    if days is None:
        overdue = _OVERDUE.search(lowered)
        if overdue is not None:
            # Due before now, whatever else was said; a clock time means nothing here.
            far = datetime.combine(date(1900, 1, 1), time.min, tzinfo=tz)
            rest, expression = _remove(text, [overdue.span()])
            return TimeExpression(range=TimeRange(far, local_now, whole=True), rest=rest, expression=expression)
    if days is None and clock is None:
        return None
    range_ = _range(days=days, part=part, clock=clock, local_now=local_now, tz=tz)
    if range_ is None:
        return None
    rest, expression = _remove(text, spans)
    return TimeExpression(range=range_, rest=rest, expression=expression)


def _read_day(name: str, match: re.Match[str], today: date) -> tuple[tuple[date, date], tuple[int, int] | None] | None:
    groups = {k: v.lower() if isinstance(v, str) else v for k, v in match.groupdict().items()}
    part = _PARTS_OF_DAY.get(groups.get("part") or "")
    if name == "iso":
        day = _date(int(groups["y"]), int(groups["m"]), int(groups["d"]))
        return ((day, day), None) if day else None
    if name in ("month_day", "day_month"):
        month = _MONTHS[groups["month"]]
        number = int(groups["d"])
        if groups.get("y"):
            day = _date(int(groups["y"]), month, number)
        else:
            # Without a year, the next such day: "March 3" in December is next March.
            day = _date(today.year, month, number)
            if day is not None and day < today:
                day = _date(today.year + 1, month, number)
        return ((day, day), None) if day else None
    if name == "day_after_tomorrow":
        day = today + timedelta(days=2)
        return (day, day), part
    if name == "relative":
        word = groups["word"]
        if word == "tonight":
            return (today, today), _PARTS_OF_DAY["evening"]
        offset = {"today": 0, "tomorrow": 1, "yesterday": -1}[word]
        day = today + timedelta(days=offset)
        return (day, day), part
    if name == "day_before_yesterday":
        day = today - timedelta(days=2)
        return (day, day), part
    if name == "from_base":
        count = int(groups["n"]) if groups["n"].isdigit() else _NUMBERS[groups["n"]]
        base_word = groups.get("base") or groups.get("base2")
        if base_word in ("today", "now"):
            base = today
        elif base_word == "tomorrow":
            base = today + timedelta(days=1)
        else:
            base = today + timedelta(days=(_WEEKDAYS[base_word] - today.weekday()) % 7)
        day = base + timedelta(days=count * _UNIT_DAYS[groups["unit"].rstrip("s")])
        return (day, day), None
    if name == "end_of":
        step = 1 if groups.get("which") else 0
        if groups["unit"] == "week":
            friday = today - timedelta(days=today.weekday()) + timedelta(weeks=step, days=4)
            return (friday, friday + timedelta(days=2)), None
        first, last = _month(today, step)
        return (last - timedelta(days=6), last), None
    if name == "ordinal":
        written = groups["d"]
        number = int(written[:-2]) if written[:1].isdigit() else _ORDINAL_WORDS[re.sub(r"[-\s]+", "-", written)]
        day = _next_month_day(today, number)
        if day is None:
            return None
        if groups.get("weekday") and day.weekday() != _WEEKDAYS[groups["weekday"]]:
            return None  # "Friday the 14th" where the 14th is no Friday: no reading without doubt
        return (day, day), part
    if name == "in_month":
        month = _MONTHS[groups["month"]]
        year = today.year if month >= today.month else today.year + 1
        first = date(year, month, 1)
        following = date(year + month // 12, month % 12 + 1, 1)
        return (first, following - timedelta(days=1)), None
    if name == "this_part":
        return (today, today), _PARTS_OF_DAY[groups["part"]]
    if name == "in_n":
        count = int(groups["n"]) if groups["n"].isdigit() else _NUMBERS[groups["n"]]
        day = today + timedelta(days=count * _UNIT_DAYS[groups["unit"].rstrip("s")])
        return (day, day), None
    if name == "week":
        step = {"this": 0, "next": 1, "last": -1}[groups["which"]]
        if groups["unit"] == "week":
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
            return (monday, monday + timedelta(days=6)), None
        return _month(today, step), None
    if name == "weekend":
        saturday = today + timedelta(days=(5 - today.weekday()) % 7)
        if groups["which"] == "next":
            saturday += timedelta(weeks=1)
        return (saturday, saturday + timedelta(days=1)), None
    if name in ("weekday", "weekday_abbreviation"):
        table = _WEEKDAYS if name == "weekday" else _WEEKDAY_ABBREVIATIONS
        target = table[groups["weekday"]]
        which = groups.get("which")
        if which and which.split()[-1] == "coming":
            which = "this"  # "this coming Friday", "coming Friday": the next one
        if which == "last":
            back = (today.weekday() - target) % 7 or 7
            day = today - timedelta(days=back)
        else:
            # "Friday" and "next Friday" both mean the coming one; said on a
            # Friday, "Friday" means today and "next Friday" a week later.
            ahead = (target - today.weekday()) % 7
            if which == "next" and ahead == 0:
                ahead = 7
            day = today + timedelta(days=ahead)
        return (day, day), part
    return None


_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14}


def _month(today: date, step: int) -> tuple[date, date]:
    """The first and last day of the month `step` months from today's."""
    year, month = today.year, today.month + step
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return first, following - timedelta(days=1)


def _next_month_day(today: date, number: int) -> date | None:
    """The next day numbered `number` in its month, today included ("the 31st" skips short months)."""
    if not 1 <= number <= 31:
        return None
    year, month = today.year, today.month
    for _ in range(13):
        day = _date(year, month, number)
        if day is not None and day >= today:
            return day
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _read_time(match: re.Match[str]) -> time | None:
    groups = {k: v.lower() if isinstance(v, str) else v for k, v in match.groupdict().items()}
    if groups.get("named"):
        return time(0, 0) if groups["named"] == "midnight" else time(12, 0)
    hour = int(groups["h"])
    minute = int(groups.get("min") or 0)
    ampm = (groups.get("ampm") or "").replace(".", "")
    if ampm == "pm" and hour != 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    return time(hour, minute)


def _range(*, days: tuple[date, date] | None, part: tuple[int, int] | None, clock: time | None,
           local_now: datetime, tz: tzinfo) -> TimeRange | None:
    if days is None:
        assert clock is not None
        # A time alone means its next occurrence: "at 4pm" said at 9am is today.
        at = datetime.combine(local_now.date(), clock, tzinfo=tz)
        if at + TIME_POINT <= local_now:
            at += timedelta(days=1)
        return TimeRange(at, at + TIME_POINT, every_day=True)
    first, last = days
    if clock is not None:
        if first != last:
            return None  # "next week at 3pm" names no single moment
        at = datetime.combine(first, clock, tzinfo=tz)
        return TimeRange(at, at + TIME_POINT)
    if part is not None:
        begin = datetime.combine(first, time(part[0]), tzinfo=tz)
        end = datetime.combine(last, time.min, tzinfo=tz) + timedelta(hours=part[1])
        return TimeRange(begin, end)
    return TimeRange(datetime.combine(first, time.min, tzinfo=tz),
                     datetime.combine(last + timedelta(days=1), time.min, tzinfo=tz))


def _remove(text: str, spans: list[tuple[int, int]]) -> tuple[str, str]:
    """The text without the spans (and a "due"/"on"/"at" just before them)."""
    pieces: list[str] = []
    taken: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        before = text[cursor:start]
        filler = _FILLER.search(before)
        if filler:
            before = before[:filler.start()]
        pieces.append(before)
        taken.append(text[start:end].strip())
        cursor = end
    pieces.append(text[cursor:])
    rest = re.sub(r"\s+", " ", " ".join(pieces)).strip(" ,;:-–")
    return rest, " ".join(taken)
