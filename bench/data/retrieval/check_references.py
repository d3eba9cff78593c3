"""Check labelled references against the retrieval set's items: exits non-zero listing every problem.

    .venv/bin/python bench/data/retrieval/check_references.py bench/data/retrieval/references_a2.jsonl
    .venv/bin/python bench/data/retrieval/check_references.py --items other_items.jsonl --calendar b refs_b.jsonl

Each file given is read as JSON lines. A reference is checked against the
items (items.jsonl beside this script unless --items) when its `calendar`
field is missing or equals --calendar ("a" by default); references of another
calendar are counted and left alone. Checks:

- ids unique across all files; text non-empty; category known (bench/retrieval.py's CATEGORIES);
- `absent`: expected empty and an `absent_type` of unrelated / similar / other_kind;
  every other category: expected non-empty, each uid an existing item of the
  reference's kind, no uid twice, an event live (an occurrence in now..now+horizon);
  one expected item except in the list categories (duplicates, date_alone);
- `expected_occurrence_start`, when present: an event reference with one
  expected item, and the start of one of that item's live occurrences (same instant);
- `exact`: the text is an expected item's title (case and outer spaces aside);
- split: one of --splits (test, calibrate, train by default); `lang`, when present: en, de, fr or es.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent.parent.parent))

from bench import retrieval  # noqa: E402

ABSENT_TYPES = ("unrelated", "similar", "other_kind")
LANGS = ("en", "de", "fr", "es")
DEFAULT_SPLITS = ("test", "calibrate", "train")


def _lines(path: Path) -> list[tuple[int, dict | None, str | None]]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                rows.append((number, None, f"not JSON: {error}"))
                continue
            if not isinstance(value, dict):
                rows.append((number, None, "not a JSON object"))
                continue
            rows.append((number, value, None))
    return rows


def check(paths: list[Path], items: list[dict], meta: retrieval.Meta, *, calendar: str,
          splits: tuple[str, ...]) -> tuple[list[str], int, int]:
    """(problems, references checked, references of another calendar skipped)."""
    by_uid = {item["uid"]: item for item in items}
    live: dict[str, list[datetime]] = {}
    for item in items:
        if item["kind"] == "event":
            live[item["uid"]] = [start for start, _end, _rid in retrieval.occurrences(item, meta, limit=10_000)]
    problems: list[str] = []
    seen: dict[str, str] = {}
    checked = skipped = 0
    for path in paths:
        for number, ref, error in _lines(path):
            where = f"{path.name}:{number}"
            if error:
                problems.append(f"{where}: {error}")
                continue
            rid = ref.get("id")
            where = f"{where} {rid}"
            if not isinstance(rid, str) or not rid:
                problems.append(f"{where}: no id")
            elif rid in seen:
                problems.append(f"{where}: id also at {seen[rid]}")
            else:
                seen[rid] = where
            if ref.get("calendar", calendar) != calendar:
                skipped += 1
                continue
            checked += 1
            problems.extend(f"{where}: {p}" for p in _check_one(ref, by_uid, live, splits))
    return problems, checked, skipped


def _check_one(ref: dict, by_uid: dict, live: dict, splits: tuple[str, ...]) -> list[str]:
    out = []
    text, kind, category = ref.get("text"), ref.get("kind"), ref.get("category")
    expected = ref.get("expected")
    if not isinstance(text, str) or not text.strip():
        out.append("empty text")
    if kind not in ("task", "event"):
        out.append(f"kind {kind!r} is not task or event")
    if category not in retrieval.CATEGORIES:
        out.append(f"category {category!r} unknown")
    if ref.get("split") not in splits:
        out.append(f"split {ref.get('split')!r} not one of {', '.join(splits)}")
    if "lang" in ref and ref["lang"] not in LANGS:
        out.append(f"lang {ref['lang']!r} not one of {', '.join(LANGS)}")
    if not isinstance(expected, list) or not all(isinstance(u, str) for u in expected):
        return out + ["expected is not a list of uids"]
    if category == retrieval.ABSENT:
        if expected:
            out.append("absent but expects items")
        if ref.get("absent_type") not in ABSENT_TYPES:
            out.append(f"absent_type {ref.get('absent_type')!r} not one of {', '.join(ABSENT_TYPES)}")
        if "expected_occurrence_start" in ref:
            out.append("absent but names an occurrence")
        return out
    if "absent_type" in ref:
        out.append("absent_type on a reference that is not absent")
    if not expected:
        return out + ["expects nothing but is not absent"]
    if len(set(expected)) != len(expected):
        out.append("an expected uid twice")
    if len(expected) > 1 and category not in retrieval.LISTS:
        out.append(f"{len(expected)} expected items in category {category} (only {', '.join(retrieval.LISTS)} list several)")
    for uid in expected:
        item = by_uid.get(uid)
        if item is None:
            out.append(f"expected {uid} is no item")
            continue
        if item["kind"] != kind:
            out.append(f"expected {uid} is a {item['kind']}, the reference a {kind}")
        if item["kind"] == "event" and not live.get(uid):
            out.append(f"expected {uid} has no occurrence in the horizon")
    if category == "exact":
        titles = {by_uid[u]["title"].strip().casefold() for u in expected if u in by_uid}
        if isinstance(text, str) and text.strip().casefold() not in titles:
            out.append("exact but the text is not the expected title")
    occurrence = ref.get("expected_occurrence_start")
    if occurrence is not None:
        if kind != "event" or len(expected) != 1:
            out.append("expected_occurrence_start on a reference that is not to one event")
        else:
            try:
                moment = datetime.fromisoformat(occurrence)
            except (TypeError, ValueError):
                out.append(f"expected_occurrence_start {occurrence!r} is not ISO")
            else:
                if moment.tzinfo is None:
                    out.append("expected_occurrence_start has no offset")
                elif moment not in live.get(expected[0], []):
                    out.append(f"expected_occurrence_start {occurrence} is no live occurrence of {expected[0]}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("references", nargs="+", type=Path)
    parser.add_argument("--items", type=Path, default=ROOT / "items.jsonl")
    parser.add_argument("--meta", type=Path, default=ROOT / "meta.json")
    parser.add_argument("--calendar", default="a")
    parser.add_argument("--splits", default=",".join(DEFAULT_SPLITS),
                        help="comma-separated split names allowed (default: %(default)s)")
    args = parser.parse_args(argv)
    items = retrieval._jsonl(args.items)
    meta = retrieval.load_meta(args.meta.parent) if args.meta.name == "meta.json" else None
    if meta is None:
        parser.error("--meta must name a meta.json")
    problems, checked, skipped = check(args.references, items, meta, calendar=args.calendar,
                                       splits=tuple(s for s in args.splits.split(",") if s))
    for problem in problems:
        print(problem)
    print(f"{checked} references checked against {args.items.name} (calendar {args.calendar}), "
          f"{skipped} of another calendar skipped, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
