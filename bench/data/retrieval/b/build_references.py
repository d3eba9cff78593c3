"""Writes references.jsonl of calendar b from the hand-written lines in references.txt.

    .venv/bin/python bench/data/retrieval/b/build_references.py

Every reference is written by hand in references.txt, one a line:

    category | kind | text | target | options

`target` is the exact title of the one live item meant (or `-` for none);
the script finds its uid, so that a label is never typed twice. Options,
separated by spaces:

    uid=UID            the target when several live items share its title (or `on=` tells them apart)
    on=YYYY-MM-DD      the event occurrence meant starts that day (local)
    at=HH:MM           ... at that time, when the day has several
    next               the event's first live occurrence (a timed reference without a day)
    from=DATE to=DATE  date_alone: every live item of the kind due (task) or starting (event) in [from, to]
    coll=C,D           date_alone: only these collections
    absent=TYPE        absent: unrelated | similar | other_kind | completed
    closed=TITLE       absent/completed: the COMPLETED task or CANCELLED event named
    other=TITLE        absent/other_kind: the live item of the other kind named
    lang=xx            the reference's language (en by default; de, fr, es)
    note=...           the rest of the line is a note

`expected_occurrence_start` is computed with the loader's occurrence code
(bench/retrieval.py), never typed. Ids are b-0001... in the file's order, and
the split is fixed by the reference's place among its category's references
(k = 0, 1, ...): k % 10 in 0, 2, 4, 6, 8 -> test; 1, 3, 5, 7 -> calibrate;
9 -> train (50 / 40 / 10 per category). Lines are only appended, so an
existing reference keeps its id and split.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))

from bench import retrieval  # noqa: E402
from resolver.domain.items import MAX_OCCURRENCES_PER_ITEM  # noqa: E402

SPLIT_OF = {0: "test", 2: "test", 4: "test", 6: "test", 8: "test", 1: "calibrate", 3: "calibrate",
            5: "calibrate", 7: "calibrate", 9: "train"}


def split_for(k: int) -> str:
    return SPLIT_OF[k % 10]


def parse_options(raw: str) -> dict[str, str]:
    options: dict[str, str] = {}
    rest = raw.strip()
    if "note=" in rest:
        rest, note = rest.split("note=", 1)
        options["note"] = note.strip()
    for token in rest.split():
        if token == "next":
            options["next"] = "1"
            continue
        key, _, value = token.partition("=")
        options[key] = value.replace("_", " ") if key in ("closed", "other") else value
    return options


def build() -> list[dict]:
    root = retrieval.CALENDARS["b"]
    meta = retrieval.load_meta(root)
    items = retrieval.load_items(root)
    live = [i for i in items if retrieval.is_live(i)]
    by_title: dict[tuple[str, str], list[dict]] = {}
    for item in live:
        by_title.setdefault((item["kind"], item["title"]), []).append(item)
    closed = {(i["kind"], i["title"]): i for i in items if not retrieval.is_live(i)}
    by_uid = {i["uid"]: i for i in items}
    per_category: Counter = Counter()
    refs = []
    errors = []
    for n, line in enumerate((HERE / "references.txt").read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 4:
            errors.append(f"line {n}: {line!r}: want category | kind | text | target [| options]")
            continue
        category, kind, text, target = parts[:4]
        options = parse_options(parts[4] if len(parts) > 4 else "")
        ref: dict = {"id": "", "text": text, "kind": kind, "category": category, "expected": []}
        try:
            if category == retrieval.ABSENT:
                ref["absent_type"] = options["absent"]
                if "closed" in options:
                    gone = closed[(kind, options["closed"])]
                    ref["note"] = f"names {gone['uid']} ({gone['status']}), not live"
                if "other" in options:
                    other = "event" if kind == "task" else "task"
                    (there,) = by_title[(other, options["other"])]
                    ref["note"] = f"exists only as the {other} {there['uid']}"
            elif category == "date_alone":
                lo, hi = date.fromisoformat(options["from"]), date.fromisoformat(options.get("to", options["from"]))
                colls = set(options["coll"].split(",")) if "coll" in options else None
                chosen = []
                for item in live:
                    if item["kind"] != kind or (colls and item["collection"] not in colls):
                        continue
                    if kind == "task":
                        if item.get("due") and lo <= date.fromisoformat(item["due"][:10]) <= hi:
                            chosen.append(item["uid"])
                    elif any(lo <= s.date() <= hi for s, _e, _r in
                             retrieval.occurrences(item, meta, limit=MAX_OCCURRENCES_PER_ITEM)):
                        chosen.append(item["uid"])
                if not 1 <= len(chosen) <= 19:
                    raise ValueError(f"date_alone lists {len(chosen)} items")
                ref["expected"] = chosen
            elif category == "duplicates":
                same = by_title[(kind, target)]
                if len(same) < 2:
                    raise ValueError("duplicates wants a title held by several live items")
                ref["expected"] = [i["uid"] for i in same]
            else:
                if "uid" in options:
                    item = by_uid[options["uid"]]
                    if item["title"] != target or not retrieval.is_live(item):
                        raise ValueError(f"uid {options['uid']} is not the live {target!r}")
                else:
                    matches = by_title[(kind, target)]
                    if len(matches) > 1 and kind == "event" and "on" in options:
                        # Same title: the one with an occurrence that day.
                        day = date.fromisoformat(options["on"])
                        matches = [m for m in matches if any(
                            s.date() == day for s, _e, _r in
                            retrieval.occurrences(m, meta, limit=MAX_OCCURRENCES_PER_ITEM))]
                    if len(matches) != 1:
                        raise ValueError(f"{len(matches)} live {kind}s titled {target!r}: give uid=")
                    (item,) = matches
                ref["expected"] = [item["uid"]]
                if kind == "event" and ("on" in options or "next" in options):
                    spans = retrieval.occurrences(item, meta, limit=MAX_OCCURRENCES_PER_ITEM)
                    if "on" in options:
                        day = date.fromisoformat(options["on"])
                        spans = [s for s in spans if s[0].date() == day
                                 and ("at" not in options or s[0].strftime("%H:%M") == options["at"])]
                        if len(spans) != 1:
                            raise ValueError(f"{len(spans)} occurrences of {target!r} on {day}")
                    ref["expected_occurrence_start"] = spans[0][0].isoformat()
        except (KeyError, ValueError) as error:
            errors.append(f"line {n}: {line!r}: {type(error).__name__} {error}")
            continue
        if options.get("note"):
            ref["note"] = options["note"] if "note" not in ref else f"{ref['note']}; {options['note']}"
        ref["language"] = options.get("lang", "en")
        ref["split"] = split_for(per_category[category])
        per_category[category] += 1
        ref["calendar"] = "b"
        refs.append(ref)
    if errors:
        raise SystemExit("\n".join(errors))
    for k, ref in enumerate(refs, start=1):
        ref["id"] = f"b-{k:04d}"
    return refs


def main() -> None:
    refs = build()
    with open(HERE / "references.jsonl", "w", encoding="utf-8") as out:
        for ref in refs:
            out.write(json.dumps(ref, ensure_ascii=False) + "\n")
    print(f"{len(refs)} references: {dict(Counter(r['category'] for r in refs))}")


if __name__ == "__main__":
    main()
