"""Checks every labelled reference file of the retrieval set; calendar b's strictly.

    .venv/bin/python bench/data/retrieval/b/check.py

For every reference of every references*.jsonl (bench/retrieval.py's
`reference_files`): ids unique across all files; kind, category, split and
calendar valid; expected uids exist in the reference's calendar, are of its
kind and live (not COMPLETED or CANCELLED); an `expected_occurrence_start`
only in a timed category and equal to a real occurrence start of the
expected event (the loader's occurrence code); an absent reference expects
nothing and, outside the first file, says its `absent_type`.

Calendar b's references also: every timed event reference (time_expression,
time_form) names its occurrence; duplicates name every live item of the
title; exact text is one live title; a paraphrase shares no word with its
target; partial and reordered words are all in the target and in no other
live item of the kind; a date_alone list has 1 to 19 items; a "similar"
absent text is no live title; a "completed" one's note names a closed item,
an "other_kind" one's a live item of the other kind. Then counts per
category, split, language and absent_type. Exit status 1 on any error.
"""
from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))

from bench import retrieval  # noqa: E402
from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM  # noqa: E402

_WORD = re.compile(r"\w+")
_STOP = frozenset("a an the to of for on in at by and or with from my our your is s".split())
# Function words of the four languages: sharing one of them is sharing nothing.
_FUNCTION = frozenset("""le la les l d de du des un une et à au aux pour avec chez en sur
el los las del y para con por una der die das den dem und für mit von zu im am an auf ein eine about""".split())
FIRST_FILE = retrieval.DATA / "references.jsonl"  # written before absent_type existed


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def main() -> int:
    errors: list[str] = []
    calendars = {}
    for name, root in retrieval.CALENDARS.items():
        meta = retrieval.load_meta(root)
        items = retrieval.load_items(root)
        calendars[name] = (meta, items, {i["uid"]: i for i in items})
    seen: Counter = Counter()
    per_file: dict[Path, list[dict]] = {}
    for path in retrieval.reference_files():
        per_file[path] = retrieval.load_references(files=[path])
        seen.update(r["id"] for r in per_file[path])
    errors += [f"id {i} appears {n} times across the reference files" for i, n in seen.items() if n > 1]

    for path, refs in per_file.items():
        for ref in refs:
            rid = f"{path.parent.name}/{path.name} {ref.get('id')}"
            name = ref["calendar"]
            if name not in calendars:
                errors.append(f"{rid}: unknown calendar {name!r}")
                continue
            meta, items, by_uid = calendars[name]
            if not ref.get("text", "").strip():
                errors.append(f"{rid}: empty text")
            if ref.get("kind") not in ("task", "event"):
                errors.append(f"{rid}: kind {ref.get('kind')!r}")
                continue
            if ref.get("category") not in retrieval.CATEGORIES:
                errors.append(f"{rid}: category {ref.get('category')!r}")
            if ref.get("split") not in retrieval.SPLITS:
                errors.append(f"{rid}: split {ref.get('split')!r}")
            expected = ref.get("expected")
            if not isinstance(expected, list):
                errors.append(f"{rid}: expected is not a list")
                continue
            for uid in expected:
                item = by_uid.get(uid)
                if item is None:
                    errors.append(f"{rid}: expected {uid} is not in calendar {name}")
                elif item["kind"] != ref["kind"]:
                    errors.append(f"{rid}: expected {uid} is a {item['kind']}, the reference a {ref['kind']}")
                elif not retrieval.is_live(item):
                    errors.append(f"{rid}: expected {uid} is {item.get('status')}, not live")
            if len(set(expected)) != len(expected):
                errors.append(f"{rid}: an expected uid repeats")
            if ref.get("category") == retrieval.ABSENT:
                if expected:
                    errors.append(f"{rid}: absent but expects {expected}")
                if path != FIRST_FILE and ref.get("absent_type") not in retrieval.ABSENT_TYPES:
                    errors.append(f"{rid}: absent_type {ref.get('absent_type')!r}")
            elif not expected:
                errors.append(f"{rid}: expects nothing but is not absent")
            elif "absent_type" in ref:
                errors.append(f"{rid}: absent_type on a {ref['category']} reference")
            if "expected_occurrence_start" in ref:
                if ref.get("category") not in retrieval.TIMED or ref["kind"] != "event" or len(expected) != 1:
                    errors.append(f"{rid}: an occurrence on a {ref.get('category')} {ref['kind']} reference")
                elif expected[0] in by_uid:
                    start = datetime.fromisoformat(ref["expected_occurrence_start"])
                    starts = [s for s, _e, _r in retrieval.occurrences(by_uid[expected[0]], meta,
                                                                        limit=MAX_OCCURRENCES_PER_ITEM)]
                    if start.tzinfo is None or start not in starts:
                        errors.append(f"{rid}: {start} is no occurrence of {expected[0]}")
            if name == "b" and path.parent == retrieval.CALENDARS["b"]:
                errors += strict(rid, ref, items, by_uid)

    b_refs = [r for path, refs in per_file.items() for r in refs if r["calendar"] == "b"]
    report(b_refs)
    for error in errors:
        print("ERROR", error)
    print(f"{sum(len(r) for r in per_file.values())} references in {len(per_file)} files; "
          f"{len(errors)} errors")
    return 1 if errors else 0


