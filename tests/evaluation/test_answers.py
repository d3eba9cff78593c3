"""resolver/evaluation/answers.py: the answer store read back to resume, and a stored answer checked again.

A run killed mid-write leaves a torn last line: it is counted, never read as
an answer, and the next answer starts a line of its own. Resuming a run end
to end is in tests/evaluation/test_evaluate_reference_match.py.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from resolver.domain.judgment import NO_MATCH, CandidateFacts, build_question
from resolver.evaluation.answers import AnswerKey, StoredAnswer, end_with_newline, read_answers, still_valid

KEY = AnswerKey(case_id="c1", case_digest="d1", model_requested="jev-pinned", fingerprint="f1")
ANSWER = StoredAnswer(key=KEY, model="jev-1.13.0", choice="2", probabilities={"1": 0.04, "2": 0.94, NO_MATCH: 0.02},
                      backend="jev", server_request_id="srv-1", latency_ms=120, attempts=1,
                      answered_at="2026-01-01T00:00:00Z")
QUESTION = build_question(reference="weekly", kind="task", candidates=[
    CandidateFacts(title="Weekly report", collection="work", status=None),
    CandidateFacts(title="Weekly review", collection="work", status=None),
])


def test_read_answers__what_was_written_reads_back_and_the_last_wins(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    later = dataclasses.replace(ANSWER, choice="1", attempts=2)
    other = dataclasses.replace(ANSWER, key=dataclasses.replace(KEY, case_id="c2"))
    path.write_text("\n".join(a.to_json() for a in (ANSWER, other, later)) + "\n", encoding="utf-8")
    answers, unreadable = read_answers(path)
    assert answers == {KEY: later, other.key: other} and unreadable == 0


def test_read_answers__torn_foreign_and_incomplete_lines_are_counted_not_read(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    record = json.loads(ANSWER.to_json())
    lines = [ANSWER.to_json(), "", json.dumps({**record, "version": 2}), json.dumps({**record, "probabilities": [1]}),
             json.dumps({k: v for k, v in record.items() if k != "choice"}), "[1]", ANSWER.to_json()[:40]]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert read_answers(path) == ({KEY: ANSWER}, 5)
    assert read_answers(tmp_path / "missing.jsonl") == ({}, 0)


def test_read_answers__a_record_from_before_the_backend_was_stored_is_jevs(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    record = {k: v for k, v in json.loads(ANSWER.to_json()).items() if k != "backend"}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert read_answers(path)[0][KEY].backend == "jev"


def test_end_with_newline__only_a_line_cut_short_is_ended(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    end_with_newline(path)  # no file: nothing to do
    assert not path.exists()
    path.write_bytes(b"")
    end_with_newline(path)
    assert path.read_bytes() == b""
    path.write_bytes(b'{"torn"')
    end_with_newline(path)
    assert path.read_bytes() == b'{"torn"\n'
    end_with_newline(path)
    assert path.read_bytes() == b'{"torn"\n'


def test_still_valid__a_stored_answer_is_checked_as_a_fresh_one_would_be() -> None:
    assert still_valid(ANSWER, QUESTION) == ANSWER
    assert still_valid(dataclasses.replace(ANSWER, choice="7"), QUESTION) is None  # no option 7 today
    assert still_valid(dataclasses.replace(ANSWER, probabilities={"1": 0.5, "2": 0.9, NO_MATCH: 0.0}), QUESTION) is None
