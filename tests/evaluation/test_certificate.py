"""The certificate's arithmetic against exact binomial values, and the fixed sequence.

Exact values are computed here with fractions and math.comb: alpha = 1/100
exactly, so every p-value below is a rational number known to the last digit.
"""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

from resolver.evaluation.metrics import (
    NOT_REJECTED,
    PASSED_OVER,
    REJECTED,
    CaseOutcome,
    certification_sequence,
    certify,
    clopper_pearson_upper,
    log_binomial_cdf,
    p_value,
    refused,
    required_sample_size,
)

ALPHA = Fraction(1, 100)
DELTA = Fraction(5, 100)
IDENTITY = dict(model="ranker-test-1", fingerprint="a" * 64, cases_digest="c" * 64)


def exact_p_value(k: int, n: int, alpha: Fraction = ALPHA) -> Fraction:
    """P(Binomial(n, alpha) <= k), exactly."""
    return sum((math.comb(n, i) * alpha ** i * (1 - alpha) ** (n - i) for i in range(k + 1)), Fraction(0))


def outcomes(*groups: tuple[int, float, bool], top: str = "1") -> list[CaseOutcome]:
    """`count` cases answered with probability p, right or wrong; the runner-up gets nothing."""
    made = []
    for count, probability, right in groups:
        for _ in range(count):
            made.append(CaseOutcome(f"c{len(made)}", 1, top, probability, 0.0, verdict=right))
    return made


# -- exact arithmetic -----------------------------------------------------------------------------

@pytest.mark.parametrize(("k", "n"), [(0, 299), (0, 298), (1, 473), (1, 472), (0, 1), (3, 500), (2, 1000),
                                      (12, 2000), (30, 5000), (60, 5000)])
def test_p_value__matches_the_exact_binomial_tail(k: int, n: int) -> None:
    exact = exact_p_value(k, n)
    assert p_value(k, n, 0.01) == pytest.approx(float(exact), rel=1e-9)


def test_p_value__in_log_space_where_the_tail_underflows() -> None:
    """k = 0 of 100000 at alpha 0.01: 0.99^100000 is ~1e-437, below float range; its logarithm is not."""
    assert log_binomial_cdf(0, 100_000, 0.01) == pytest.approx(100_000 * math.log(0.99), rel=1e-12)
    assert p_value(0, 100_000, 0.01) == 0.0


def test_p_value__299_passes_at_zero_errors_298_does_not() -> None:
    assert exact_p_value(0, 299) <= DELTA < exact_p_value(0, 298)
    assert p_value(0, 299, 0.01) <= 0.05 < p_value(0, 298, 0.01)
    assert required_sample_size(0.01, 0.05) == 299


def test_p_value__one_error_needs_473() -> None:
    assert exact_p_value(1, 473) <= DELTA < exact_p_value(1, 472)
    assert p_value(1, 473, 0.01) <= 0.05 < p_value(1, 472, 0.01)
    assert min(n for n in range(299, 600) if p_value(1, n, 0.01) <= 0.05) == 473


@pytest.mark.parametrize(("alpha", "delta"), [(0.01, 0.05), (0.02, 0.05), (0.05, 0.1), (0.001, 0.01), (0.3, 0.05)])
def test_required_sample_size__is_the_smallest_n_with_no_error_passing(alpha: float, delta: float) -> None:
    n = required_sample_size(alpha, delta)
    a, d = Fraction(alpha), Fraction(delta)
    assert (1 - a) ** n <= d < (1 - a) ** (n - 1)


def test_clopper_pearson_upper__at_most_alpha_exactly_when_the_test_rejects() -> None:
    """The curve's bound and the certificate agree: upper <= alpha iff p-value <= delta."""
    for n, k in [(299, 0), (298, 0), (473, 1), (472, 1), (1000, 4), (1000, 5)]:
        rejects = p_value(k, n, 0.01) <= 0.05
        assert (clopper_pearson_upper(k, n, delta=0.05) <= 0.01) == rejects, (n, k)


# -- the fixed sequence ------------------------------------------------------------------------------

def test_certification_sequence__from_the_most_conservative_down() -> None:
    sequence = certification_sequence()
    assert sequence[0] == 1.0 and sequence[-1] == 0.0 and len(sequence) == 101
    assert list(sequence) == sorted(sequence, reverse=True)


def test_certify__the_lowest_rejected_threshold_and_a_stop_at_the_first_failure() -> None:
    """400 right at 0.99; 100 more at 0.95 with 3 wrong; 2000 more right at 0.90.

    0.99 - 0.96: 400 accepted, no error: p = 0.99^400 = 0.018, rejected.
    0.95: 500 accepted, 3 errors: p = P(Bin(500, 0.01) <= 3) = 0.265 > 0.05: the sequence stops.
    0.90 would pass on its own (2500 accepted, 3 errors, p ~ 1e-7) but is never tested.
    """
    cases = outcomes((400, 0.99, True), (97, 0.95, True), (3, 0.95, False), (2000, 0.90, True))
    certificate = certify(cases, alpha=0.01, delta=0.05, margin=0.1, **IDENTITY)
    assert certificate.certified
    assert (certificate.threshold, certificate.n, certificate.k, certificate.total) == (0.96, 400, 0, 2500)
    assert certificate.coverage == 400 / 2500
    assert certificate.p_value == pytest.approx(float(exact_p_value(0, 400)), rel=1e-9)
    assert certificate.risk_upper is not None and certificate.risk_upper <= 0.01
    assert certificate.refusal is None
    steps = certificate.steps
    assert [s.threshold for s in steps] == [1.0, 0.99, 0.98, 0.97, 0.96, 0.95]
    assert [s.outcome for s in steps] == [PASSED_OVER] + [REJECTED] * 4 + [NOT_REJECTED]
    assert (steps[0].n, steps[0].p_value) == (0, None)
    assert (steps[-1].n, steps[-1].k) == (500, 3)
    assert steps[-1].p_value == pytest.approx(float(exact_p_value(3, 500)), rel=1e-9)
    # On its own, 0.90 would have passed: the stop is the procedure's, not the data's.
    assert p_value(3, 2500, 0.01) <= 0.05


