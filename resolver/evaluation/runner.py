"""Ask the judge every labelled case, keep the answers, and write the report.

`run_evaluation` is what `manage.py evaluate_reference_match` does, as plain
Python: the command only parses arguments, builds the judge from the settings
and prints. Nothing here imports Django.

Each case becomes a question through the production builder (`build_question`
with `CandidateFacts`), so the evaluated prompt and its fingerprint are
exactly the ones the pipeline sends. Answers are appended to
`answers.jsonl` in the output directory as they arrive, keyed by
(case id, case digest, model requested, fingerprint): an interrupted run
loses nothing already answered, and a re-run asks only for what is missing.
A case whose judgment is unavailable is never stored, so the next run asks
again; while any remain, the report carries no recommendation.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, TextIO

from tqdm import tqdm

from resolver.domain.judgment import (
    QUESTION_ID,
    QUESTION_NAME,
    CandidateFacts,
    DefectiveAnswer,
    Judgment,
    JudgmentUnavailable,
    Question,
    build_question,
    question_fingerprint,
    validate_answer,
)
from resolver.evaluation.cases import Case, cases_digest, load_cases
from resolver.evaluation.metrics import (
    Outcome,
    Recommendation,
    accuracy_by_tag,
    outcome_from_probabilities,
    recommend,
    threshold_points,
)
from resolver.evaluation.report import PLOT_FILE, render_summary, write_report

ANSWERS_FILE = "answers.jsonl"
ANSWER_RECORD_VERSION = 1
MAX_CONCURRENCY = 32

# Exit codes of `manage.py evaluate_reference_match` (documented in docs/evaluation.md).
EXIT_OK = 0
EXIT_INVALID = 2
EXIT_INCOMPLETE = 4
EXIT_JUDGE_DISABLED = 5
EXIT_MIXED_MODELS = 6


class EvaluationError(Exception):
    """A run that cannot go on; the message is for the operator, `exit_code` for scripts."""

    exit_code = 1


class InvalidEvaluation(EvaluationError):
    exit_code = EXIT_INVALID


class JudgeDisabled(EvaluationError):
    exit_code = EXIT_JUDGE_DISABLED


class MixedModels(EvaluationError):
    exit_code = EXIT_MIXED_MODELS


class CaseJudge(Protocol):
    """The judge the runner needs: the production `Judge` with the model it asks for."""

    @property
    def model(self) -> str: ...

    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable: ...


@dataclass(frozen=True)
class RunOptions:
    target_risk: float
    min_coverage: float
    margin: float
    concurrency: int = 4

    def problems(self) -> list[str]:
        found = []
        if not (math.isfinite(self.target_risk) and 0.0 < self.target_risk < 1.0):
            found.append("--target-risk must be between 0 and 1 (exclusive)")
        if not (math.isfinite(self.min_coverage) and 0.0 < self.min_coverage <= 1.0):
            found.append("--min-coverage must be above 0 and at most 1")
        if not (math.isfinite(self.margin) and 0.0 <= self.margin < 1.0):
            found.append("--margin must be at least 0 and below 1")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            found.append(f"--concurrency must be 1 to {MAX_CONCURRENCY}")
        return found


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
    jev_request_id: str | None = None
    latency_ms: int = 0
    attempts: int = 0
    answered_at: str = ""

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
            "jev_request_id": self.jev_request_id,
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
            "answered_at": self.answered_at,
        }
        return json.dumps(record, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class Unanswered:
    case_id: str
    reason: str  # the judge's fixed-vocabulary reason, e.g. "http_429", "timeout"


@dataclass(frozen=True)
class EvaluationResult:
    report: dict[str, Any]
    out_dir: Path
    case_count: int
    reused: int  # answers read back from answers.jsonl
    asked: int  # questions sent to the judge in this run
    unanswered: tuple[Unanswered, ...]
    unreadable_lines: int  # lines of answers.jsonl that are not answer records
    rejected: int  # stored answers that failed the answer checks, so were asked again
    recommendation: Recommendation
    summary: str = field(repr=False)

    @property
    def complete(self) -> bool:
        return not self.unanswered

    @property
    def plot_path(self) -> Path:
        return self.out_dir / PLOT_FILE


def case_digest(case: Case) -> str:
    """sha256 of what the question is built from: reference, kind and candidates.

    The label and tags are left out on purpose: correcting a label does not
    change what the model was asked, so its answer stays valid.
    """
    material = {"reference": case.reference, "kind": case.kind, "candidates": list(case.candidates)}
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def candidate_facts(candidate: Mapping[str, Any]) -> CandidateFacts:
    return CandidateFacts(
        title=candidate["title"],
        collection=candidate["collection"],
        status=candidate.get("status"),
        due=candidate.get("due"),
        start=candidate.get("start"),
    )


def question_for(case: Case) -> Question:
    """The production question for a case: same builder, same numbering, same fingerprint."""
    return build_question(
        reference=case.reference,
        kind=case.kind,
        candidates=[candidate_facts(candidate) for candidate in case.candidates],
    )


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
            jev_request_id=data.get("jev_request_id"),
            latency_ms=int(data.get("latency_ms") or 0),
            attempts=int(data.get("attempts") or 0),
            answered_at=str(data.get("answered_at") or ""),
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


def _end_with_newline(path: Path) -> None:
    """Terminate a last line cut short by a kill, so the next answer starts a line of its own."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, 2)
        if handle.read(1) != b"\n":
            handle.write(b"\n")


