"""Risk and coverage of resolving on a confidence, threshold by threshold, and the certificate.

Plain Python, no Django: the evaluation collects one `CaseOutcome` per labelled
case and calls `threshold_points` (the risk-coverage curve), `accuracy_by_tag`
and `certify`.

The certificate is fixed-sequence Learn-then-Test with exact binomial tests.
The thresholds are a grid fixed before any label is read (1.00, 0.99, ...,
0.00) and are tested from the most conservative down. At threshold θ a case is
*accepted* when its top option is an item (not `no_match`) with probability
>= θ, not tied with the runner-up and leading it by the margin; an *error* is
an accepted case that is wrong. With n accepted and k errors, the p-value of
"risk(θ) > α" is P(Binomial(n, α) <= k); it is rejected when p <= δ. The
sequence goes on while hypotheses are rejected and stops at the first that is
not: the certified threshold is the lowest rejected one, and with probability
at least 1 - δ its risk (errors among accepted cases) is at most α.

Binomial tails are summed in log space (`lgamma`), which stays accurate for n
in the thousands, and the Clopper-Pearson bounds on the curve are found by
bisection on the same tail, so the app needs no numerical library.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from resolver.domain.judgment import Judgment, ThresholdRule, decide, ranked_options

NO_MATCH = "no_match"
DEFAULT_MARGIN = 0.1
# The certificate's defaults: at most 1% of accepted references wrong, with 95% confidence.
DEFAULT_ALPHA = 0.01
DEFAULT_DELTA = 0.05

# The same tolerance as the pipeline's decide(): 0.5 - 0.4 is
# 0.09999999999999998 in binary and must still pass a 0.1 margin, and two
# probabilities closer than this are a tie.
_TOLERANCE = 1e-9

# How a threshold fared in the fixed sequence.
REJECTED = "rejected"  # risk > alpha rejected: this threshold is certified (and the sequence goes on)
NOT_REJECTED = "not_rejected"  # the sequence stops here
PASSED_OVER = "passed_over"  # too few accepted cases to reject whatever the labels; not a test


@dataclass(frozen=True)
class CaseOutcome:
    """What a judge or scorer answered for one labelled case.

    `top_option` is the most probable option: "no_match", or an item (a
    candidate number for a judge, any key a scorer uses, such as an item's
    UID). `verdict` is whether that top option is right when it is not a
    plain comparison with `expected` (a calendar case compares UIDs and
    occurrences: the runner sets it from `CalendarCase.is_right`); when it is
    None the top option is compared with `expected`.
    """

    case_id: str
    expected: int | str | tuple[str, ...]  # a candidate number, "no_match", or a calendar case's UIDs
    top_option: str
    top_probability: float
    runner_up_probability: float
    tags: tuple[str, ...] = ()
    verdict: bool | None = None
    # A scorer's answer for an event: the start of the occurrence it means (ISO 8601 with offset).
    occurrence_start: str | None = None
    # The pipeline answered the case before the scorer weighed a candidate: an exact title, ID or UID (one item,
    # or a tie of several), or a question by date alone. No threshold admits it, and its top option says
    # nothing of the scorer, so `accuracy_by_tag` counts it apart (the built-in ranker's exact cases are not
    # its errors).
    settled: bool = False

    @property
    def correct(self) -> bool:
        if self.verdict is not None:
            return self.verdict
        # Option keys are strings on the wire; expected numbers are ints in the file.
        return self.top_option == str(self.expected)

    @property
    def expects_nothing(self) -> bool:
        """The reference names nothing in the calendar: any resolution of it is an error."""
        return self.expected == NO_MATCH or self.expected == ()


@dataclass(frozen=True)
class ThresholdPoint:
    """The outcome of resolving on confidence at one threshold: one row of the risk-coverage curve."""

    threshold: float
    total: int
    admitted: int  # n: cases accepted
    coverage: float
    errors: int  # k: accepted cases that are wrong
    risk: float | None  # None when nothing is admitted
    risk_upper: float | None  # one-sided Clopper-Pearson upper bound at 1 - delta; None when nothing is admitted
    no_match_resolved: int  # references to nothing that would have been resolved to an item


@dataclass(frozen=True)
class TagAccuracy:
    cases: int
    correct: int  # of the cases the scorer weighed (cases - settled)
    accuracy: float | None  # correct / weighed; None when the pipeline answered every case of the tag first
    settled: int = 0  # answered before the scorer weighed a candidate (CaseOutcome.settled)


@dataclass(frozen=True)
class SequenceStep:
    """One threshold of the fixed sequence: its counts, p-value and outcome."""

    threshold: float
    n: int
    k: int
    p_value: float | None  # None when passed over
    outcome: str  # REJECTED, NOT_REJECTED or PASSED_OVER


@dataclass(frozen=True)
class Certificate:
    """A certified threshold, or the refusal to certify one and why.

    When `threshold` is set: with probability at least 1 - delta, the share of
    wrong resolutions among the references this threshold resolves is at most
    alpha (n accepted cases with k errors, p-value <= delta, and every higher
    threshold of the sequence rejected too).
    """

    alpha: float
    delta: float
    margin: float
    total: int  # the cases considered
    required_n: int  # the fewest accepted cases that can pass at zero errors
    model: str
    fingerprint: str
    cases_digest: str
    threshold: float | None = None
    n: int | None = None
    k: int | None = None
    coverage: float | None = None
    p_value: float | None = None
    risk_upper: float | None = None  # Clopper-Pearson upper bound at 1 - delta at the threshold (<= alpha)
    refusal: str | None = None
    steps: tuple[SequenceStep, ...] = field(default=())

    @property
    def certified(self) -> bool:
        return self.threshold is not None


def threshold_grid() -> tuple[float, ...]:
    """0.00, 0.01, ..., 1.00: built from integers so no step accumulates drift."""
    return tuple(round(step / 100, 2) for step in range(101))


def certification_sequence() -> tuple[float, ...]:
    """The order the certificate tests thresholds in: 1.00 down to 0.00, fixed before any label is read."""
    return tuple(reversed(threshold_grid()))


def is_admitted(
    *,
    top_option: str,
    top_probability: float,
    runner_up_probability: float,
    threshold: float,
    margin: float = DEFAULT_MARGIN,
) -> bool:
    """Whether an answer may resolve to an item without asking the user.

    The pipeline's own rule, `decide` in resolver.domain.judgment, applied to
    the two numbers an evaluation keeps: the top option and the runner-up's
    probability stand for the whole distribution, which is all `decide` reads
    (top, runner-up, no_match on top, tie, threshold, margin). A margin of 0
    keeps only the tie rule (for a scorer without a margin rule).
    """
    # decide() reads candidate numbers; a scorer's item key (a UID) stands in as "1".
    key = top_option if top_option == NO_MATCH or top_option.isdigit() else "1"
    runner_up = NO_MATCH if key != NO_MATCH else "runner_up"
    judgment = Judgment(
        model="", choice=key, server_request_id=None, latency_ms=0, attempts=0, backend="",
        probabilities={key: top_probability, runner_up: runner_up_probability},
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
    """A CaseOutcome from a judge's answer: the top option and the runner-up's probability.

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


