"""resolver/evaluation/cases.py: the starter case set and its generator, loading a case file.

The starter set's shape (size, no-match share, pool sizes, tags, kinds,
positions) and that its generator still writes it byte for byte; a bad line
of a case file is named.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from resolver.domain.errors import InvalidRequest
from resolver.evaluation.cases import (
    MAX_CANDIDATES,
    MIN_CANDIDATES,
    STARTER_CASES_PATH,
    TAGS,
    Case,
    CaseFileError,
    cases_digest,
    load_cases,
)


@pytest.fixture(scope="module")
def starter() -> list[Case]:
    return load_cases(STARTER_CASES_PATH)


def _generator() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "generate_starter_cases.py"
    spec = importlib.util.spec_from_file_location("generate_starter_cases", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up by name while the script is executed.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_starter__loads_at_least_300_cases(starter: list[Case]) -> None:
    assert len(starter) >= 300
    assert len({case.id for case in starter}) == len(starter)


def test_starter__at_least_22_percent_are_no_match(starter: list[Case]) -> None:
    no_match = [case for case in starter if case.expected == "no_match"]
    assert len(no_match) / len(starter) >= 0.22


def test_starter__pool_sizes_span_2_to_19(starter: list[Case]) -> None:
    sizes = Counter(len(case.candidates) for case in starter)
    assert set(sizes) == set(range(MIN_CANDIDATES, MAX_CANDIDATES + 1))
    # Large pools are as common as small ones, not a token few.
    assert sum(count for size, count in sizes.items() if size >= 10) >= len(starter) * 0.4


def test_starter__every_tag_is_used(starter: list[Case]) -> None:
    used = Counter(tag for case in starter for tag in case.tags)
    assert set(used) == set(TAGS)
    assert min(used.values()) >= 20


def test_starter__both_kinds(starter: list[Case]) -> None:
    kinds = Counter(case.kind for case in starter)
    assert kinds["task"] >= 100 and kinds["event"] >= 100


def test_starter__expected_positions_vary(starter: list[Case]) -> None:
    positions = Counter(case.expected for case in starter if case.expected != "no_match")
    assert len(positions) >= 12
    assert positions[1] < sum(positions.values()) * 0.25
    assert any(isinstance(p, int) and p >= 10 for p in positions)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def test_starter__no_reference_is_an_exact_title(starter: list[Case]) -> None:
    """An exact title match never reaches the model, so it would measure nothing."""
    for case in starter:
        assert _normal(case.reference) not in {_normal(c["title"]) for c in case.candidates}, case.id


def test_starter__near_duplicate_matches_have_their_sibling_in_the_pool(starter: list[Case]) -> None:
    """A near-duplicate case is only hard if a look-alike title sits next to the answer."""
    for case in starter:
        if "near_duplicate" in case.tags and case.expected != "no_match":
            assert len(case.candidates) >= 2, case.id


def test_starter__numbers_in_a_title_do_not_point_at_the_answer(starter: list[Case]) -> None:
    """Where the answer's title says "chapter 5", candidate number 5 is some other item."""
    for case in starter:
        if "numbers_in_text" in case.tags and isinstance(case.expected, int):
            title = case.candidates[case.expected - 1]["title"]
            numbers = {int(n) for n in re.findall(r"\d+", title + " " + case.reference)}
            small = {n for n in numbers if 1 <= n <= len(case.candidates)}
            if small and len(small) < len(case.candidates):
                assert case.expected not in small, case.id


def test_starter__file_matches_its_generator() -> None:
    """The committed set is exactly what scripts/generate_starter_cases.py writes."""
    generator = _generator()
    assert generator.render(generator.build_cases()) == STARTER_CASES_PATH.read_text(encoding="utf-8")


def test_cases_digest__sha256_of_the_bytes(tmp_path: Path) -> None:
    assert cases_digest(STARTER_CASES_PATH) == hashlib.sha256(STARTER_CASES_PATH.read_bytes()).hexdigest()
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(STARTER_CASES_PATH.read_bytes() + b"\n")
    assert cases_digest(copy) != cases_digest(STARTER_CASES_PATH)


# --- validation -------------------------------------------------------------


def _good(**overrides: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": "t1",
        "reference": "weekly sync",
        "kind": "event",
        "candidates": [
            {
                "title": "Weekly sync – design",
                "collection": "work",
                "status": "CONFIRMED",
                "start": "2025-03-03T10:00:00+01:00",
            },
            {"title": "Weekly sync – platform", "collection": "work", "status": None, "start": "2025-03-04"},
        ],
        "expected": 1,
        "tags": ["near_duplicate"],
    }
    case.update(overrides)
    return case


