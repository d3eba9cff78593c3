"""Time expressions in a reference: "yoga tomorrow", "Thursday's budget review", "Yoga morgen".

A small closed grammar per language, chosen over dateparser, ctparse and
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

The grammar is data: one file per language in resolver/data/time/ (English,
German, French, Spanish), each a list of (pattern, reader) pairs and the
tables of words the readers look up ("morgen" -> one day ahead, "mardi" ->
Tuesday). The readers below are the same for every language: a language adds
words and patterns, not code. A language without a file reads English.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from resolver.domain.times import TimeRange

_GRAMMARS = Path(__file__).resolve().parent.parent / "data" / "time"
DEFAULT_GRAMMAR = "english"
# A time point is matched as this long a stretch: "at 3pm" finds what runs at 3.
TIME_POINT = timedelta(minutes=30)
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14}
_PLACEHOLDER = re.compile(r"<<(\w+)>>")

# A day reading: (first day, last day) and the part of the day (hours), if named.
DayReading = tuple[tuple[date, date], tuple[int, int] | None]


@dataclass(frozen=True)
class Grammar:
    """One language's patterns, in order, each with the name of its reader, and its word tables."""

    language: str
    days: tuple[tuple[str, re.Pattern[str]], ...]
    times: tuple[tuple[str, re.Pattern[str]], ...]
    overdue: re.Pattern[str] | None
    filler: re.Pattern[str]
    tables: dict[str, dict[str, Any]]
    # Before a clock time, what makes it the new time of a change, not the one meant (None: nothing does).
    moved_to: re.Pattern[str] | None = None
    # Every word its patterns and tables hold, lower-cased: what it has declined to read alone when it reads
    # none ("weekend" without "this"), so another grammar's reading of only such words is not taken.
    vocabulary: frozenset[str] = frozenset()

    def look_up(self, table: str, word: str | None) -> Any:
        """The table's value for a matched word (case and inner whitespace ignored), None if absent."""
        if word is None:
            return None
        return self.tables.get(table, {}).get(_key(word))


def _key(word: str) -> str:
    return re.sub(r"\s+", " ", word.strip().lower())


def _alternation(words: dict[str, Any]) -> str:
    spelled = (re.escape(w).replace(r"\ ", r"\s+").replace(r"\-", r"[-\s]") for w in
               sorted(words, key=len, reverse=True))
    return "(?:" + "|".join(spelled) + ")"


def _expand(pattern: str, fragments: dict[str, str], tables: dict[str, dict[str, Any]]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in fragments:
            return _expand(fragments[name], fragments, tables)
        return _alternation(tables[name])
    return _PLACEHOLDER.sub(one, pattern)


def _compiled(entries: list[dict[str, str]], fragments: dict[str, str], tables: dict[str, dict[str, Any]],
              readers: Any) -> tuple[tuple[str, re.Pattern[str]], ...]:
    for entry in entries:
        if entry["reader"] not in readers:
            raise ValueError(f"time grammar: unknown reader {entry['reader']!r}")
    return tuple((e["reader"], re.compile(_expand(e["pattern"], fragments, tables), re.IGNORECASE))
                 for e in entries)


@lru_cache(maxsize=None)
def languages() -> tuple[str, ...]:
    """The languages with a time grammar of their own."""
    return tuple(sorted(p.stem for p in _GRAMMARS.glob("*.toml")))


@lru_cache(maxsize=None)
def grammar(language: str = DEFAULT_GRAMMAR) -> Grammar:
    """The time grammar of a language (English for a language without one), compiled once."""
    path = _GRAMMARS / f"{language}.toml"
    if not path.exists():
        path, language = _GRAMMARS / f"{DEFAULT_GRAMMAR}.toml", DEFAULT_GRAMMAR
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    tables = {name: {_key(w): v for w, v in table.items()} for name, table in data.get("tables", {}).items()}
    fragments = data.get("fragments", {})
    other = data.get("other", {})
    rx = lambda text: re.compile(_expand(text, fragments, tables), re.IGNORECASE)  # noqa: E731
    days = _compiled(data.get("day", []), fragments, tables, _READERS)
    times = _compiled(data.get("time", []), fragments, tables, ("clock",))
    overdue = rx(other["overdue"]) if other.get("overdue") else None
    filler = rx(other.get("filler", r"(?!)"))
    moved_to = rx(other["moved_to"]) if other.get("moved_to") else None
    sources = [p.pattern for _, p in days + times] + [p.pattern for p in (overdue, filler, moved_to) if p is not None]
    # Escapes (\s, \b, \d) and group names are no words of the language.
    vocabulary = frozenset(_words(re.sub(r"\\[A-Za-z]|\?P<\w+>", " ", " ".join(sources))))
    return Grammar(language=language, days=days, times=times, overdue=overdue, filler=filler, tables=tables,
                   moved_to=moved_to, vocabulary=vocabulary)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.lower())


