"""Calendar sets (meta.json, items.jsonl, references.jsonl): loading, checking, the digest, the verdict."""
from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from resolver.evaluation.cases import (
    DEFAULT_CASES_PATH,
    STARTER_CASES_PATH,
    CalendarCase,
    CaseFileError,
    load_calendar_set,
    load_case_set,
)
from resolver.evaluation.errors import InvalidEvaluation
from tests.evaluation.calendar_set import ITEMS, META, REFERENCES, YOGA_TOMORROW, lines, write_calendar_set

BENCH_SET = Path(__file__).resolve().parents[2] / "bench" / "data" / "retrieval"


def test_load__a_good_set(tmp_path: Path) -> None:
    root = write_calendar_set(tmp_path / "set")
    case_set = load_case_set(root)
    assert (case_set.format, case_set.name, len(case_set.cases)) == ("calendar", "set", 4)
    calendar = case_set.calendar
    assert calendar is not None
    assert calendar.meta.now == datetime.fromisoformat(META["now"])
    assert (calendar.meta.time_zone, calendar.meta.horizon_days) == ("Europe/Berlin", 90)
    assert [item["uid"] for item in calendar.items] == [item["uid"] for item in ITEMS]
    assert calendar.items[3]["overrides"][0]["start"] == "2027-01-20T19:00:00+01:00"
    yoga = case_set.cases[1]
    assert isinstance(yoga, CalendarCase)
    assert (yoga.id, yoga.reference, yoga.kind, yoga.expected, yoga.tags, yoga.split) == (
        "r2", "yoga tomorrow", "event", ("e-yoga",), ("time_expression",), "heldout")
    assert yoga.expected_occurrence_start == datetime.fromisoformat(YOGA_TOMORROW)
    assert yoga.calendar is calendar
    assert case_set.cases[3].expected == ()


def test_load__the_digest_covers_all_three_files(tmp_path: Path) -> None:
    root = write_calendar_set(tmp_path / "set")
    files = {name: (root / name).read_bytes() for name in ("meta.json", "items.jsonl", "references.jsonl")}
    expected = hashlib.sha256(b"".join(f"{name}\0{len(data)}\0".encode() + data for name, data in files.items()))
    first = load_case_set(root).digest
    assert first == expected.hexdigest()
    for name in files:
        other = write_calendar_set(tmp_path / f"changed-{name}")
        (other / name).write_bytes((other / name).read_bytes() + b"\n")
        assert load_case_set(other).digest != first, name


def test_load__the_retrieval_bench_set_is_a_valid_calendar_set() -> None:
    case_set = load_case_set(BENCH_SET)
    assert case_set.format == "calendar" and len(case_set.cases) > 700
    assert sum(1 for case in case_set.cases if not case.expected) >= 8


def test_load__the_starter_set_stays_valid_and_is_the_default() -> None:
    assert DEFAULT_CASES_PATH == STARTER_CASES_PATH
    case_set = load_case_set(DEFAULT_CASES_PATH)
    assert (case_set.format, len(case_set.cases), case_set.calendar) == ("jsonl", 426, None)
    assert case_set.digest == hashlib.sha256(STARTER_CASES_PATH.read_bytes()).hexdigest()


def test_is_right__items_occurrences_and_references_to_nothing(tmp_path: Path) -> None:
    toner, yoga, mum, absent = load_case_set(write_calendar_set(tmp_path / "set")).cases
    assert toner.is_right("t-toner") and not toner.is_right("t-mum-1") and not toner.is_right(None)
    # The occurrence must be the labelled one: the same instant, in any offset.
    assert yoga.is_right("e-yoga", YOGA_TOMORROW)
    assert yoga.is_right("e-yoga", datetime.fromisoformat("2027-01-12T17:30:00+00:00"))
    assert not yoga.is_right("e-yoga", "2027-01-20T19:00:00+01:00")
    assert not yoga.is_right("e-yoga", None)
    assert not yoga.is_right("e-yoga", "2027-01-12T18:30:00")  # no offset: not an instant
    assert not yoga.is_right("e-yoga", "tomorrow")
    # Several items named: any one of them is a guess.
    # Several items named: any one of them is an error, and asking is the right answer.
    assert not mum.is_right("t-mum-1") and not mum.is_right("t-mum-2") and mum.is_right(None)
    assert absent.is_right(None) and not absent.is_right("t-toner")


