"""The labelled case sets, checked line by line on load.

Two formats:

- a JSON Lines file (the starter set): a case is a reference, the candidate
  pool the model is shown, and the answer a human labeller gave: a candidate
  number (1-based) or "no_match";
- a calendar set, a directory holding `meta.json`, `items.jsonl` and
  `references.jsonl` (the format of the retrieval bench): a reference is
  resolved against the whole calendar, and its label is the UIDs it means
  ([] for a reference to nothing) and, for a timed event reference, the start
  of the occurrence it means.

A set's sha256 digest goes into every evaluation report, so an approved
threshold names exactly the cases that earned it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import rrulestr

from resolver.domain.errors import InvalidRequest
from resolver.evaluation.errors import InvalidEvaluation

DATA_DIR = Path(__file__).resolve().parent / "data"
STARTER_CASES_PATH = DATA_DIR / "starter.jsonl"
# The set `--cases` reads when none is named: the one the package ships (a judge's: candidate lists).
DEFAULT_CASES_PATH = STARTER_CASES_PATH
# The built-in ranker's: the labelled set's calibration split over the whole calendars of two people
# (bench/relevance.py --write-cases), the data its threshold is certified on.
RANKER_CASES_PATH = DATA_DIR / "reference_match"

NO_MATCH = "no_match"
KINDS = ("task", "event")
MIN_CANDIDATES = 2
MAX_CANDIDATES = 19  # the pipeline never shows Jev more than this
TAGS = (
    "paraphrase",
    "partial",
    "typo",
    "near_duplicate",
    "no_match",
    "multilingual",
    "numbers_in_text",
    "abbreviation",
)
_CASE_KEYS = frozenset({"id", "reference", "kind", "candidates", "expected", "tags"})
# Which date a candidate carries follows the item: tasks are due, events start.
_WHEN_KEY = {"task": "due", "event": "start"}


class CaseFileError(InvalidRequest, InvalidEvaluation):
    """A line of a case file is not a valid case; the message names the line."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        where = f"{path.name} line {line}" if line is not None else path.name
        super().__init__(f"{where}: {problem}", details={"path": str(path), "line": line})
        self.line = line


@dataclass(frozen=True)
class Case:
    id: str
    reference: str
    kind: str  # "task" or "event"
    candidates: tuple[dict[str, Any], ...]  # candidate number n is candidates[n - 1]
    expected: int | str  # a candidate number, or "no_match"
    tags: tuple[str, ...]