@dataclass(frozen=True)
class TimeExpression:
    range: TimeRange
    rest: str  # the reference without the expression
    expression: str  # what was recognised, as written
    language: str = DEFAULT_GRAMMAR  # the grammar that read it: the reference is likely in that language


def find_time_expression_in_any(text: str, *, now: datetime, tz: tzinfo, language: str = DEFAULT_GRAMMAR,
                                titled: Callable[[str], bool] = lambda expression: False) -> TimeExpression | None:
    """The time expression in `text` in whichever grammar reads the most of it, the language's on a tie.

    A person who writes in several languages does not say which: "Yoga morgen" asked where English is
    configured is tomorrow's yoga, and "médico mañana a las 15:00" is tomorrow at 3 pm, not the "15:00" of
    today that English reads alone. Another grammar's reading is not taken when every word of it is a word the
    language's own grammar holds and declined to read, and it has no number ("call mum about the weekend":
    French reads "weekend" alone, English only "this weekend"; "am 31.1." is taken), nor when every word of it
    names a title (`titled`: "Morgen" the
    surname in "Call Morgen about the lease").
    """
    found = find_time_expression(text, now=now, tz=tz, language=language)
    own = grammar(language)
    for other in languages():
        if other == own.language:
            continue
        reading = find_time_expression(text, now=now, tz=tz, language=other)
        if reading is None or (found is not None and len(reading.expression) <= len(found.expression)):
            continue
        words = _words(reading.expression)
        if words and not any(c.isdigit() for c in reading.expression) and all(w in own.vocabulary for w in words):
            continue
        if not titled(reading.expression):
            found = reading
    return found


def find_time_expression(text: str, *, now: datetime, tz: tzinfo,
                         language: str = DEFAULT_GRAMMAR) -> TimeExpression | None:
    """The time expression in `text`, if any, in the language's grammar; `now` is aware."""
    rules = grammar(language)
    local_now = now.astimezone(tz)
    spans: list[tuple[int, int]] = []
    # Patterns ignore case and run on the text itself, so that spans index it.
    found = _first_day(text, rules, local_now.date())
    days, part = (found[0], found[1]) if found is not None else (None, None)
    if found is not None:
        spans.append(found[2])
    moved: list[tuple[int, int]] = []
    clock = _first_time(text, rules, spans, moved)
    if days is None and rules.overdue is not None:
        overdue = rules.overdue.search(text)
        if overdue is not None:
            # Due before now, whatever else was said; a clock time means nothing here.
            far = datetime.combine(date(1900, 1, 1), time.min, tzinfo=tz)
            rest, expression = _remove(text, [overdue.span()], rules.filler)
            return TimeExpression(range=TimeRange(far, local_now, whole=True), rest=rest, expression=expression,
                                  language=rules.language)
    if days is None and clock is None:
        return None
    range_ = _range(days=days, part=part, clock=clock, local_now=local_now, tz=tz)
    if range_ is None:
        return None
    if moved:
        # The new time ("to 8pm") names no title either: out of the rest, with the word that introduced it.
        text = "".join(" " if any(start <= n < end for start, end in moved) else c for n, c in enumerate(text))
    rest, expression = _remove(text, spans, rules.filler)
    return TimeExpression(range=range_, rest=rest, expression=expression, language=rules.language)


def _first_day(text: str, rules: Grammar,
               today: date) -> tuple[tuple[date, date], tuple[int, int] | None, tuple[int, int]] | None:
    """The first day pattern that matches and reads a day: its days, part of day and span."""
    for name, pattern in rules.days:
        match = pattern.search(text)
        if match is None:
            continue
        found = _READERS[name](_groups(match), today, rules)
        if found is not None:
            return found[0], found[1], match.span()
    return None


