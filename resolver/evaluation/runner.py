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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from resolver.domain.judgment import QUESTION_ID, CandidateFacts, Question, build_question, question_fingerprint
from resolver.evaluation.answers import (
    ANSWERS_FILE,
    AnswerKey,
    StoredAnswer,
    end_with_newline,
    read_answers,
    still_valid,
)
from resolver.evaluation.asking import CaseJudge, Unanswered, ask_all
from resolver.evaluation.cases import Case, cases_digest, load_cases
from resolver.evaluation.errors import (
    EXIT_INCOMPLETE,
    EXIT_INVALID,
    EXIT_JUDGE_DISABLED,
    EXIT_MIXED_MODELS,
    EXIT_OK,
    EvaluationError,
    InvalidEvaluation,
    JudgeDisabled,
    MixedModels,
)
from resolver.evaluation.metrics import (
    CaseOutcome,
    Recommendation,
    accuracy_by_tag,
    outcome_from_probabilities,
    recommend,
    threshold_points,
)
from resolver.evaluation.options import MAX_CONCURRENCY, RunOptions
from resolver.evaluation.report import PLOT_FILE, render_summary, write_report

__all__ = [
    "ANSWERS_FILE", "EXIT_INCOMPLETE", "EXIT_INVALID", "EXIT_JUDGE_DISABLED", "EXIT_MIXED_MODELS", "EXIT_OK",
    "MAX_CONCURRENCY", "AnswerKey", "CaseJudge", "EvaluationError", "EvaluationResult", "InvalidEvaluation",
    "JudgeDisabled", "MixedModels", "RunOptions", "StoredAnswer", "Unanswered", "question_for", "run_evaluation",
]


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
    # The judge's own fingerprint: a chat model's covers its system prompt,
    # correction and schema, so its answers are kept apart from Jev's.
    fingerprint = getattr(judge, "fingerprint", None) or question_fingerprint()
    out_dir.mkdir(parents=True, exist_ok=True)
    answers_path = out_dir / ANSWERS_FILE
    known = _stored_answers(cases, answers_path, model_requested=judge.model, fingerprint=fingerprint)
    obtained, unanswered = ask_all(
        judge, known.pending, answers_path=answers_path, concurrency=options.concurrency, progress=progress
    )
    answered = {**known.answered, **obtained}
    # Report unanswered cases in file order, whatever order the threads finished in.
    order = {case.id: index for index, case in enumerate(cases)}
    unanswered.sort(key=lambda u: order[u.case_id])
    in_order = [answered[case.id] for case in cases if case.id in answered]
    outcomes: list[CaseOutcome] = [
        outcome_from_probabilities(case_id=case.id, expected=case.expected, choice=answered[case.id].choice,
                                   probabilities=answered[case.id].probabilities, tags=case.tags)
        for case in cases if case.id in answered
    ]
    points = threshold_points(outcomes, margin=options.margin) if outcomes else []
    advice = sorted({a.key.case_id for a in in_order if a.probability_source == "none"})
    recommendation = _recommendation(points, options, unanswered=len(unanswered), cases=len(cases),
                                     advice=len(advice), answered=len(in_order))
    meta = _meta(judge, in_order, fingerprint=fingerprint, cases_path=cases_path, case_count=len(cases),
                 unanswered=len(unanswered), advice=bool(advice), margin=options.margin)
    report = write_report(
        out_dir, points=points, recommendation=recommendation, by_tag=accuracy_by_tag(outcomes), meta=meta
    )
    return EvaluationResult(
        report=report, out_dir=out_dir, case_count=len(cases), reused=len(known.answered),
        asked=len(known.pending), unanswered=tuple(unanswered), unreadable_lines=known.unreadable,
        rejected=known.rejected, recommendation=recommendation, summary=render_summary(report),
    )


def _meta(judge: CaseJudge, in_order: list[StoredAnswer], *, fingerprint: str, cases_path: Path, case_count: int,
          unanswered: int, advice: bool, margin: float) -> dict[str, Any]:
    """The report's facts: what was asked of which model, on which cases (raises MixedModels)."""
    return {
        "question": QUESTION_ID,
        # The responding model: the one a threshold is approved for.
        "model": _responding_model(in_order, judge.model) or "none (no case answered)",
        "model_requested": judge.model,
        "fingerprint": fingerprint,
        "backend": getattr(judge, "backend", "jev"),
        "probability_source": "none" if advice else (in_order[0].probability_source if in_order else "service"),
        "cases_file": cases_path.name,
        "cases_digest": cases_digest(cases_path),
        "case_count": case_count,
        "answered": len(in_order),
        "unanswered": unanswered,
        "margin": margin,
    }


@dataclass
class _Known:
    """The answers file read for this run: still-valid answers by case, and the cases left to ask."""

    answered: dict[str, StoredAnswer]
    pending: list[tuple[Case, Question, AnswerKey]]
    unreadable: int
    rejected: int


def _stored_answers(cases: Sequence[Case], answers_path: Path, *, model_requested: str,
                    fingerprint: str) -> _Known:
    stored, unreadable = read_answers(answers_path)
    end_with_newline(answers_path)
    known = _Known(answered={}, pending=[], unreadable=unreadable, rejected=0)
    for case in cases:
        question = question_for(case)
        key = AnswerKey(
            case_id=case.id, case_digest=case_digest(case), model_requested=model_requested, fingerprint=fingerprint
        )
        previous = stored.get(key)
        checked = still_valid(previous, question) if previous is not None else None
        if previous is not None and checked is None:
            known.rejected += 1
        if checked is not None:
            known.answered[case.id] = checked
        else:
            known.pending.append((case, question, key))
    return known


def _recommendation(points: list[Any], options: RunOptions, *, unanswered: int, cases: int, advice: int,
                    answered: int) -> Recommendation:
    """No threshold while cases are unanswered or any answer is advice only; else the recommended one."""
    if unanswered:
        return _incomplete(unanswered, cases, options)
    if advice:
        return Recommendation(
            threshold=None,
            reason=(f"{advice} of {answered} answers came without log-probabilities: advice only, "
                    "and no threshold can apply to advice"),
            target_risk=options.target_risk, min_coverage=options.min_coverage,
        )
    return recommend(points, target_risk=options.target_risk, min_coverage=options.min_coverage)