BAD: list[tuple[str, Any, str, str]] = [
    # (file, replacement content, expected file and line in the message, problem)
    ("meta.json", {**META, "time_zone": "Mars/Olympus"}, "meta.json", "'Mars/Olympus' is not a known IANA zone"),
    ("meta.json", {**META, "now": "2027-01-11T09:00:00"}, "meta.json", "now must be an ISO 8601 date-time with a UTC"),
    ("meta.json", {**META, "horizon_days": 0}, "meta.json", "horizon_days must be an integer 1..3660"),
    ("meta.json", {**META, "colour": "red"}, "meta.json", "unknown fields ['colour']"),
    ("meta.json", [1, 2], "meta.json", "must be a JSON object"),
    ("items.jsonl", [*ITEMS[:2], {**ITEMS[0]}], "items.jsonl line 3", "uid 't-toner' is already used on line 1"),
    ("items.jsonl", [ITEMS[0], {**ITEMS[4], "end": ITEMS[4]["start"]}], "items.jsonl line 2",
     "an event must end after it starts"),
    ("items.jsonl", [{**ITEMS[3], "rrule": "FREQ=SOMETIMES"}], "items.jsonl line 1", "is not a recurrence rule"),
    ("items.jsonl", [{**ITEMS[0], "start": "2027-01-14T10:00:00+01:00"}], "items.jsonl line 1",
     "unknown fields ['start'] for a task"),
    ("items.jsonl", [{**ITEMS[0], "kind": "note"}], "items.jsonl line 1", "kind must be one of ['task', 'event']"),
    ("items.jsonl", [{**ITEMS[0], "title": " "}], "items.jsonl line 1", "title must be a non-empty string"),
    ("items.jsonl", [{**ITEMS[4], "exdate": ["2027-01-13T10:00:00+01:00"]}], "items.jsonl line 1",
     "exdate and overrides need an rrule"),
    ("references.jsonl", [REFERENCES[0], {**REFERENCES[0], "id": "r9", "expected": ["t-gone"]}],
     "references.jsonl line 2", "expected names 't-gone', which is not in items.jsonl"),
    ("references.jsonl", [{**REFERENCES[0], "expected": ["e-yoga"]}], "references.jsonl line 1",
     "expected names 'e-yoga', which is an event, for a task reference"),
    ("references.jsonl", [{**REFERENCES[0], "expected_occurrence_start": YOGA_TOMORROW}], "references.jsonl line 1",
     "expected_occurrence_start is for an event reference naming exactly one item"),
    ("references.jsonl", [{**REFERENCES[1], "expected_occurrence_start": "tomorrow"}], "references.jsonl line 1",
     "expected_occurrence_start must be an ISO 8601 date-time with a UTC offset"),
    ("references.jsonl", [REFERENCES[0], REFERENCES[0]], "references.jsonl line 2",
     "id 'r1' is already used on line 1"),
    ("references.jsonl", [{**REFERENCES[0], "expected": "t-toner"}], "references.jsonl line 1",
     "expected must be a list of UIDs"),
    ("references.jsonl", [{**REFERENCES[0], "confidence": 1}], "references.jsonl line 1",
     "unknown fields ['confidence']"),
    ("references.jsonl", [{k: v for k, v in REFERENCES[0].items() if k != "category"}], "references.jsonl line 1",
     "missing fields ['category']"),
    ("references.jsonl", [], "references.jsonl", "the file holds no references"),
    ("references.jsonl", [{**REFERENCES[0], "absent_type": "similar"}], "references.jsonl line 1",
     "absent_type is for a reference to nothing"),
    ("references.jsonl", [{**REFERENCES[3], "absent_type": "unknowable"}], "references.jsonl line 1",
     "absent_type is for a reference to nothing, one of ['unrelated', 'similar', 'other_kind', 'completed']"),
]


def test_load__a_reference_to_nothing_may_say_why(tmp_path: Path) -> None:
    root = write_calendar_set(tmp_path / "set", references=[*REFERENCES[:3], {**REFERENCES[3],
                                                                               "absent_type": "unrelated"}])
    assert [case.expected for case in load_case_set(root).cases][-1] == ()


@pytest.mark.parametrize(("name", "content", "where", "problem"), BAD, ids=[f"{b[0]}:{b[3][:30]}" for b in BAD])
def test_load__a_bad_file_names_the_file_line_and_problem(tmp_path: Path, name: str, content: Any, where: str,
                                                          problem: str) -> None:
    root = write_calendar_set(tmp_path / "set")
    if name == "meta.json":
        import json

        (root / name).write_text(json.dumps(content), encoding="utf-8")
    else:
        (root / name).write_text(lines(content), encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        load_calendar_set(root)
    message = str(caught.value)
    assert message.startswith(f"{where}: "), message
    assert problem in message
    assert isinstance(caught.value, InvalidEvaluation) and caught.value.exit_code == 2


def test_load__broken_json_names_its_line(tmp_path: Path) -> None:
    root = write_calendar_set(tmp_path / "set")
    (root / "items.jsonl").write_text(lines(ITEMS[:2]) + "{not json\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"^items.jsonl line 3: not valid JSON"):
        load_calendar_set(root)


def test_load__a_missing_file_is_named(tmp_path: Path) -> None:
    root = write_calendar_set(tmp_path / "set")
    (root / "references.jsonl").unlink()
    with pytest.raises(CaseFileError, match=r"^references.jsonl: missing: a calendar set holds"):
        load_case_set(root)


def test_load__a_path_that_is_nothing(tmp_path: Path) -> None:
    with pytest.raises(InvalidEvaluation, match="no such file or directory"):
        load_case_set(tmp_path / "nowhere")