def _write(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8"
    )
    return path


def _task(**fields: Any) -> dict[str, Any]:
    return {"title": "Pay rent", "collection": "home", "status": "NEEDS-ACTION", "due": "2025-05-01", **fields}


BAD_SECOND_LINES = {
    "not json": ("{not json", "not valid JSON"),
    "not an object": ([1, 2], "JSON object"),
    "missing field": ({k: v for k, v in _good(id="t2").items() if k != "tags"}, "missing fields ['tags']"),
    "unknown field": (_good(id="t2", expect=1), "unknown fields ['expect']"),
    "empty reference": (_good(id="t2", reference="  "), "reference"),
    "bad kind": (_good(id="t2", kind="todo"), "kind must be one of"),
    "one candidate": (_good(id="t2", candidates=_good()["candidates"][:1]), "2 to 19, got 1"),
    "twenty candidates": (
        _good(id="t2", kind="task", candidates=[_task(title=f"T{n}") for n in range(20)]),
        "2 to 19, got 20",
    ),
    "expected zero": (_good(id="t2", expected=0), "expected must be a candidate number 1..2"),
    "expected too big": (_good(id="t2", expected=3), "expected must be a candidate number 1..2"),
    "expected bool": (_good(id="t2", expected=True), "expected must be"),
    "expected string number": (_good(id="t2", expected="1"), "expected must be"),
    "event with due": (
        _good(id="t2", candidates=[_task(), _task(title="Other")]),
        "candidate 1 has 'due', but events carry 'start'",
    ),
    "task with start": (
        _good(id="t2", kind="task", candidates=[_task(), {**_task(title="x"), "start": "2025-01-01"}]),
        "candidate 2 has 'start'",
    ),
    "event without start": (
        _good(id="t2", candidates=[{"title": "A", "collection": "c", "status": None}, _good()["candidates"][0]]),
        "candidate 1 needs 'start'",
    ),
    "event start null": (
        _good(id="t2", candidates=[{**_good()["candidates"][0], "start": None}, _good()["candidates"][1]]),
        "not an ISO 8601",
    ),
    "bad date": (
        _good(id="t2", candidates=[{**_good()["candidates"][0], "start": "next Tuesday"}, _good()["candidates"][1]]),
        "candidate 1 'start' is not an ISO 8601",
    ),
    "no title": (
        _good(id="t2", candidates=[{**_good()["candidates"][0], "title": ""}, _good()["candidates"][1]]),
        "candidate 1 needs a non-empty title",
    ),
    "unknown tag": (_good(id="t2", tags=["near-duplicate"]), "unknown tags ['near-duplicate']"),
    "no_match untagged": (_good(id="t2", expected="no_match"), "tagged 'no_match' exactly when"),
    "no_match tag on a match": (_good(id="t2", tags=["no_match"]), "tagged 'no_match' exactly when"),
    "duplicate id": (_good(), "id 't1' is already used on line 1"),
}


@pytest.mark.parametrize("name", sorted(BAD_SECOND_LINES))
def test_load_cases__bad_line_is_named(tmp_path: Path, name: str) -> None:
    bad, message = BAD_SECOND_LINES[name]
    path = _write(tmp_path, _good(), bad)
    with pytest.raises(CaseFileError) as caught:
        load_cases(path)
    assert str(caught.value).startswith("cases.jsonl line 2: ")
    assert message in str(caught.value)
    assert caught.value.line == 2


def test_load_cases__good_file(tmp_path: Path) -> None:
    """Blank lines are skipped; a task may have no due date; no_match is a valid answer."""
    no_match = _good(id="t2", kind="task", candidates=[_task(due=None), _task(title="Other")],
                     expected="no_match", tags=["no_match", "partial"])
    cases = load_cases(_write(tmp_path, _good(), "", no_match))
    assert [case.id for case in cases] == ["t1", "t2"]
    assert cases[0].expected == 1
    assert cases[0].tags == ("near_duplicate",)
    assert isinstance(cases[0].candidates, tuple)
    assert cases[1].expected == "no_match"
    assert cases[1].candidates[0]["due"] is None


def test_load_cases__empty_file(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="holds no cases"):
        load_cases(_write(tmp_path, ""))


def test_case_file_error__is_an_invalid_request(tmp_path: Path) -> None:
    """The command maps it like any other bad input: code invalid_request, exit code 2."""
    with pytest.raises(InvalidRequest) as caught:
        load_cases(_write(tmp_path, "[]"))
    assert caught.value.code == "invalid_request"
    assert caught.value.details == {"path": str(tmp_path / "cases.jsonl"), "line": 1}