def _still_valid(answer: StoredAnswer, question: Question) -> StoredAnswer | None:
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
        jev_request_id=answer.jev_request_id,
        latency_ms=answer.latency_ms,
        attempts=answer.attempts,
        answered_at=answer.answered_at,
    )


def _ask(judge: CaseJudge, case: Case, question: Question, key: AnswerKey) -> StoredAnswer | Unanswered:
    # The case ID in the request ID lets a Jev-side log be matched to a case.
    judgment = judge.judge(question, request_id=f"eval-{case.id}")
    if isinstance(judgment, JudgmentUnavailable):
        return Unanswered(case_id=case.id, reason=judgment.reason)
    return StoredAnswer(
        key=key,
        model=judgment.model,
        choice=judgment.choice,
        probabilities=dict(judgment.probabilities),
        jev_request_id=judgment.jev_request_id,
        latency_ms=judgment.latency_ms,
        attempts=judgment.attempts,
        answered_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


def _ask_all(
    judge: CaseJudge,
    pending: Sequence[tuple[Case, Question, AnswerKey]],
    *,
    answers_path: Path,
    concurrency: int,
    progress: TextIO | None,
) -> tuple[dict[str, StoredAnswer], list[Unanswered]]:
    obtained: dict[str, StoredAnswer] = {}
    unanswered: list[Unanswered] = []
    if not pending:
        return obtained, unanswered
    bar = tqdm(
        total=len(pending),
        file=progress,
        disable=progress is None,
        unit="case",
        desc="asking Jev",
        mininterval=0.5,
    )
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="evaluate")
    try:
        with answers_path.open("a", encoding="utf-8") as out:
            futures: set[Future[StoredAnswer | Unanswered]] = {
                executor.submit(_ask, judge, case, question, key) for case, question, key in pending
            }
            while futures:
                done, futures = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    result = future.result()
                    if isinstance(result, Unanswered):
                        unanswered.append(result)
                    else:
                        # Written and flushed one by one from this thread only:
                        # whatever was answered before an interruption is kept.
                        out.write(result.to_json() + "\n")
                        out.flush()
                        obtained[result.key.case_id] = result
                    bar.update(1)
    finally:
        # On Ctrl-C, drop the questions not yet sent instead of waiting for all of them.
        executor.shutdown(wait=False, cancel_futures=True)
        bar.close()
    return obtained, unanswered


def _responding_model(answers: Sequence[StoredAnswer], model_requested: str) -> str:
    models = sorted({answer.model for answer in answers})
    if len(models) > 1:
        raise MixedModels(
            f"the answers name {len(models)} models ({', '.join(models)}) for {model_requested!r}: "
            "a threshold holds for one model only. Pin one with --model NAME (the versioned name) "
            "or start over in an empty --out directory."
        )
    return models[0] if models else ""