def _first_time(text: str, rules: Grammar, spans: list[tuple[int, int]],
                moved: list[tuple[int, int]] | None = None) -> time | None:
    """The first clock time outside the day's span; its span is added to `spans`. A time the grammar's
    `moved_to` introduces is the new time of a change: skipped, its span (and the word) added to `moved`."""
    for _name, pattern in rules.times:
        for match in pattern.finditer(text):
            if any(match.start() < end and match.end() > start for start, end in spans + (moved or [])):
                continue
            target = rules.moved_to.search(text, 0, match.start()) if rules.moved_to is not None else None
            if target is not None and moved is not None:
                moved.append((target.start(), match.end()))
                continue
            clock = _read_time(_groups(match), rules)
            if clock is not None:
                spans.append(match.span())
                return clock
    return None


def _groups(match: re.Match[str]) -> dict[str, str | None]:
    return {k: _key(v) if isinstance(v, str) else v for k, v in match.groupdict().items()}


# -- readers: groups -> days ---------------------------------------------------
# Each takes the match's groups (lower case, whitespace collapsed), today and the
# grammar, and returns ((first day, last day), part of day) or None (no reading
# without doubt: the next pattern is tried).

def _part(groups: dict[str, str | None], rules: Grammar) -> tuple[int, int] | None:
    hours = rules.look_up("PARTS", groups.get("part"))
    return (int(hours[0]), int(hours[1])) if hours else None


def _count(word: str, rules: Grammar) -> int | None:
    return int(word) if word.isdigit() else rules.look_up("NUMBERS", word)


def _day_number(written: str, rules: Grammar) -> int | None:
    digits = re.match(r"\d+", written)
    return int(digits.group()) if digits else rules.look_up("ORDINAL_WORDS", re.sub(r"[-\s]+", "-", written))


def _one_day(day: date | None, part: tuple[int, int] | None = None) -> DayReading | None:
    return ((day, day), part) if day is not None else None