# -- exact binomial tails ----------------------------------------------------------------

def _log_binomial_pmf(k: int, n: int, p: float) -> float:
    log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return log_choose + k * math.log(p) + (n - k) * math.log1p(-p)


def log_binomial_cdf(k: int, n: int, p: float) -> float:
    """log P(X <= k) for X ~ Binomial(n, p), 0 < p < 1, summed in log space.

    Each term stays a logarithm until the largest is factored out, so terms
    far below float range (n in the thousands) neither underflow nor swamp
    the sum.
    """
    if n < 0 or k < 0:
        raise ValueError(f"need 0 <= k and 0 <= n, got k={k}, n={n}")
    if k >= n:
        return 0.0
    terms = [_log_binomial_pmf(i, n, p) for i in range(k + 1)]
    top = max(terms)
    return top + math.log(math.fsum(math.exp(term - top) for term in terms))


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), with 0 < p < 1."""
    return math.exp(log_binomial_cdf(k, n, p))


def p_value(k: int, n: int, alpha: float) -> float:
    """The exact p-value of "risk > alpha" after k errors in n accepted cases: P(Binomial(n, alpha) <= k)."""
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= errors <= accepted, got {k} of {n}")
    return binomial_cdf(k, n, alpha)


def required_sample_size(alpha: float, delta: float) -> int:
    """The fewest accepted cases that can reject "risk > alpha" at all: the smallest n with (1-alpha)^n <= delta.

    Below it even zero errors leave a p-value above delta (299 at alpha 0.01, delta 0.05).
    """
    if not (0.0 < alpha < 1.0 and 0.0 < delta < 1.0):
        raise ValueError("alpha and delta must be between 0 and 1")
    n = max(1, math.ceil(math.log(delta) / math.log1p(-alpha)))
    # The division can land a hair on either side of an integer: settle it on the test itself.
    while n > 1 and p_value(0, n - 1, alpha) <= delta:
        n -= 1
    while p_value(0, n, alpha) > delta:
        n += 1
    return n


def clopper_pearson_upper(errors: int, trials: int, *, delta: float = DEFAULT_DELTA) -> float | None:
    """One-sided Clopper-Pearson upper bound at confidence 1 - delta for errors/trials.

    It is the p at which seeing `errors` or fewer has probability delta, i.e.
    Beta.ppf(1 - delta, errors + 1, trials - errors). It is at most alpha
    exactly when the p-value of "risk > alpha" is at most delta, so the curve
    and the certificate agree. (The two-sided 95% interval's upper limit is
    delta = 0.025.)
    """
    if trials < 0 or errors < 0 or errors > trials:
        raise ValueError(f"need 0 <= errors <= trials, got {errors} of {trials}")
    if not 0.0 < delta < 1.0:
        raise ValueError("delta must be between 0 and 1")
    if trials == 0:
        return None
    if errors == trials:
        return 1.0
    return _upper_limit(errors, trials, delta)


# Neighbouring thresholds often admit the same cases; the bisection is then
# not worth repeating.
@functools.lru_cache(maxsize=4096)
def _upper_limit(errors: int, trials: int, tail: float) -> float:
    # The CDF falls from 1 at p=0 to 0 at p=1, so the root is bracketed; 200
    # halvings are far below float resolution and stop early once the bracket
    # cannot shrink any further.
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if binomial_cdf(errors, trials, middle) > tail:
            low = middle
        else:
            high = middle
    return high


# -- the curve -------------------------------------------------------------------------------

def _admissible(outcomes: Sequence[CaseOutcome], *, margin: float) -> list[CaseOutcome]:
    """The outcomes accepted at threshold 0: every rule of `decide` but the threshold itself.

    Only the threshold check depends on the threshold, so an outcome is
    accepted at t exactly when it is admissible and its top probability is at
    least t; one `decide` per outcome instead of one per outcome and threshold.
    A settled case (answered before the scorer weighed it) is never accepted.
    """
    return [
        outcome
        for outcome in outcomes
        if not outcome.settled and is_admitted(
            top_option=outcome.top_option,
            top_probability=outcome.top_probability,
            runner_up_probability=outcome.runner_up_probability,
            threshold=0.0,
            margin=margin,
        )
    ]


def _accepted(admissible: Sequence[CaseOutcome], *, threshold: float) -> list[CaseOutcome]:
    # The same comparison as decide(): below the threshold refuses, equal passes.
    return [outcome for outcome in admissible if not outcome.top_probability < threshold]


def _point(outcomes: Sequence[CaseOutcome], admissible: Sequence[CaseOutcome], *, threshold: float,
           delta: float) -> ThresholdPoint:
    admitted = _accepted(admissible, threshold=threshold)
    errors = sum(1 for outcome in admitted if not outcome.correct)
    count = len(admitted)
    return ThresholdPoint(
        threshold=threshold,
        total=len(outcomes),
        admitted=count,
        coverage=count / len(outcomes),
        errors=errors,
        risk=errors / count if count else None,
        risk_upper=clopper_pearson_upper(errors, count, delta=delta),
        no_match_resolved=sum(1 for outcome in admitted if outcome.expects_nothing),
    )


def threshold_points(
    outcomes: Sequence[CaseOutcome], *, margin: float = DEFAULT_MARGIN, delta: float = DEFAULT_DELTA
) -> list[ThresholdPoint]:
    """One point per threshold on the 0.00..1.00 grid, in increasing order."""
    if not outcomes:
        raise ValueError("no outcomes to evaluate")
    admissible = _admissible(outcomes, margin=margin)
    return [_point(outcomes, admissible, threshold=threshold, delta=delta) for threshold in threshold_grid()]


def accuracy_by_tag(outcomes: Iterable[CaseOutcome]) -> dict[str, TagAccuracy]:
    """How often the top option is right, per tag and over all cases ("all").

    Thresholds play no part: this says where the model is weak, not what a
    threshold would admit. A case the pipeline answered before the scorer
    weighed anything (`CaseOutcome.settled`) is counted in `settled`, not in
    the accuracy: it says nothing of the scorer.
    """
    counts: dict[str, list[int]] = {"all": [0, 0, 0]}
    for outcome in outcomes:
        for tag in ("all", *outcome.tags):
            tally = counts.setdefault(tag, [0, 0, 0])
            tally[0] += 1
            if outcome.settled:
                tally[2] += 1
            else:
                tally[1] += int(outcome.correct)
    ordered = ["all", *sorted(tag for tag in counts if tag != "all")]
    return {
        tag: TagAccuracy(cases=cases, correct=correct, settled=settled,
                         accuracy=correct / (cases - settled) if cases > settled else None)
        for tag in ordered
        for cases, correct, settled in [counts[tag]]
        if cases
    }


# -- the certificate ---------------------------------------------------------------------------

def _check_levels(alpha: float, delta: float) -> None:
    if not (math.isfinite(alpha) and 0.0 < alpha < 1.0):
        raise ValueError("alpha must be between 0 and 1 (exclusive)")
    if not (math.isfinite(delta) and 0.0 < delta < 1.0):
        raise ValueError("delta must be between 0 and 1 (exclusive)")


def refused(reason: str, *, alpha: float, delta: float, margin: float, total: int, model: str, fingerprint: str,
            cases_digest: str) -> Certificate:
    """A certificate that certifies nothing, for a reason found before any test (an incomplete run, say)."""
    _check_levels(alpha, delta)
    return Certificate(alpha=alpha, delta=delta, margin=margin, total=total,
                       required_n=required_sample_size(alpha, delta), model=model, fingerprint=fingerprint,
                       cases_digest=cases_digest, refusal=reason)


def certify(
    outcomes: Sequence[CaseOutcome],
    *,
    alpha: float = DEFAULT_ALPHA,
    delta: float = DEFAULT_DELTA,
    margin: float = DEFAULT_MARGIN,
    model: str,
    fingerprint: str,
    cases_digest: str,
) -> Certificate:
    """Fixed-sequence Learn-then-Test over `certification_sequence()`: the lowest threshold certified, or why none.

    A threshold that accepts fewer than `required_sample_size` cases cannot be
    rejected whatever its labels say: it is passed over, not failed, and so
    the sequence really starts at the first threshold that accepts enough.
    Whether a threshold is passed over depends on the scores alone (which cases
    are accepted), never on a label, so the sequence stays fixed before any
    label is read and the family-wise guarantee holds.
    """
    _check_levels(alpha, delta)
    needed = required_sample_size(alpha, delta)
    base = dict(alpha=alpha, delta=delta, margin=margin, total=len(outcomes), required_n=needed, model=model,
                fingerprint=fingerprint, cases_digest=cases_digest)
    if not outcomes:
        return Certificate(**base, refusal="there are no cases to certify on")
    counts: list[tuple[float, int, int]] = []
    admissible = _admissible(outcomes, margin=margin)
    for threshold in certification_sequence():
        accepted = _accepted(admissible, threshold=threshold)
        counts.append((threshold, len(accepted), sum(1 for outcome in accepted if not outcome.correct)))
    most = max(n for _, n, _ in counts)
    if most < needed:
        return Certificate(**base, refusal=(
            f"needs at least {needed} accepted cases with no error; the best threshold accepted {most} "
            f"(of {len(outcomes)} cases; alpha {alpha:g}, delta {delta:g})"))
    steps: list[SequenceStep] = []
    last_rejected: SequenceStep | None = None
    for threshold, n, k in counts:
        if n < needed:
            steps.append(SequenceStep(threshold=threshold, n=n, k=k, p_value=None, outcome=PASSED_OVER))
            continue
        p = p_value(k, n, alpha)
        if p <= delta:
            last_rejected = SequenceStep(threshold=threshold, n=n, k=k, p_value=p, outcome=REJECTED)
            steps.append(last_rejected)
            continue
        steps.append(SequenceStep(threshold=threshold, n=n, k=k, p_value=p, outcome=NOT_REJECTED))
        break
    if last_rejected is None:
        first = steps[-1]
        return Certificate(**base, steps=tuple(steps), refusal=(
            f"the first threshold tested, {first.threshold:.2f}, accepted {first.n} cases with {first.k} "
            f"error(s): p-value {first.p_value:.3g} > delta {delta:g}, so a risk above alpha {alpha:g} cannot "
            "be ruled out there, and the fixed sequence stops at its first failure"))
    n, k = last_rejected.n, last_rejected.k
    return Certificate(**base, threshold=last_rejected.threshold, n=n, k=k, coverage=n / len(outcomes),
                       p_value=last_rejected.p_value, risk_upper=clopper_pearson_upper(k, n, delta=delta),
                       steps=tuple(steps))
