"""Time expressions in German, French and Spanish: the resolver's grammars against dateparser.

    .venv/bin/python bench/time_languages.py [--json PATH]

On bench/data/time_expressions_i18n.jsonl (written by
bench/data/time_languages.py; clock Monday 2027-01-11 09:00 Europe/Berlin):
per language and split, how many phrases each reader reads as the expected
day (the first day of a range), how many it reads as another day (wrong), how
many date-free phrases it turns into a date (false dates), and how many
overdue questions it recognises. "resolver, english set" reads each phrase where English is configured and
the request names no language (`find_time_expression_in_any`: the other grammars where English reads none).
dateparser (`search_dates`, the phrase's
language, the same clock as RELATIVE_BASE, dates preferred in the future) is
a bench and test dependency only; it has no reading of "overdue". The median
time per phrase is printed too (never asserted).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from datetime import date, datetime
from pathlib import Path
from typing import Callable
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from resolver.domain.timeexpr import find_time_expression, find_time_expression_in_any  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "time_expressions_i18n.jsonl"
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=TZ)
CODES = {"german": "de", "french": "fr", "spanish": "es"}
OVERDUE = "overdue"


def ours(text: str, language: str) -> str | None:
    return _day(find_time_expression(text, now=NOW, tz=TZ, language=language))


def ours_unsaid(text: str, language: str) -> str | None:
    """The phrase where English is configured and the request names no language: the other grammars read it."""
    return _day(find_time_expression_in_any(text, now=NOW, tz=TZ, language="english"))


def _day(found) -> str | None:
    if found is None:
        return None
    if found.range.whole and found.range.end == NOW:
        return OVERDUE
    return found.range.start.date().isoformat()


def dateparser_reader() -> Callable[[str, str], str | None]:
    from dateparser.search import search_dates

    settings = {"RELATIVE_BASE": NOW.replace(tzinfo=None), "PREFER_DATES_FROM": "future"}

    def read(text: str, language: str) -> str | None:
        found = search_dates(text, languages=[CODES[language]], settings=settings)
        return found[0][1].date().isoformat() if found else None
    return read


def score(reader: Callable[[str, str], str | None], phrases: list[dict]) -> dict[str, float | int]:
    right = wrong = false_dates = missed = 0
    times = []
    for phrase in phrases:
        started = time.perf_counter()
        got = reader(phrase["text"], phrase["language"])
        times.append((time.perf_counter() - started) * 1000)
        expected = phrase["expected"]
        if expected is None:
            false_dates += got is not None
        elif got == expected:
            right += 1
        elif got is None:
            missed += 1
        else:
            wrong += 1
    dated = sum(1 for p in phrases if p["expected"] is not None)
    return {"phrases": len(phrases), "right": right, "wrong": wrong, "missed": missed,
            "false_dates": false_dates, "recall": round(right / dated, 3) if dated else 0.0,
            "median_ms": round(statistics.median(times), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    phrases = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    readers: dict[str, Callable[[str, str], str | None]] = {"resolver": ours, "resolver, english set": ours_unsaid}
    try:
        readers["dateparser"] = dateparser_reader()
    except ImportError:
        print("dateparser is not installed: only the resolver's grammars are measured")
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for phrase in phrases:
        for split in (phrase["split"], "all"):
            groups[(phrase["language"], split)].append(phrase)
    report: dict[str, dict] = {}
    print("| language | split | reader | phrases | right | wrong | missed | false dates | recall | median ms |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (language, split), chosen in sorted(groups.items()):
        for name, reader in readers.items():
            figures = score(reader, chosen)
            report[f"{language} {split} {name}"] = figures
            print(f"| {language} | {split} | {name} | {figures['phrases']} | {figures['right']} | {figures['wrong']} "
                  f"| {figures['missed']} | {figures['false_dates']} | {figures['recall']:.3f} "
                  f"| {figures['median_ms']:.3f} |")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
