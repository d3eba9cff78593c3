"""Time-expression parsers on the labelled phrases: precision and recall of the day they read.

    .venv/bin/python bench/time_parsers.py

Compares the resolver's closed grammar (resolver/domain/timeexpr.py) with
dateparser's `search_dates`, ctparse and timefhuman, on
`bench/data/time_expressions.jsonl`: phrases with a time expression (and the
day it names) and phrases that must not become dates ("1:1 with Omar",
"May" the person, "2 bottles", "Q3", "10k run", "Sat exam prep"), reported
twice: the first set, and the forms added for issue 21 (`"set": "issue21"`:
days of the month, "a week from today", fortnights, "this coming Friday",
"the end of next week", "in February", date-alone questions, and ordinals
that are words: "the 2nd draft", "the second floor", "the 21st century"). For
a range the day compared is its first day ("end of next week": Friday). The three
libraries are optional here (`pip install dateparser ctparse timefhuman`);
a missing one is reported, not measured. The clock is the retrieval set's:
2027-01-11 09:00 Europe/Berlin, a Monday.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import date, datetime
from pathlib import Path
from typing import Callable
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver.domain.timeexpr import find_time_expression  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "time_expressions.jsonl"
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=TZ)
Reader = Callable[[str], "date | None"]


def ours(text: str) -> date | None:
    found = find_time_expression(text, now=NOW, tz=TZ)
    return found.range.start.date() if found else None


def dateparser_reader() -> Reader:
    from dateparser.search import search_dates

    settings = {"RELATIVE_BASE": NOW.replace(tzinfo=None), "PREFER_DATES_FROM": "future"}

    def read(text: str) -> date | None:
        found = search_dates(text, languages=["en"], settings=settings)
        return found[0][1].date() if found else None
    return read


def ctparse_reader() -> Reader:
    import ctparse

    def read(text: str) -> date | None:
        found = ctparse.ctparse(text, ts=NOW.replace(tzinfo=None), timeout=1.0)
        if not found or found.resolution is None:
            return None
        resolution = found.resolution
        start = getattr(resolution, "start", resolution)
        if getattr(start, "year", None) and getattr(start, "month", None) and getattr(start, "day", None):
            return date(start.year, start.month, start.day)
        return None
    return read


def timefhuman_reader() -> Reader:
    from timefhuman import timefhuman, tfhConfig

    config = tfhConfig(now=NOW.replace(tzinfo=None))

    def read(text: str) -> date | None:
        found = timefhuman(text, config=config)
        if not found:
            return None
        first = found[0]
        if isinstance(first, tuple):
            first = first[0]
        if isinstance(first, list):
            first = first[0]
        if isinstance(first, datetime):
            return first.date()
        if isinstance(first, date):
            return first
        return None
    return read


def measure(read: Reader, cases: list[dict]) -> dict[str, float | int]:
    detected = correct = false_positive = 0
    positives = sum(1 for case in cases if case["day"])
    times = []
    for case in cases:
        started = time.perf_counter()
        try:
            got = read(case["text"])
        except Exception:  # a parser that crashes on a phrase reads nothing
            got = None
        times.append((time.perf_counter() - started) * 1000)
        if got is None:
            continue
        detected += 1
        if case["day"] and got.isoformat() == case["day"]:
            correct += 1
        elif not case["day"]:
            false_positive += 1
    return {"precision": round(correct / detected, 3) if detected else 0.0,
            "recall": round(correct / positives, 3) if positives else 0.0,
            "false_dates": false_positive, "detected": detected, "median_ms": round(statistics.median(times), 3)}


def main() -> int:
    cases = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    readers: dict[str, Callable[[], Reader]] = {
        "closed grammar (ours)": lambda: ours, "dateparser.search_dates": dateparser_reader,
        "ctparse": ctparse_reader, "timefhuman": timefhuman_reader,
    }
    built: dict[str, Reader | None] = {}
    for name, build in readers.items():
        try:
            built[name] = build()
        except ImportError:
            built[name] = None
    for label, chosen in (("first set", [c for c in cases if c.get("set") != "issue21"]),
                          ("issue 21 forms", [c for c in cases if c.get("set") == "issue21"])):
        positives = sum(1 for case in chosen if case["day"])
        print(f"\n{label}: {len(chosen)} phrases, {positives} with a time expression, "
              f"{len(chosen) - positives} without\n")
        print("| parser | precision | recall | false dates | median ms |")
        print("|---|---:|---:|---:|---:|")
        for name, read in built.items():
            if read is None:
                print(f"| {name} | not installed | | | |")
                continue
            figures = measure(read, chosen)
            print(f"| {name} | {figures['precision']:.3f} | {figures['recall']:.3f} | {figures['false_dates']} "
                  f"| {figures['median_ms']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