def strict(rid: str, ref: dict, items: list[dict], by_uid: dict[str, dict]) -> list[str]:
    """Calendar b's rules per category (its labels are ours to keep right)."""
    errors = []
    category, kind, text = ref["category"], ref["kind"], ref["text"]
    live = [i for i in items if i["kind"] == kind and retrieval.is_live(i)]
    expected = [by_uid[u] for u in ref["expected"] if u in by_uid]
    if ref.get("calendar") != "b":
        errors.append(f"{rid}: calendar {ref.get('calendar')!r} in b's file")
    if not re.fullmatch(r"b-\d{4}", ref["id"]):
        errors.append(f"{rid}: id is not b-NNNN")
    if ref.get("language") not in ("en", "fr", "de", "es"):
        errors.append(f"{rid}: language {ref.get('language')!r}")
    if category in ("time_expression", "time_form") and kind == "event" and "expected_occurrence_start" not in ref:
        errors.append(f"{rid}: a timed event reference without its occurrence")
    if category == "duplicates":
        titles = {i["title"].casefold() for i in expected}
        same = sorted(i["uid"] for i in live if i["title"].casefold() in titles)
        if len(titles) != 1 or len(expected) < 2 or sorted(ref["expected"]) != same:
            errors.append(f"{rid}: duplicates must list every live {kind} of one title")
    elif category == "exact":
        key = text.strip().casefold()
        if [i["uid"] for i in live if i["title"].casefold() == key] != ref["expected"]:
            errors.append(f"{rid}: exact text is not the one live title of its target")
    elif category == "synonym_paraphrase" and expected and words(text) & words(expected[0]["title"]):
        errors.append(f"{rid}: paraphrase shares {sorted(words(text) & words(expected[0]['title']))}")
    elif category in ("partial", "reordered"):
        holders = [i["uid"] for i in live if words(text) <= words(i["title"])]
        if holders != ref["expected"]:
            errors.append(f"{rid}: the words of {text!r} are in {holders[:5]}, not only the target")
    elif category == "date_alone" and not 1 <= len(ref["expected"]) <= 19:
        errors.append(f"{rid}: date_alone lists {len(ref['expected'])}")
    elif category == retrieval.ABSENT:
        absent_type = ref.get("absent_type")
        note = ref.get("note", "")
        if any(i["title"].casefold() == text.strip().casefold() for i in live):
            errors.append(f"{rid}: absent text is a live {kind}'s title")
        named = re.findall(r"\b(b[te]-[a-z0-9-]+)", note)
        if absent_type == "unrelated":
            shared = sorted({w for i in items for w in words(text) & words(i["title"])} - _FUNCTION)
            if shared:
                errors.append(f"{rid}: unrelated but shares {shared[:5]} with the calendar's titles")
        if absent_type == "completed" and not (named and named[0] in by_uid and not retrieval.is_live(by_uid[named[0]])
                                              and by_uid[named[0]]["kind"] == kind):
            errors.append(f"{rid}: completed must name a closed {kind} in its note")
        if absent_type == "other_kind" and not (named and named[0] in by_uid and by_uid[named[0]]["kind"] != kind
                                               and retrieval.is_live(by_uid[named[0]])):
            errors.append(f"{rid}: other_kind must name a live item of the other kind in its note")
    return errors


def report(refs: list[dict]) -> None:
    if not refs:
        return
    print(f"calendar b: {len(refs)} references")
    cats = Counter(r["category"] for r in refs)
    splits = defaultdict(Counter)
    for r in refs:
        splits[r["category"]][r["split"]] += 1
    for category in retrieval.CATEGORIES:
        if cats[category]:
            s = splits[category]
            print(f"  {category:20} {cats[category]:4}   test {s['test']:3}  calibrate {s['calibrate']:3}  "
                  f"train {s['train']:3}")
    print("  splits:", dict(Counter(r["split"] for r in refs)))
    print("  languages:", dict(Counter(r.get("language") for r in refs)))
    print("  kinds:", dict(Counter(r["kind"] for r in refs)))
    print("  absent types:", dict(Counter(r.get("absent_type") for r in refs if r["category"] == retrieval.ABSENT)))
    print("  timed with an occurrence:", sum(1 for r in refs if "expected_occurrence_start" in r))


if __name__ == "__main__":
    raise SystemExit(main())
