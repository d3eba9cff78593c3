"""Ask a judge (or a local scorer) every labelled case, keep the answers, and write the report.

`run_evaluation` is what `manage.py evaluate_reference_match` does with a
judge, `run_scorer_evaluation` what it does with `--judge ranker`, as plain
Python: the command only parses arguments, builds the judge or the scorer and
prints. Nothing here imports Django.

Each case becomes a question through the production builder (`build_question`
with `CandidateFacts`), so the evaluated prompt and its fingerprint are
exactly the ones the pipeline sends. Answers are appended to
`answers.jsonl` in the output directory as they arrive, keyed by
(case id, case digest, model requested, fingerprint): an interrupted run
loses nothing already answered, and a re-run asks only for what is missing.
A case whose judgment is unavailable is never stored, so the next run asks
again; while any remain, the report certifies nothing.

A scorer answers locally and at once: no answer store, no threads. It gets
each case as loaded (`Case` for a JSON Lines set, `CalendarCase` for a
calendar set) and returns a `CaseOutcome`, checked here before it counts.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from tqdm import tqdm

from resolver.domain.judgment import (
    QUESTION_ID,
    CandidateFacts,
    Question,
    build_question,
    with_retrieval,
)
from resolver.domain.ports import Judge
from resolver.evaluation.answers import (
    ANSWERS_FILE,
    AnswerKey,
    StoredAnswer,
    end_with_newline,
    read_answers,
    still_valid,
)
from resolver.evaluation.asking import Unanswered, ask_all
from resolver.evaluation.cases import NO_MATCH, CalendarCase, Case, CaseSet, load_case_set
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
    Certificate,
    accuracy_by_tag,
    certify,
    outcome_from_probabilities,
    refused,
    threshold_points,
)
from resolver.evaluation.options import MAX_CONCURRENCY, RunOptions
from resolver.evaluation.report import PLOT_FILE, render_summary, write_report

__all__ = [
    "ANSWERS_FILE", "EXIT_INCOMPLETE", "EXIT_INVALID", "EXIT_JUDGE_DISABLED", "EXIT_MIXED_MODELS", "EXIT_OK",
    "MAX_CONCURRENCY", "AnswerKey", "EvaluationError", "EvaluationResult", "InvalidEvaluation",
    "JudgeDisabled", "MixedModels", "RunOptions", "Scorer", "StoredAnswer", "Unanswered", "question_for",
    "run_evaluation", "run_scorer_evaluation",
]

# The widths of ApprovedThreshold's columns: a scorer's identity must fit the row it may become.
MAX_MODEL_LENGTH = 200
MAX_FINGERPRINT_LENGTH = 64
MAX_BACKEND_LENGTH = 20


class Scorer(Protocol):
    """A relevance model that answers a case locally (`--judge ranker`).

    Optional attributes, read with getattr: `margin` (the lead its top option
    needs over the runner-up; none: only ties are refused), `question` (the
    question ID its thresholds are stored under; default reference_match.v1)
    and `probability_source` (default "scorer").
    """

    name: str  # for people: "built-in ranker"
    model: str  # what a threshold is stored for (ApprovedThreshold.model)
    fingerprint: str  # identifies the scorer's rules and data; at most 64 characters
    backend: str  # ApprovedThreshold.backend, e.g. "ranker"

    def score(self, case: Case | CalendarCase) -> CaseOutcome: ...


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
    certificate: Certificate
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


def run_evaluation(
    *,
    cases_path: Path,
    judge: Judge,
    out_dir: Path,
    options: RunOptions,
    progress: TextIO | None = None,
) -> EvaluationResult:
    """Evaluate `reference_match.v1` on a labelled case set and write the report into `out_dir`.

    Raises CaseFileError for a bad case file, InvalidEvaluation for bad
    options, MixedModels when the answers name more than one model.
    """
    case_set = _checked_case_set(cases_path, options)
    if case_set.format != "jsonl":
        raise InvalidEvaluation(
            f"--cases {cases_path}: a calendar set has no candidate lists to ask a judge about; "
            "evaluate it with --judge ranker")
    cases: list[Case] = list(case_set.cases)  # type: ignore[arg-type]
    # The judge's own fingerprint: a chat model's covers its system prompt,
    # correction and schema, so its answers are kept apart from Jev's.
    fingerprint = judge.fingerprint
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
    advice = sorted({a.key.case_id for a in in_order if a.probability_source == "none"})
    # A threshold holds for the candidates production shows the judge: the fingerprint names their retrieval.
    meta = _meta(judge, in_order, fingerprint=with_retrieval(fingerprint, options.retrieval), case_set=case_set,
                 unanswered=len(unanswered), advice=bool(advice), options=options)
    certificate = _judges_certificate(outcomes, options, meta=meta, unanswered=len(unanswered),
                                      cases=len(cases), advice=len(advice))
    points = threshold_points(outcomes, margin=options.margin, delta=options.delta) if outcomes else []
    report = write_report(
        out_dir, points=points, certificate=certificate, by_tag=accuracy_by_tag(outcomes), meta=meta
    )
    return EvaluationResult(
        report=report, out_dir=out_dir, case_count=len(cases), reused=len(known.answered),
        asked=len(known.pending), unanswered=tuple(unanswered), unreadable_lines=known.unreadable,
        rejected=known.rejected, certificate=certificate, summary=render_summary(report),
    )


def _checked_case_set(cases_path: Path, options: RunOptions) -> CaseSet:
    problems = options.problems()
    if problems:
        raise InvalidEvaluation("; ".join(problems))
    if not cases_path.exists():
        raise InvalidEvaluation(f"--cases {cases_path}: no such file")
    return load_case_set(cases_path)


def _meta(judge: Judge, in_order: list[StoredAnswer], *, fingerprint: str, case_set: CaseSet,
          unanswered: int, advice: bool, options: RunOptions) -> dict[str, Any]:
    """The report's facts: what was asked of which model, on which cases (raises MixedModels)."""
    return {
        "question": QUESTION_ID,
        # The responding model: the one a threshold is approved for.
        "model": _responding_model(in_order, judge.model) or "none (no case answered)",
        "model_requested": judge.model,
        "fingerprint": fingerprint,
        "backend": judge.backend,
        "probability_source": "none" if advice else (in_order[0].probability_source if in_order else "service"),
        "cases_file": case_set.name,
        "cases_format": case_set.format,
        "cases_digest": case_set.digest,
        "case_count": len(case_set.cases),
        "answered": len(in_order),
        "unanswered": unanswered,
        "margin": options.margin,
        "alpha": options.alpha,
        "delta": options.delta,
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


def _judges_certificate(outcomes: list[CaseOutcome], options: RunOptions, *, meta: Mapping[str, Any],
                        unanswered: int, cases: int, advice: int) -> Certificate:
    """Nothing while cases are unanswered or any answer is advice only; else the fixed-sequence certificate."""
    identity = dict(alpha=options.alpha, delta=options.delta, margin=options.margin, model=meta["model"],
                    fingerprint=meta["fingerprint"], cases_digest=meta["cases_digest"])
    if unanswered:
        return refused(
            f"{unanswered} of {cases} cases are unanswered (judgment unavailable); run the command again to ask "
            "for them: an incomplete run certifies nothing", total=cases, **identity)
    if advice:
        return refused(
            f"{advice} of {len(outcomes)} answers came without log-probabilities: advice only, and no "
            "threshold can apply to advice", total=cases, **identity)
    return certify(outcomes, **identity)


# -- a local scorer ------------------------------------------------------------------------------

def _scorer_identity(scorer: Scorer) -> dict[str, str]:
    """The scorer's identity, checked against the columns it may be stored in."""
    identity = {}
    for name, limit in (("model", MAX_MODEL_LENGTH), ("fingerprint", MAX_FINGERPRINT_LENGTH),
                        ("backend", MAX_BACKEND_LENGTH)):
        value = getattr(scorer, name, None)
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise InvalidEvaluation(f"the scorer's {name} must be a non-empty string of at most {limit} characters, "
                                    f"got {value!r}")
        identity[name] = value
    return identity


def _checked_outcome(scorer: Scorer, case: Case | CalendarCase, outcome: Any) -> CaseOutcome:
    """The scorer's answer for one case, refused unless it is a sound CaseOutcome for that case.

    The label and tags come from the case, never from the scorer, and a
    calendar case's verdict is decided here by `CalendarCase.is_right`.
    """
    def bad(problem: str) -> InvalidEvaluation:
        return InvalidEvaluation(f"the scorer {scorer.name!r} answered case {case.id!r} with {problem}")

    if not isinstance(outcome, CaseOutcome):
        raise bad(f"{type(outcome).__name__}, not a CaseOutcome")
    if outcome.case_id != case.id:
        raise bad(f"the outcome of case {outcome.case_id!r}")
    if not isinstance(outcome.top_option, str) or not outcome.top_option:
        raise bad("no top option")
    top, runner_up = outcome.top_probability, outcome.runner_up_probability
    for value in (top, runner_up):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 0.0 <= value <= 1.0:
            raise bad(f"a probability outside [0, 1]: {value!r}")
    if runner_up > top:
        raise bad(f"a runner-up ({runner_up}) more probable than its top option ({top})")
    fields: dict[str, Any] = {"expected": case.expected, "tags": case.tags}
    if isinstance(case, CalendarCase):
        uid = None if outcome.top_option == NO_MATCH else outcome.top_option
        fields["verdict"] = case.is_right(uid, outcome.occurrence_start)
    return dataclasses.replace(outcome, **fields)


def run_scorer_evaluation(
    *,
    cases_path: Path,
    scorer: Scorer,
    out_dir: Path,
    options: RunOptions,
    progress: TextIO | None = None,
) -> EvaluationResult:
    """Score every case of either format locally, certify, and write the report into `out_dir`.

    `options.margin` is the margin the acceptance rule applies (the command
    passes the scorer's own, or 0 when it has none); `options.concurrency` is
    not used. Raises CaseFileError for a bad case set and InvalidEvaluation for
    bad options or an unsound answer from the scorer.
    """
    identity = _scorer_identity(scorer)
    case_set = _checked_case_set(cases_path, options)
    outcomes: list[CaseOutcome] = []
    bar = tqdm(total=len(case_set.cases), file=progress, disable=progress is None, unit="case",
               desc=f"scoring ({scorer.name})", mininterval=0.5)
    try:
        for case in case_set.cases:
            outcomes.append(_checked_outcome(scorer, case, scorer.score(case)))
            bar.update(1)
    finally:
        bar.close()
    meta = {
        "question": getattr(scorer, "question", None) or QUESTION_ID,
        "model": identity["model"],
        "model_requested": identity["model"],
        "scorer": scorer.name,
        "fingerprint": identity["fingerprint"],
        "backend": identity["backend"],
        "probability_source": getattr(scorer, "probability_source", None) or "scorer",
        "cases_file": case_set.name,
        "cases_format": case_set.format,
        "cases_digest": case_set.digest,
        "case_count": len(case_set.cases),
        "margin": options.margin,
        "alpha": options.alpha,
        "delta": options.delta,
    }
    certificate = certify(outcomes, alpha=options.alpha, delta=options.delta, margin=options.margin,
                          model=identity["model"], fingerprint=identity["fingerprint"],
                          cases_digest=case_set.digest)
    points = threshold_points(outcomes, margin=options.margin, delta=options.delta)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = write_report(out_dir, points=points, certificate=certificate, by_tag=accuracy_by_tag(outcomes),
                          meta=meta)
    return EvaluationResult(
        report=report, out_dir=out_dir, case_count=len(case_set.cases), reused=0, asked=0, unanswered=(),
        unreadable_lines=0, rejected=0, certificate=certificate, summary=render_summary(report),
    )
