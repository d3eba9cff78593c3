"""A small calendar set written into a directory, in the retrieval bench's format."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

META = {"now": "2027-01-11T09:00:00+01:00", "time_zone": "Europe/Berlin", "horizon_days": 90}
ITEMS: list[dict[str, Any]] = [
    {"uid": "t-toner", "collection": "work", "kind": "task", "title": "Order toner for the printer",
     "due": "2027-01-14"},
    {"uid": "t-mum-1", "collection": "personal", "kind": "task", "title": "Call mum"},
    {"uid": "t-mum-2", "collection": "home", "kind": "task", "title": "Call mum"},
    {"uid": "e-yoga", "collection": "personal", "kind": "event", "title": "Yoga class",
     "start": "2026-09-01T18:30:00+02:00", "end": "2026-09-01T19:45:00+02:00", "rrule": "FREQ=WEEKLY;BYDAY=TU",
     "exdate": ["2027-02-16T18:30:00+01:00"],
     "overrides": [{"recurrence_id": "2027-01-19T18:30:00+01:00", "start": "2027-01-20T19:00:00+01:00",
                    "end": "2027-01-20T20:15:00+01:00"}]},
    {"uid": "e-dentist", "collection": "personal", "kind": "event", "title": "Dentist",
     "start": "2027-01-13T10:00:00+01:00", "end": "2027-01-13T10:30:00+01:00"},
]
YOGA_TOMORROW = "2027-01-12T18:30:00+01:00"
REFERENCES: list[dict[str, Any]] = [
    {"id": "r1", "text": "order toner", "kind": "task", "category": "partial", "expected": ["t-toner"],
     "split": "tune"},
    {"id": "r2", "text": "yoga tomorrow", "kind": "event", "category": "time_expression", "expected": ["e-yoga"],
     "expected_occurrence_start": YOGA_TOMORROW, "split": "heldout"},
    {"id": "r3", "text": "call mum", "kind": "task", "category": "duplicates", "expected": ["t-mum-1", "t-mum-2"]},
    {"id": "r4", "text": "buy a kayak paddle", "kind": "task", "category": "absent", "expected": [],
     "note": "nothing of the kind"},
]


def lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def write_calendar_set(root: Path, *, meta: Any = None, items: list[dict[str, Any]] | None = None,
                       references: list[dict[str, Any]] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "meta.json").write_text(json.dumps(META if meta is None else meta), encoding="utf-8")
    (root / "items.jsonl").write_text(lines(ITEMS if items is None else items), encoding="utf-8")
    (root / "references.jsonl").write_text(lines(REFERENCES if references is None else references),
                                           encoding="utf-8")
    return root
