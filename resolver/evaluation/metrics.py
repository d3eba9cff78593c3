"""Risk and coverage of resolving on the model's confidence, threshold by threshold.

Plain Python, no Django: the evaluation command collects one `CaseOutcome` per
labelled case and calls `threshold_points`, `accuracy_by_tag` and `recommend`.

The error bound is the upper limit of the two-sided 95% Clopper-Pearson
interval (equivalently a one-sided 97.5% upper bound): `Beta.ppf(0.975,
errors + 1, admitted - errors)`, computed here by bisection on the binomial CDF
so the app needs no numerical library.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from resolver.domain.judgment import Judgment, ThresholdRule, decide, ranked_options

NO_MATCH = "no_match"
DEFAULT_MARGIN = 0.1
DEFAULT_TARGET_RISK = 0.02
DEFAULT_MIN_COVERAGE = 0.5
CONFIDENCE = 0.95

# The same tolerance as the pipeline's decide(): 0.5 - 0.4 is
# 0.09999999999999998 in binary and must still pass a 0.1 margin, and two
# probabilities closer than this are a tie.
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class CaseOutcome:
    """What the model answered for one labelled case."""

    case_id: str
    expected: int | str  # a candidate number, or "no_match"
    top_option: str  # the most probable option key: "1".."N" or "no_match"
    top_probability: float
    runner_up_probability: float
    tags: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        # Option keys are strings on the wire; expected numbers are ints in the file.
        return self.top_option == str(self.expected)


@dataclass(frozen=True)
class ThresholdPoint:
    """The outcome of resolving on confidence at one threshold."""

    threshold: float
    total: int
    admitted: int
    coverage: float
    errors: int
    risk: float | None  # None when nothing is admitted
    risk_upper: float | None  # Clopper-Pearson upper limit; None when nothing is admitted
    no_match_resolved: int  # no_match cases that would have been resolved to an item


@dataclass(frozen=True)
class TagAccuracy:
    cases: int
    correct: int
    accuracy: float


@dataclass(frozen=True)
class Recommendation:
    threshold: float | None
    reason: str
    target_risk: float = DEFAULT_TARGET_RISK
    min_coverage: float = DEFAULT_MIN_COVERAGE


def threshold_grid() -> tuple[float, ...]:
    """0.00, 0.01, ..., 1.00: built from integers so no step accumulates drift."""
    return tuple(round(step / 100, 2) for step in range(101))


def _at_least(value: float, bound: float) -> bool:
    return value >= bound - _TOLERANCE


def is_admitted(
    *,
    top_option: str,
    top_probability: float,
    runner_up_probability: float,
    threshold: float,
    margin: float = DEFAULT_MARGIN,
) -> bool:
    """Whether a judgment may resolve to an item without asking the user.

    The pipeline's own rule, `decide` in resolver.domain.judgment, applied to
    the two numbers an evaluation keeps: the top option and the runner-up's
    probability stand for the whole distribution, which is all `decide` reads
    (top, runner-up, no_match on top, tie, threshold, margin).
    """
    runner_up = NO_MATCH if top_option != NO_MATCH else "runner_up"
    judgment = Judgment(
        model="", choice=top_option, jev_request_id=None, latency_ms=0, attempts=0,
        probabilities={top_option: top_probability, runner_up: runner_up_probability},
    )
    return decide(judgment, ThresholdRule(threshold=threshold, margin=margin)).resolved_number is not None


def outcome_from_probabilities(
    *,
    case_id: str,
    expected: int | str,
    choice: str,
    probabilities: Mapping[str, float],
    tags: Sequence[str] = (),
) -> CaseOutcome:
    """An CaseOutcome from Jev's answer: the top option and the runner-up's probability.

    Options are ranked by probability; on equal probabilities the model's own
    choice ranks first, as the pipeline ranks them.
    """
    ranked = ranked_options(choice, probabilities)
    if not ranked:
        raise ValueError(f"case {case_id}: no probabilities")
    top_option, top_probability = ranked[0]
    return CaseOutcome(
        case_id=case_id,
        expected=expected,
        top_option=top_option,
        top_probability=top_probability,
        runner_up_probability=ranked[1][1] if len(ranked) > 1 else 0.0,
        tags=tuple(tags),
    )


def _log_binomial_pmf(k: int, n: int, p: float) -> float:
    log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return log_choose + k * math.log(p) + (n - k) * math.log1p(-p)


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), with 0 < p < 1."""
    return math.fsum(math.exp(_log_binomial_pmf(i, n, p)) for i in range(k + 1))


