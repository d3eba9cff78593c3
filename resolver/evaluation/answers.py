"""The answer store: `answers.jsonl`, appended as answers arrive, read back to resume.

Records are keyed by (case id, case digest, model requested, fingerprint): an
interrupted run loses nothing already answered, and a re-run asks only for
what is missing. A stored answer is checked again against today's question
before it is used, as a fresh response would be.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resolver.domain.judgment import (
    QUESTION_ID,
    QUESTION_NAME,
    DefectiveAnswer,
    Question,
    validate_answer,
)

ANSWERS_FILE = "answers.jsonl"
ANSWER_RECORD_VERSION = 1


@dataclass(frozen=True)
class AnswerKey:
    case_id: str
    case_digest: str
    model_requested: str
    fingerprint: str


@dataclass(frozen=True)
class StoredAnswer:
    key: AnswerKey
    model: str  # as the response reported it
    choice: str
    probabilities: dict[str, float]
    # The judge's backend (resolver.domain.ports.Judge.backend).
    backend: str
    # The answering server's request ID; stored under the record's published key, "jev_request_id".
    server_request_id: str | None = None
    latency_ms: int = 0
    attempts: int = 0
    answered_at: str = ""
    # "service", "logprobs", or "none" (advice only: no threshold can be earned).
    probability_source: str = "service"

    def to_json(self) -> str:
        record = {
            "version": ANSWER_RECORD_VERSION,
            "case_id": self.key.case_id,
            "case_digest": self.key.case_digest,
            "model_requested": self.key.model_requested,
            "fingerprint": self.key.fingerprint,
            "question": QUESTION_ID,
            "model": self.model,
            "choice": self.choice,
            "probabilities": self.probabilities,
            "jev_request_id": self.server_request_id,
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
            "answered_at": self.answered_at,
            "backend": self.backend,
            "probability_source": self.probability_source,
        }
        return json.dumps(record, ensure_ascii=False, sort_keys=True)


def _record_body(model: str, choice: str, probabilities: Mapping[str, float]) -> dict[str, Any]:
    return {
        "model": model,
        "answers": {QUESTION_NAME: {"type": "choice", "choice": choice, "probabilities": dict(probabilities)}},
    }


def _parse_record(line: str) -> StoredAnswer | None:
    try:
        data = json.loads(line)
    except ValueError:
        # A line cut short when a run was killed mid-write.
        return None
    if not isinstance(data, dict) or data.get("version") != ANSWER_RECORD_VERSION:
        return None
    try:
        key = AnswerKey(
            case_id=str(data["case_id"]),
            case_digest=str(data["case_digest"]),
            model_requested=str(data["model_requested"]),
            fingerprint=str(data["fingerprint"]),
        )
        probabilities = data["probabilities"]
        if not isinstance(probabilities, dict):
            return None
        return StoredAnswer(
            key=key,
            model=str(data["model"]),
            choice=str(data["choice"]),
            probabilities=probabilities,
            server_request_id=data.get("jev_request_id"),
            latency_ms=int(data.get("latency_ms") or 0),
            attempts=int(data.get("attempts") or 0),
            answered_at=str(data.get("answered_at") or ""),
            # Records from before the backend was stored were all Jev's.
            backend=str(data.get("backend") or "jev"),
            probability_source=str(data.get("probability_source") or "service"),
        )
    except (KeyError, TypeError, ValueError):
        return None


def read_answers(path: Path) -> tuple[dict[AnswerKey, StoredAnswer], int]:
    """Every readable answer in an answers file (the last one wins per key), and how many lines were not."""
    answers: dict[AnswerKey, StoredAnswer] = {}
    unreadable = 0
    if not path.exists():
        return answers, unreadable
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            record = _parse_record(line)
            if record is None:
                unreadable += 1
                continue
            answers[record.key] = record
    return answers, unreadable


def end_with_newline(path: Path) -> None:
    """Terminate a last line cut short by a kill, so the next answer starts a line of its own."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, 2)
        if handle.read(1) != b"\n":
            handle.write(b"\n")


def still_valid(answer: StoredAnswer, question: Question) -> StoredAnswer | None:
    """A stored answer re-checked against today's question, as a fresh response would be.

    The file is plain text in a folder: an edited or damaged record must not
    slip into the evidence for a threshold.
    """
    try:
        choice, probabilities, model = validate_answer(
            _record_body(answer.model, answer.choice, answer.probabilities), question
        )
    except DefectiveAnswer:
        return None
    return StoredAnswer(
        key=answer.key,
        model=model,
        choice=choice,
        probabilities=probabilities,
        server_request_id=answer.server_request_id,
        latency_ms=answer.latency_ms,
        attempts=answer.attempts,
        answered_at=answer.answered_at,
        backend=answer.backend,
        probability_source=answer.probability_source,
    )