def _incomplete(unanswered: int, total: int, options: RunOptions) -> Recommendation:
    return Recommendation(
        threshold=None,
        reason=(
            f"{unanswered} of {total} cases are unanswered (judgment unavailable); "
            "run the command again to ask for them: an incomplete run recommends nothing"
        ),
        target_risk=options.target_risk,
        min_coverage=options.min_coverage,
    )


def run_evaluation(
    *,
    cases_path: Path,
    judge: CaseJudge,
    out_dir: Path,
    options: RunOptions,
    progress: TextIO | None = None,
) -> EvaluationResult:
    """Evaluate `reference_match.v1` on a labelled case set and write the report into `out_dir`.

    Raises CaseFileError for a bad case file, InvalidEvaluation for bad
    options, MixedModels when the answers name more than one model.
    """
    problems = options.problems()
    if problems:
        raise InvalidEvaluation("; ".join(problems))
    if not cases_path.is_file():
        raise InvalidEvaluation(f"--cases {cases_path}: no such file")
    cases = load_cases(cases_path)
    digest = cases_digest(cases_path)
    fingerprint = question_fingerprint()
    model_requested = judge.model

    out_dir.mkdir(parents=True, exist_ok=True)
    answers_path = out_dir / ANSWERS_FILE
    stored, unreadable = read_answers(answers_path)
    _end_with_newline(answers_path)
    rejected = 0

    answered: dict[str, StoredAnswer] = {}
    pending: list[tuple[Case, Question, AnswerKey]] = []
    for case in cases:
        question = question_for(case)
        key = AnswerKey(
            case_id=case.id, case_digest=case_digest(case), model_requested=model_requested, fingerprint=fingerprint
        )
        previous = stored.get(key)
        checked = _still_valid(previous, question) if previous is not None else None
        if previous is not None and checked is None:
            rejected += 1
        if checked is not None:
            answered[case.id] = checked
        else:
            pending.append((case, question, key))
    reused = len(answered)

    obtained, unanswered = _ask_all(
        judge, pending, answers_path=answers_path, concurrency=options.concurrency, progress=progress
    )
    answered.update(obtained)
    # Report unanswered cases in file order, whatever order the threads finished in.
    order = {case.id: index for index, case in enumerate(cases)}
    unanswered.sort(key=lambda u: order[u.case_id])

    in_order = [answered[case.id] for case in cases if case.id in answered]
    model = _responding_model(in_order, model_requested)
    outcomes: list[Outcome] = [
        outcome_from_probabilities(
            case_id=case.id,
            expected=case.expected,
            choice=answered[case.id].choice,
            probabilities=answered[case.id].probabilities,
            tags=case.tags,
        )
        for case in cases
        if case.id in answered
    ]
    points = threshold_points(outcomes, margin=options.margin) if outcomes else []
    if unanswered:
        recommendation = _incomplete(len(unanswered), len(cases), options)
    else:
        recommendation = recommend(points, target_risk=options.target_risk, min_coverage=options.min_coverage)
    meta = {
        "question": QUESTION_ID,
        # The responding model: the one a threshold is approved for.
        "model": model or "none (no case answered)",
        "model_requested": model_requested,
        "fingerprint": fingerprint,
        "cases_file": cases_path.name,
        "cases_digest": digest,
        "case_count": len(cases),
        "answered": len(in_order),
        "unanswered": len(unanswered),
        "margin": options.margin,
    }
    report = write_report(
        out_dir, points=points, recommendation=recommendation, by_tag=accuracy_by_tag(outcomes), meta=meta
    )
    return EvaluationResult(
        report=report,
        out_dir=out_dir,
        case_count=len(cases),
        reused=reused,
        asked=len(pending),
        unanswered=tuple(unanswered),
        unreadable_lines=unreadable,
        rejected=rejected,
        recommendation=recommendation,
        summary=render_summary(report),
    )