def clopper_pearson_upper(errors: int, trials: int, *, confidence: float = CONFIDENCE) -> float | None:
    """Upper limit of the two-sided Clopper-Pearson interval for errors/trials.

    It is the p at which seeing `errors` or fewer has probability (1 - confidence) / 2,
    i.e. Beta.ppf(1 - (1 - confidence) / 2, errors + 1, trials - errors).
    """
    if trials < 0 or errors < 0 or errors > trials:
        raise ValueError(f"need 0 <= errors <= trials, got {errors} of {trials}")
    if trials == 0:
        return None
    if errors == trials:
        return 1.0
    return _upper_limit(errors, trials, confidence)


# Neighbouring thresholds often admit the same cases; the bisection is then
# not worth repeating.
@functools.lru_cache(maxsize=4096)
def _upper_limit(errors: int, trials: int, confidence: float) -> float:
    tail = (1 - confidence) / 2
    # The CDF falls from 1 at p=0 to 0 at p=1, so the root is bracketed; 200
    # halvings are far below float resolution and stop early once the bracket
    # cannot shrink any further.
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if _binomial_cdf(errors, trials, middle) > tail:
            low = middle
        else:
            high = middle
    return high


def _point(outcomes: Sequence[CaseOutcome], *, threshold: float, margin: float) -> ThresholdPoint:
    admitted = [
        outcome
        for outcome in outcomes
        if is_admitted(
            top_option=outcome.top_option,
            top_probability=outcome.top_probability,
            runner_up_probability=outcome.runner_up_probability,
            threshold=threshold,
            margin=margin,
        )
    ]
    errors = sum(1 for outcome in admitted if not outcome.correct)
    count = len(admitted)
    return ThresholdPoint(
        threshold=threshold,
        total=len(outcomes),
        admitted=count,
        coverage=count / len(outcomes),
        errors=errors,
        risk=errors / count if count else None,
        risk_upper=clopper_pearson_upper(errors, count),
        no_match_resolved=sum(1 for outcome in admitted if outcome.expected == NO_MATCH),
    )


def threshold_points(outcomes: Sequence[CaseOutcome], *, margin: float = DEFAULT_MARGIN) -> list[ThresholdPoint]:
    """One point per threshold on the 0.00..1.00 grid, in increasing order."""
    if not outcomes:
        raise ValueError("no outcomes to evaluate")
    return [_point(outcomes, threshold=threshold, margin=margin) for threshold in threshold_grid()]


def accuracy_by_tag(outcomes: Iterable[CaseOutcome]) -> dict[str, TagAccuracy]:
    """How often the top option is right, per tag and over all cases ("all").

    Thresholds play no part: this says where the model is weak, not what a
    threshold would admit.
    """
    counts: dict[str, list[int]] = {"all": [0, 0]}
    for outcome in outcomes:
        for tag in ("all", *outcome.tags):
            tally = counts.setdefault(tag, [0, 0])
            tally[0] += 1
            tally[1] += int(outcome.correct)
    ordered = ["all", *sorted(tag for tag in counts if tag != "all")]
    return {
        tag: TagAccuracy(cases=counts[tag][0], correct=counts[tag][1], accuracy=counts[tag][1] / counts[tag][0])
        for tag in ordered
        if counts[tag][0]
    }


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def recommend(
    points: Sequence[ThresholdPoint],
    *,
    target_risk: float = DEFAULT_TARGET_RISK,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> Recommendation:
    """The smallest threshold whose risk bound meets the target at enough coverage.

    The smallest qualifying threshold resolves the most references; a larger
    one would only ask the user more often for no proven gain.
    """
    covered = [p for p in points if p.risk_upper is not None and _at_least(p.coverage, min_coverage)]
    for point in sorted(covered, key=lambda p: p.threshold):
        if point.risk_upper is not None and point.risk_upper <= target_risk:
            return Recommendation(
                threshold=point.threshold,
                reason=(
                    f"{point.threshold:.2f} is the smallest threshold whose 95% upper bound on risk "
                    f"({_percent(point.risk_upper)}) is at most {_percent(target_risk)}, "
                    f"at coverage {_percent(point.coverage)} >= {_percent(min_coverage)}"
                ),
                target_risk=target_risk,
                min_coverage=min_coverage,
            )
    if covered:
        best = min(covered, key=lambda p: (p.risk_upper, p.threshold))
        reason = (
            f"no threshold qualifies: the best upper bound at coverage >= {_percent(min_coverage)} "
            f"is {_percent(best.risk_upper or 0.0)} (at {best.threshold:.2f}) > {_percent(target_risk)}"
        )
    else:
        highest = max((p.coverage for p in points), default=0.0)
        reason = (
            f"no threshold qualifies: none admits at least {_percent(min_coverage)} of the cases "
            f"(the highest coverage is {_percent(highest)})"
        )
    return Recommendation(threshold=None, reason=reason, target_risk=target_risk, min_coverage=min_coverage)