def _read_iso(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    return _one_day(_date(int(groups["y"]), int(groups["m"]), int(groups["d"])))


def _read_month_day(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    month = rules.look_up("MONTHS", groups["month"])
    number = _day_number(groups["d"], rules)
    if month is None or number is None:
        return None
    return _one_day(_dated(groups.get("y"), month, number, today))


def _dated(year: str | None, month: int, number: int, today: date) -> date | None:
    """The day with its year; without one, the next such day: "March 3" in December is next March."""
    if year:
        return _date(int(year), month, number)
    day = _date(today.year, month, number)
    if day is not None and day < today:
        day = _date(today.year + 1, month, number)
    return day


def _read_relative(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    entry = rules.look_up("RELATIVE", groups["word"])
    if entry is None:
        return None
    own_part = rules.look_up("PARTS", entry[1]) if len(entry) > 1 else None
    part = (int(own_part[0]), int(own_part[1])) if own_part else _part(groups, rules)
    return _one_day(today + timedelta(days=int(entry[0])), part)


def _read_from_base(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    count = _count(groups["n"], rules)
    unit = rules.look_up("UNITS", groups["unit"])
    base_word = groups.get("base") or groups.get("base2")
    weekday = rules.look_up("WEEKDAYS", base_word)
    if weekday is not None:
        base = today + timedelta(days=(weekday - today.weekday()) % 7)
    else:
        offset = rules.look_up("RELATIVE", base_word)
        if offset is None:
            return None
        base = today + timedelta(days=int(offset[0]))
    if count is None or unit not in _UNIT_DAYS:
        return None
    return _one_day(base + timedelta(days=count * _UNIT_DAYS[unit]))


def _step(groups: dict[str, Any], rules: Grammar) -> int:
    """this: 0, next: 1, last: -1; a `which` group the table does not know is `next` ("Ende nächster Woche").
    `which2` is a second place for it ("el martes que viene", after the day)."""
    which = groups.get("which") or groups.get("which2")
    if not which:
        return 0
    return {"this": 0, "next": 1, "last": -1}.get(rules.look_up("WHICH", which) or "next", 1)


def _read_numeric(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    """"12.1.2027", "12.1." (day first): without a year, the next such day."""
    return _one_day(_dated(groups.get("y"), int(groups["m"]), int(groups["d"]), today))


def _read_end_of(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    step = _step(groups, rules)
    if rules.look_up("UNITS", groups.get("unit") or groups.get("unit2")) == "week":
        friday = today - timedelta(days=today.weekday()) + timedelta(weeks=step, days=4)
        return (friday, friday + timedelta(days=2)), None
    _first, last = _month(today, step)
    return (last - timedelta(days=6), last), None


def _read_ordinal(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    number = _day_number(groups["d"], rules)
    day = _next_month_day(today, number) if number is not None else None
    if day is None:
        return None
    weekday = rules.look_up("WEEKDAYS", groups.get("weekday"))
    if groups.get("weekday") and day.weekday() != weekday:
        return None  # "Friday the 14th" where the 14th is no Friday: no reading without doubt
    return _one_day(day, _part(groups, rules))


def _read_in_month(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    month = rules.look_up("MONTHS", groups["month"])
    if month is None:
        return None
    year = today.year if month >= today.month else today.year + 1
    following = date(year + month // 12, month % 12 + 1, 1)
    return (date(year, month, 1), following - timedelta(days=1)), None


def _read_this_part(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    part = _part(groups, rules)
    return ((today, today), part) if part else None


def _read_in_n(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    count = _count(groups["n"], rules)
    unit = rules.look_up("UNITS", groups["unit"])
    if count is None or unit not in _UNIT_DAYS:
        return None
    return _one_day(today + timedelta(days=count * _UNIT_DAYS[unit]))


def _read_week(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    step = _step(groups, rules)
    if rules.look_up("UNITS", groups["unit"]) == "week":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
        return (monday, monday + timedelta(days=6)), None
    return _month(today, step), None


def _read_weekend(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    saturday = today + timedelta(days=(5 - today.weekday()) % 7)
    if _step(groups, rules) == 1:
        saturday += timedelta(weeks=1)
    return (saturday, saturday + timedelta(days=1)), None


def _read_weekday(groups: dict[str, Any], today: date, rules: Grammar) -> DayReading | None:
    target = rules.look_up("WEEKDAYS", groups["weekday"])
    if target is None:
        target = rules.look_up("WEEKDAY_ABBREVIATIONS", groups["weekday"])
    if target is None:
        return None
    step = _step(groups, rules)
    if step == -1:
        day = today - timedelta(days=(today.weekday() - target) % 7 or 7)
    else:
        # "Friday" and "next Friday" both mean the coming one; said on a
        # Friday, "Friday" means today and "next Friday" a week later.
        ahead = (target - today.weekday()) % 7
        if step == 1 and ahead == 0:
            ahead = 7
        day = today + timedelta(days=ahead)
    return _one_day(day, _part(groups, rules))


_READERS: dict[str, Callable[[dict[str, Any], date, Grammar], DayReading | None]] = {
    "iso": _read_iso, "numeric": _read_numeric, "month_day": _read_month_day, "relative": _read_relative,
    "from_base": _read_from_base, "end_of": _read_end_of, "ordinal": _read_ordinal, "in_month": _read_in_month, "this_part": _read_this_part,
    "in_n": _read_in_n, "week": _read_week, "weekend": _read_weekend, "weekday": _read_weekday,
}


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


def _read_time(groups: dict[str, Any], rules: Grammar) -> time | None:
    named = rules.look_up("NAMED_TIMES", groups.get("named"))
    if named is not None:
        return time.fromisoformat(named)
    if groups.get("h") is None:
        return None
    hour = int(groups["h"])
    minute = int(groups.get("min") or 0)
    ampm = (groups.get("ampm") or "").replace(".", "")
    # "3 de la tarde", "8 du soir": a word for the afternoon or evening is pm.
    if rules.look_up("AFTERNOON_WORDS", groups.get("pm")) is not None:
        ampm = "pm"
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    return time(hour, minute) if 0 <= hour <= 23 else None


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


def _remove(text: str, spans: list[tuple[int, int]], filler_pattern: re.Pattern[str]) -> tuple[str, str]:
    """The text without the spans (and a "due"/"on"/"at" just before them)."""
    pieces: list[str] = []
    taken: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        before = text[cursor:start]
        filler = filler_pattern.search(before)
        if filler:
            before = before[:filler.start()]
        pieces.append(before)
        taken.append(text[start:end].strip())
        cursor = end
    pieces.append(text[cursor:])
    rest = re.sub(r"\s+", " ", " ".join(pieces)).strip(" ,;:-–")
    return rest, " ".join(taken)