def _is_iso_datetime(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _candidate_problem(kind: str, number: int, candidate: Any) -> str | None:
    if not isinstance(candidate, dict):
        return f"candidate {number} is not an object"
    when_key = _WHEN_KEY[kind]
    other_key = _WHEN_KEY["event" if kind == "task" else "task"]
    allowed = {"title", "collection", "status", when_key}
    unknown = sorted(set(candidate) - allowed)
    if other_key in candidate:
        return f"candidate {number} has {other_key!r}, but {kind}s carry {when_key!r}"
    if unknown:
        return f"candidate {number} has unknown fields {unknown}"
    title = candidate.get("title")
    if not isinstance(title, str) or not title.strip():
        return f"candidate {number} needs a non-empty title"
    if not isinstance(candidate.get("collection"), str) or not candidate["collection"].strip():
        return f"candidate {number} needs a collection"
    if "status" not in candidate or not isinstance(candidate["status"], (str, type(None))):
        return f"candidate {number} needs a status (a string or null)"
    if when_key not in candidate:
        return f"candidate {number} needs {when_key!r}"
    when = candidate[when_key]
    # A task may have no due date; an event always has a start.
    if when is None and kind == "task":
        return None
    if not _is_iso_datetime(when):
        return f"candidate {number} {when_key!r} is not an ISO 8601 date or date-time: {when!r}"
    return None


def _case_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "a case must be a JSON object"
    missing = sorted(_CASE_KEYS - set(data))
    unknown = sorted(set(data) - _CASE_KEYS)
    if missing:
        return f"missing fields {missing}"
    if unknown:
        return f"unknown fields {unknown}"
    if not isinstance(data["id"], str) or not data["id"].strip():
        return "id must be a non-empty string"
    if not isinstance(data["reference"], str) or not data["reference"].strip():
        return "reference must be a non-empty string"
    kind = data["kind"]
    if kind not in KINDS:
        return f"kind must be one of {list(KINDS)}, got {kind!r}"
    candidates = data["candidates"]
    if not isinstance(candidates, list) or not MIN_CANDIDATES <= len(candidates) <= MAX_CANDIDATES:
        count = len(candidates) if isinstance(candidates, list) else "no list of"
        return f"candidates must be a list of {MIN_CANDIDATES} to {MAX_CANDIDATES}, got {count}"
    for number, candidate in enumerate(candidates, start=1):
        problem = _candidate_problem(kind, number, candidate)
        if problem:
            return problem
    expected = data["expected"]
    # bool is an int in Python; `true` is never a candidate number.
    is_number = isinstance(expected, int) and not isinstance(expected, bool)
    if not (expected == NO_MATCH or (is_number and 1 <= expected <= len(candidates))):
        return f"expected must be a candidate number 1..{len(candidates)} or {NO_MATCH!r}, got {expected!r}"
    tags = data["tags"]
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return "tags must be a list of strings"
    unknown_tags = sorted(set(tags) - set(TAGS))
    if unknown_tags:
        return f"unknown tags {unknown_tags}; known tags are {list(TAGS)}"
    if len(set(tags)) != len(tags):
        return "tags repeat"
    if (expected == NO_MATCH) != (NO_MATCH in tags):
        return f"a case is tagged {NO_MATCH!r} exactly when its expected answer is {NO_MATCH!r}"
    return None


def parse_case(data: Any) -> Case:
    """One case from its decoded JSON; raises ValueError naming the problem."""
    problem = _case_problem(data)
    if problem:
        raise ValueError(problem)
    return Case(
        id=data["id"],
        reference=data["reference"],
        kind=data["kind"],
        candidates=tuple(dict(candidate) for candidate in data["candidates"]),
        expected=data["expected"],
        tags=tuple(data["tags"]),
    )


def load_cases(path: Path | str) -> list[Case]:
    """Every case in a JSON Lines file, in file order. Blank lines are skipped.

    Raises CaseFileError on the first bad line, naming the line number.
    """
    path = Path(path)
    cases: list[Case] = []
    first_seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as lines:
        for line_number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as err:
                raise CaseFileError(path, line_number, f"not valid JSON ({err.msg})") from err
            try:
                case = parse_case(data)
            except ValueError as err:
                raise CaseFileError(path, line_number, str(err)) from err
            if case.id in first_seen:
                raise CaseFileError(
                    path, line_number, f"id {case.id!r} is already used on line {first_seen[case.id]}"
                )
            first_seen[case.id] = line_number
            cases.append(case)
    if not cases:
        raise CaseFileError(path, None, "the file holds no cases")
    return cases


def cases_digest(path: Path | str) -> str:
    """sha256 (hex) of the file's bytes: the identity of a case set in reports."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# -- calendar sets ---------------------------------------------------------------------------

META_FILE = "meta.json"
ITEMS_FILE = "items.jsonl"
REFERENCES_FILE = "references.jsonl"
CALENDAR_FILES = (META_FILE, ITEMS_FILE, REFERENCES_FILE)
# A set bigger than this is not a labelled set someone wrote; refuse it before reading it all.
MAX_CALENDAR_FILE_BYTES = 32 * 1024 * 1024
MAX_HORIZON_DAYS = 3660

_META_KEYS = frozenset({"now", "time_zone", "horizon_days"})
# Written by the set's generator, read by nobody here.
_META_OPTIONAL = frozenset({"heldout_share", "seed", "description"})
_TASK_KEYS = frozenset({"uid", "collection", "kind", "title", "due", "status"})
_EVENT_KEYS = frozenset({"uid", "collection", "kind", "title", "start", "end", "rrule", "exdate", "overrides",
                         "status"})
# An item with one of these is not live: in the calendar, never a candidate (the reader drops it too).
CLOSED_STATUSES = frozenset({"COMPLETED", "CANCELLED"})
_OVERRIDE_KEYS = frozenset({"recurrence_id", "start", "end"})
_REFERENCE_KEYS = frozenset({"id", "text", "kind", "category", "expected"})
_REFERENCE_OPTIONAL = frozenset({"expected_occurrence_start", "split", "note", "absent_type"})
# Why a reference names nothing (a label's comment, read by the retrieval bench; the certificate ignores it).
ABSENT_TYPES = ("unrelated", "similar", "other_kind", "completed")
_ARTICLE = {"task": "a task", "event": "an event"}


@dataclass(frozen=True)
class CalendarMeta:
    now: datetime  # the reference clock: "tomorrow" is read from here
    time_zone: str
    horizon_days: int  # events are live from now to now + horizon


@dataclass(frozen=True)
class CalendarSet:
    """A whole calendar and its labelled references; the items are the raw JSON objects of items.jsonl.

    A scorer turns `items` into its own calendar (the retrieval bench's
    `memory_items` builds `resolver.domain.items.Item`s from exactly these).
    """

    root: Path
    meta: CalendarMeta
    items: tuple[dict[str, Any], ...] = field(repr=False)
    digest: str

    @property
    def uids(self) -> frozenset[str]:
        return frozenset(item["uid"] for item in self.items)


@dataclass(frozen=True)
class CalendarCase:
    """One labelled reference of a calendar set, resolved against the whole calendar."""

    id: str
    reference: str
    kind: str  # "task" or "event"
    expected: tuple[str, ...]  # the UIDs it means; () for a reference to nothing
    expected_occurrence_start: datetime | None  # a timed event reference: the occurrence it means
    category: str
    split: str | None
    tags: tuple[str, ...]  # (category,): what accuracy by tag groups on
    calendar: CalendarSet = field(repr=False, compare=False)

    def is_right(self, uid: str | None, occurrence_start: datetime | str | None = None) -> bool:
        """Whether resolving this reference to `uid` (None: to nothing) is right.

        Right means: a reference to nothing resolved to nothing; or a reference
        to exactly one item resolved to that item and, when the label names an
        occurrence, to that occurrence (same instant). A reference naming
        several items (duplicates, "what is due on Friday") is ambiguous: any
        single item is an error, and asking the person (None) is right.
        """
        if uid is None:
            return len(self.expected) != 1
        if len(self.expected) != 1 or uid != self.expected[0]:
            return False
        if self.expected_occurrence_start is None:
            return True
        if isinstance(occurrence_start, str):
            try:
                occurrence_start = datetime.fromisoformat(occurrence_start)
            except ValueError:
                return False
        if occurrence_start is None or occurrence_start.tzinfo is None:
            return False
        return occurrence_start == self.expected_occurrence_start


@dataclass(frozen=True)
class CaseSet:
    """A loaded case set of either format, with what a report says about it."""

    path: Path
    format: str  # "jsonl" or "calendar"
    cases: tuple[Case, ...] | tuple[CalendarCase, ...]
    digest: str
    calendar: CalendarSet | None = None

    @property
    def name(self) -> str:
        return self.path.name


def _aware_datetime(value: Any) -> datetime | None:
    """An ISO 8601 date-time with a UTC offset, or None."""
    if not isinstance(value, str) or len(value) <= 10:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _date_or_aware(value: Any) -> bool:
    if isinstance(value, str) and len(value) == 10:
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return True
    return _aware_datetime(value) is not None


def _nonempty(data: dict[str, Any], key: str) -> bool:
    return isinstance(data.get(key), str) and bool(data[key].strip())


def _read_limited(path: Path) -> bytes:
    if not path.is_file():
        raise CaseFileError(path, None, "missing: a calendar set holds meta.json, items.jsonl and references.jsonl")
    if path.stat().st_size > MAX_CALENDAR_FILE_BYTES:
        raise CaseFileError(path, None, f"larger than {MAX_CALENDAR_FILE_BYTES // (1024 * 1024)} MiB")
    return path.read_bytes()


def _meta_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "must be a JSON object"
    missing = sorted(_META_KEYS - set(data))
    unknown = sorted(set(data) - _META_KEYS - _META_OPTIONAL)
    if missing:
        return f"missing fields {missing}"
    if unknown:
        return f"unknown fields {unknown}"
    if _aware_datetime(data["now"]) is None:
        return f"now must be an ISO 8601 date-time with a UTC offset, got {data['now']!r}"
    if not isinstance(data["time_zone"], str) or not data["time_zone"]:
        return "time_zone must be an IANA zone name"
    try:
        ZoneInfo(data["time_zone"])
    except (ZoneInfoNotFoundError, ValueError):
        return f"time_zone {data['time_zone']!r} is not a known IANA zone"
    days = data["horizon_days"]
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_HORIZON_DAYS:
        return f"horizon_days must be an integer 1..{MAX_HORIZON_DAYS}, got {days!r}"
    return None


def _event_problem(data: dict[str, Any]) -> str | None:
    start, end = _aware_datetime(data.get("start")), _aware_datetime(data.get("end"))
    if start is None or end is None:
        return "an event needs start and end, ISO 8601 date-times with a UTC offset"
    if end <= start:
        return "an event must end after it starts"
    rrule = data.get("rrule")
    if rrule is not None:
        if not isinstance(rrule, str) or not rrule.strip():
            return "rrule must be a non-empty string"
        try:
            rrulestr(rrule, dtstart=start.replace(tzinfo=None))
        except (ValueError, TypeError) as err:
            return f"rrule {rrule!r} is not a recurrence rule ({err})"
    elif "exdate" in data or "overrides" in data:
        return "exdate and overrides need an rrule"
    exdate = data.get("exdate", [])
    if not isinstance(exdate, list) or not all(_aware_datetime(value) for value in exdate):
        return "exdate must be a list of ISO 8601 date-times with a UTC offset"
    overrides = data.get("overrides", [])
    if not isinstance(overrides, list):
        return "overrides must be a list"
    for number, override in enumerate(overrides, start=1):
        if not isinstance(override, dict) or set(override) != _OVERRIDE_KEYS:
            return f"override {number} must hold exactly {sorted(_OVERRIDE_KEYS)}"
        times = [_aware_datetime(override[key]) for key in ("recurrence_id", "start", "end")]
        if any(value is None for value in times):
            return f"override {number}: times must be ISO 8601 date-times with a UTC offset"
        if times[2] <= times[1]:
            return f"override {number} must end after it starts"
    return None


def _item_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "an item must be a JSON object"
    kind = data.get("kind")
    if kind not in KINDS:
        return f"kind must be one of {list(KINDS)}, got {kind!r}"
    allowed = _TASK_KEYS if kind == "task" else _EVENT_KEYS
    unknown = sorted(set(data) - allowed)
    if unknown:
        return f"unknown fields {unknown} for a {kind}"
    for key in ("uid", "collection", "title"):
        if not _nonempty(data, key):
            return f"{key} must be a non-empty string"
    if "status" in data and not isinstance(data["status"], str):
        return "status must be a string (COMPLETED or CANCELLED: not live)"
    if kind == "task":
        due = data.get("due")
        if due is not None and not _date_or_aware(due):
            return f"due must be an ISO 8601 date or a date-time with a UTC offset, got {due!r}"
        return None
    return _event_problem(data)


def _reference_problem(data: Any, kinds: dict[str, str]) -> str | None:
    if not isinstance(data, dict):
        return "a reference must be a JSON object"
    missing = sorted(_REFERENCE_KEYS - set(data))
    unknown = sorted(set(data) - _REFERENCE_KEYS - _REFERENCE_OPTIONAL)
    if missing:
        return f"missing fields {missing}"
    if unknown:
        return f"unknown fields {unknown}"
    for key in ("id", "text", "category"):
        if not _nonempty(data, key):
            return f"{key} must be a non-empty string"
    kind = data["kind"]
    if kind not in KINDS:
        return f"kind must be one of {list(KINDS)}, got {kind!r}"
    expected = data["expected"]
    if not isinstance(expected, list) or not all(isinstance(uid, str) for uid in expected):
        return "expected must be a list of UIDs ([] for a reference to nothing)"
    if len(set(expected)) != len(expected):
        return "expected repeats a UID"
    for uid in expected:
        if uid not in kinds:
            return f"expected names {uid!r}, which is not in items.jsonl"
        if kinds[uid] != kind:
            return f"expected names {uid!r}, which is {_ARTICLE[kinds[uid]]}, for {_ARTICLE[kind]} reference"
    if "expected_occurrence_start" in data:
        if kind != "event" or len(expected) != 1:
            return "expected_occurrence_start is for an event reference naming exactly one item"
        if _aware_datetime(data["expected_occurrence_start"]) is None:
            return "expected_occurrence_start must be an ISO 8601 date-time with a UTC offset"
    for key in ("split", "note"):
        if key in data and not isinstance(data[key], str):
            return f"{key} must be a string"
    if "absent_type" in data and (expected or data["absent_type"] not in ABSENT_TYPES):
        return f"absent_type is for a reference to nothing, one of {list(ABSENT_TYPES)}"
    return None


def _jsonl_records(path: Path, raw: bytes) -> list[tuple[int, Any]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise CaseFileError(path, None, f"not UTF-8 ({err.reason})") from err
    records = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((line_number, json.loads(line)))
        except json.JSONDecodeError as err:
            raise CaseFileError(path, line_number, f"not valid JSON ({err.msg})") from err
    return records


def calendar_set_digest(files: dict[str, bytes]) -> str:
    """sha256 over the three files, each as its name, its length and its bytes: one set, one digest."""
    digest = hashlib.sha256()
    for name in CALENDAR_FILES:
        data = files[name]
        digest.update(f"{name}\0{len(data)}\0".encode("ascii"))
        digest.update(data)
    return digest.hexdigest()


def _calendar_sets(root: Path) -> CaseSet:
    """Several calendar sets, one per folder: their cases in folder order, one digest over theirs."""
    folders = sorted(child for child in root.iterdir() if child.is_dir() and (child / META_FILE).exists())
    if not folders:
        raise CaseFileError(root / META_FILE, None, "no calendar set here: no meta.json, nor folders holding one")
    cases: list[CalendarCase] = []
    digests = []
    seen: dict[str, Path] = {}
    for folder in folders:
        calendar, found = load_calendar_set(folder)
        for case in found:
            if case.id in seen:
                raise CaseFileError(folder / REFERENCES_FILE, None,
                                    f"id {case.id!r} is already used in {seen[case.id].name}")
            seen[case.id] = folder
        cases += found
        digests.append(f"{folder.name}:{calendar.digest}")
    digest = hashlib.sha256("\n".join(digests).encode("utf-8")).hexdigest()
    return CaseSet(path=root, format="calendar", cases=tuple(cases), digest=digest)


def load_calendar_set(root: Path | str) -> tuple[CalendarSet, list[CalendarCase]]:
    """A calendar set directory: its calendar and its references, checked line by line.

    Raises CaseFileError (an InvalidEvaluation) naming the file and line of the first problem.
    """
    root = Path(root)
    files = {name: _read_limited(root / name) for name in CALENDAR_FILES}
    meta_path = root / META_FILE
    try:
        meta_data = json.loads(files[META_FILE].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CaseFileError(meta_path, None, f"not valid JSON ({err})") from err
    problem = _meta_problem(meta_data)
    if problem:
        raise CaseFileError(meta_path, None, problem)
    meta = CalendarMeta(now=datetime.fromisoformat(meta_data["now"]), time_zone=meta_data["time_zone"],
                        horizon_days=meta_data["horizon_days"])

    items_path = root / ITEMS_FILE
    items: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    for line_number, data in _jsonl_records(items_path, files[ITEMS_FILE]):
        problem = _item_problem(data)
        if problem:
            raise CaseFileError(items_path, line_number, problem)
        if data["uid"] in first_seen:
            raise CaseFileError(items_path, line_number,
                                f"uid {data['uid']!r} is already used on line {first_seen[data['uid']]}")
        first_seen[data["uid"]] = line_number
        kinds[data["uid"]] = data["kind"]
        items.append(data)
    if not items:
        raise CaseFileError(items_path, None, "the file holds no items")
    calendar = CalendarSet(root=root, meta=meta, items=tuple(items), digest=calendar_set_digest(files))

    references_path = root / REFERENCES_FILE
    cases: list[CalendarCase] = []
    first_seen = {}
    for line_number, data in _jsonl_records(references_path, files[REFERENCES_FILE]):
        problem = _reference_problem(data, kinds)
        if problem:
            raise CaseFileError(references_path, line_number, problem)
        if data["id"] in first_seen:
            raise CaseFileError(references_path, line_number,
                                f"id {data['id']!r} is already used on line {first_seen[data['id']]}")
        first_seen[data["id"]] = line_number
        occurrence = data.get("expected_occurrence_start")
        cases.append(CalendarCase(
            id=data["id"], reference=data["text"], kind=data["kind"], expected=tuple(data["expected"]),
            expected_occurrence_start=datetime.fromisoformat(occurrence) if occurrence else None,
            category=data["category"], split=data.get("split"), tags=(data["category"],), calendar=calendar,
        ))
    if not cases:
        raise CaseFileError(references_path, None, "the file holds no references")
    return calendar, cases


def load_case_set(path: Path | str) -> CaseSet:
    """A case set of either format: a directory is a calendar set (or a directory of them, each in its own
    folder, read in name order), a file is JSON Lines cases."""
    path = Path(path)
    if path.is_dir():
        if not (path / META_FILE).exists():
            return _calendar_sets(path)
        calendar, calendar_cases = load_calendar_set(path)
        return CaseSet(path=path, format="calendar", cases=tuple(calendar_cases), digest=calendar.digest,
                       calendar=calendar)
    if not path.is_file():
        raise InvalidEvaluation(f"--cases {path}: no such file or directory")
    return CaseSet(path=path, format="jsonl", cases=tuple(load_cases(path)), digest=cases_digest(path))
