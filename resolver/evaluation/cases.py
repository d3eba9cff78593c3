"""The labelled case set: one JSON object per line, checked line by line on load.

A case is a reference, the candidate pool the model is shown, and the answer a
human labeller gave: a candidate number (1-based) or "no_match". The file's
sha256 digest goes into every evaluation report, so an approved threshold
names exactly the cases that earned it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from resolver.domain.errors import InvalidRequest

STARTER_CASES_PATH = Path(__file__).resolve().parent / "data" / "starter.jsonl"

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


class CaseFileError(InvalidRequest):
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