def test_certify__every_threshold_rejected_certifies_zero() -> None:
    certificate = certify(outcomes((300, 0.5, True)), alpha=0.01, delta=0.05, margin=0.0, **IDENTITY)
    assert (certificate.threshold, certificate.n, certificate.k, certificate.coverage) == (0.0, 300, 0, 1.0)
    assert certificate.steps[-1].outcome == REJECTED and len(certificate.steps) == 101


def test_certify__the_first_test_failing_certifies_nothing() -> None:
    """300 accepted at 0.99 with 1 error: p = 0.198 at the first threshold tested."""
    certificate = certify(outcomes((299, 0.99, True), (1, 0.99, False), (500, 0.7, True)), alpha=0.01,
                          delta=0.05, margin=0.1, **IDENTITY)
    assert not certificate.certified
    assert (certificate.threshold, certificate.n, certificate.k, certificate.p_value) == (None, None, None, None)
    assert [s.outcome for s in certificate.steps] == [PASSED_OVER, NOT_REJECTED]
    assert certificate.refusal == (
        "the first threshold tested, 0.99, accepted 300 cases with 1 error(s): p-value 0.198 > delta 0.05, so a "
        "risk above alpha 0.01 cannot be ruled out there, and the fixed sequence stops at its first failure")


def test_certify__refuses_below_the_sample_size_and_says_so() -> None:
    """212 cases accepted at best (at 0.00): even with no error the bound needs 299."""
    cases = outcomes((212, 0.8, True)) + outcomes((50, 0.9, True), top="no_match")
    certificate = certify(cases, alpha=0.01, delta=0.05, margin=0.1, **IDENTITY)
    assert not certificate.certified and certificate.steps == ()
    assert certificate.required_n == 299
    assert certificate.refusal == ("needs at least 299 accepted cases with no error; the best threshold accepted "
                                   "212 (of 262 cases; alpha 0.01, delta 0.05)")


def test_certify__what_counts_as_an_error() -> None:
    """A reference to nothing resolved to an item is an error; no_match on top is never accepted."""
    nothing = [CaseOutcome(f"n{i}", "no_match", "2", 0.99, 0.0) for i in range(3)]
    calendar_nothing = [CaseOutcome(f"e{i}", (), "t-a", 0.99, 0.0, verdict=False) for i in range(2)]
    declined = [CaseOutcome(f"d{i}", 1, "no_match", 0.99, 0.0) for i in range(100)]
    right = outcomes((600, 0.99, True))
    certificate = certify(right + nothing + calendar_nothing + declined, alpha=0.01, delta=0.05, margin=0.1,
                          **IDENTITY)
    tested = certificate.steps[-1]
    assert (tested.threshold, tested.n, tested.k, certificate.total) == (0.99, 605, 5, 705)
    assert tested.p_value == pytest.approx(float(exact_p_value(5, 605)), rel=1e-9)
    assert not certificate.certified


def test_certify__the_margin_rule_is_configurable() -> None:
    """Cases leading the runner-up by 0.05 are accepted with no margin and refused with 0.1."""
    close = [CaseOutcome(f"x{i}", 1, "1", 0.6, 0.55) for i in range(300)]
    assert certify(close, alpha=0.01, delta=0.05, margin=0.0, **IDENTITY).threshold == 0.0
    refusal = certify(close, alpha=0.01, delta=0.05, margin=0.1, **IDENTITY).refusal
    assert refusal is not None and refusal.startswith("needs at least 299 accepted cases with no error; "
                                                      "the best threshold accepted 0")


def test_refused__carries_the_identity_and_the_reason() -> None:
    certificate = refused("3 of 12 cases are unanswered", alpha=0.01, delta=0.05, margin=0.1, total=12, **IDENTITY)
    assert not certificate.certified
    assert (certificate.refusal, certificate.required_n, certificate.model) == (
        "3 of 12 cases are unanswered", 299, "ranker-test-1")


@pytest.mark.parametrize(("alpha", "delta"), [(0.0, 0.05), (1.0, 0.05), (0.01, 0.0), (0.01, 1.0),
                                              (float("nan"), 0.05)])
def test_certify__refuses_levels_outside_the_unit_interval(alpha: float, delta: float) -> None:
    with pytest.raises(ValueError):
        certify(outcomes((1, 0.9, True)), alpha=alpha, delta=delta, margin=0.1, **IDENTITY)
