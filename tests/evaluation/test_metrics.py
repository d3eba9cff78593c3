"""resolver/evaluation/metrics.py: the threshold grid and points, admission, outcomes, accuracy, the bound.

The admission rule agrees with the pipeline's decision; the Clopper-Pearson
upper bound is checked against known values and closed forms.
"""
from __future__ import annotations

import math
import random

import pytest

from resolver.domain.judgment import Judgment, ThresholdRule, decide
from resolver.evaluation.metrics import (
    CaseOutcome,
    TagAccuracy,
    ThresholdPoint,
    accuracy_by_tag,
    clopper_pearson_upper,
    is_admitted,
    outcome_from_probabilities,
    threshold_grid,
    threshold_points,
)

# A hand-computed set of ten outcomes, margin 0.1.
#
#  id   expected  top        p     runner-up  gap   admissible?                 right?
#  o1   1         "1"        0.95  0.03       0.92  yes                         yes
#  o2   2         "2"        0.90  0.05       0.85  yes                         yes
#  o3   3         "3"        0.85  0.10       0.75  yes                         yes
#  o4   1         "2"        0.80  0.15       0.65  yes                         no
#  o5   no_match  "4"        0.75  0.20       0.55  yes                         no (no_match resolved)
#  o6   2         "2"        0.70  0.65       0.05  never: gap < margin         yes
#  o7   no_match  no_match   0.92  0.05       0.87  never: no_match on top      yes
#  o8   5         "5"        0.60  0.30       0.30  yes                         yes
#  o9   4         "1"        0.55  0.40       0.15  yes                         no
#  o10  3         "3"        0.50  0.40       0.10  yes: 0.5 - 0.4 is 0.0999... yes
#
# Admitted at threshold t = the admissible outcomes with p >= t:
#
#  t            admitted                  n  errors      coverage  risk   no_match resolved  upper (95% CP)
#  0.00..0.50   o1 o2 o3 o4 o5 o8 o9 o10  8  o4 o5 o9 =3  0.8       3/8    1                  0.7551
#  0.51..0.55   o1 o2 o3 o4 o5 o8 o9      7  3           0.7       3/7    1                  0.8159
#  0.56..0.60   o1 o2 o3 o4 o5 o8         6  2           0.6       2/6    1                  0.7772
#  0.61..0.75   o1 o2 o3 o4 o5            5  2           0.5       2/5    1                  0.8534
#  0.76..0.80   o1 o2 o3 o4               4  1           0.4       1/4    0                  0.8059
#  0.81..0.85   o1 o2 o3                  3  0           0.3       0      0                  1 - 0.025^(1/3) = 0.7076
#  0.86..0.90   o1 o2                     2  0           0.2       0      0                  1 - 0.025^(1/2) = 0.8419
#  0.91..0.95   o1                        1  0           0.1       0      0                  0.975
#  0.96..1.00   none                      0  0           0.0       None   0                  None
#
# The bounds that are not closed forms were checked against Beta.ppf(0.975,
# errors + 1, n - errors) from an independent numerical integration: the
# one-sided bound at delta = 0.025.
OUTCOMES = [
    CaseOutcome("o1", 1, "1", 0.95, 0.03, ("paraphrase",)),
    CaseOutcome("o2", 2, "2", 0.90, 0.05, ("partial",)),
    CaseOutcome("o3", 3, "3", 0.85, 0.10, ("paraphrase", "typo")),
    CaseOutcome("o4", 1, "2", 0.80, 0.15, ("near_duplicate",)),
    CaseOutcome("o5", "no_match", "4", 0.75, 0.20, ("no_match",)),
    CaseOutcome("o6", 2, "2", 0.70, 0.65, ("near_duplicate",)),
    CaseOutcome("o7", "no_match", "no_match", 0.92, 0.05, ("no_match",)),
    CaseOutcome("o8", 5, "5", 0.60, 0.30, ("numbers_in_text",)),
    CaseOutcome("o9", 4, "1", 0.55, 0.40, ("paraphrase",)),
    CaseOutcome("o10", 3, "3", 0.50, 0.40, ("partial",)),
]

# threshold -> (admitted, errors, coverage, risk, no_match_resolved, upper bound)
EXPECTED = {
    0.0: (8, 3, 0.8, 3 / 8, 1, 0.7551),
    0.5: (8, 3, 0.8, 3 / 8, 1, 0.7551),
    0.51: (7, 3, 0.7, 3 / 7, 1, 0.8159),
    0.55: (7, 3, 0.7, 3 / 7, 1, 0.8159),
    0.56: (6, 2, 0.6, 2 / 6, 1, 0.7772),
    0.7: (5, 2, 0.5, 2 / 5, 1, 0.8534),
    0.75: (5, 2, 0.5, 2 / 5, 1, 0.8534),
    0.76: (4, 1, 0.4, 1 / 4, 0, 0.8059),
    0.8: (4, 1, 0.4, 1 / 4, 0, 0.8059),
    0.81: (3, 0, 0.3, 0.0, 0, 1 - 0.025 ** (1 / 3)),
    0.9: (2, 0, 0.2, 0.0, 0, 1 - 0.025 ** (1 / 2)),
    0.95: (1, 0, 0.1, 0.0, 0, 0.975),
}


@pytest.fixture(scope="module")
def points() -> dict[float, ThresholdPoint]:
    return {point.threshold: point for point in threshold_points(OUTCOMES, margin=0.1, delta=0.025)}


def test_threshold_grid__101_exact_steps() -> None:
    grid = threshold_grid()
    assert len(grid) == 101
    assert grid[0] == 0.0 and grid[-1] == 1.0
    # Each step is the float nearest its decimal, not an accumulated sum.
    assert grid[7] == 0.07 and grid[29] == 0.29 and grid[57] == 0.57
    assert sorted(set(grid)) == list(grid)


@pytest.mark.parametrize("threshold", sorted(EXPECTED))
def test_threshold_points__hand_computed(points: dict[float, ThresholdPoint], threshold: float) -> None:
    admitted, errors, coverage, risk, no_match_resolved, upper = EXPECTED[threshold]
    point = points[threshold]
    assert point.total == 10
    assert point.admitted == admitted
    assert point.errors == errors
    assert point.coverage == coverage
    assert point.risk == risk
    assert point.no_match_resolved == no_match_resolved
    assert point.risk_upper == pytest.approx(upper, abs=1e-4)


def test_threshold_points__nothing_admitted_above_the_top_probability(points: dict[float, ThresholdPoint]) -> None:
    for threshold in (0.96, 0.99, 1.0):
        point = points[threshold]
        assert (point.admitted, point.errors, point.coverage) == (0, 0, 0.0)
        assert point.risk is None
        assert point.risk_upper is None


def test_threshold_points__one_per_grid_step(points: dict[float, ThresholdPoint]) -> None:
    assert list(points) == list(threshold_grid())


def test_threshold_points__margin_is_a_parameter() -> None:
    """With no margin o6 (gap 0.05) is admitted up to 0.70; with 0.2, o9 and o10 drop out."""
    no_margin = {p.threshold: p for p in threshold_points(OUTCOMES, margin=0.0)}
    assert no_margin[0.7].admitted == 6
    wide = {p.threshold: p for p in threshold_points(OUTCOMES, margin=0.2)}
    assert wide[0.0].admitted == 6  # o1 o2 o3 o4 o5 o8
    assert wide[0.0].errors == 2


def test_threshold_points__refuses_no_outcomes() -> None:
    with pytest.raises(ValueError):
        threshold_points([])


def test_is_admitted__margin_rule() -> None:
    base = dict(top_option="2", threshold=0.5, margin=0.1)
    assert is_admitted(top_probability=0.8, runner_up_probability=0.1, **base)
    assert not is_admitted(top_probability=0.8, runner_up_probability=0.75, **base)
    # Exactly the margin passes, even where binary floats fall a hair short.
    assert is_admitted(top_probability=0.5, runner_up_probability=0.4, **base)
    assert is_admitted(top_probability=0.7, runner_up_probability=0.6, **base)
    assert not is_admitted(top_probability=0.7, runner_up_probability=0.61, **base)


def test_is_admitted__threshold_is_inclusive() -> None:
    assert is_admitted(top_option="1", top_probability=0.7, runner_up_probability=0.1, threshold=0.7, margin=0.1)
    assert not is_admitted(top_option="1", top_probability=0.69, runner_up_probability=0.1, threshold=0.7, margin=0.1)


def test_is_admitted__no_match_never_admitted() -> None:
    assert not is_admitted(
        top_option="no_match", top_probability=1.0, runner_up_probability=0.0, threshold=0.0, margin=0.0
    )


def test_is_admitted__a_tie_never_passes_even_without_margin() -> None:
    assert not is_admitted(top_option="1", top_probability=0.5, runner_up_probability=0.5, threshold=0.0, margin=0.0)


def test_is_admitted__agrees_with_the_pipeline_decision() -> None:
    """The evaluation admits exactly what decide() resolves, for random answers and rules."""
    rng = random.Random(11)
    for _ in range(3000):
        count = rng.randint(2, 6)
        # Two-decimal probabilities, as Jev prints them, so ties and exact margins occur.
        weights = [rng.randint(0, 20) for _ in range(count + 1)]
        if not sum(weights):
            continue
        keys = [str(n) for n in range(1, count + 1)] + ["no_match"]
        probabilities = {key: round(w / sum(weights), 2) for key, w in zip(keys, weights)}
        choice = max(probabilities, key=lambda key: probabilities[key])
        rule = ThresholdRule(threshold=rng.choice(threshold_grid()), margin=rng.choice((0.0, 0.05, 0.1, 0.15)))
        judgment = Judgment(
            model="m", choice=choice, probabilities=probabilities, server_request_id=None, latency_ms=0, attempts=1, backend="jev"
        )
        outcome = outcome_from_probabilities(case_id="x", expected=1, choice=choice, probabilities=probabilities)
        admitted = is_admitted(
            top_option=outcome.top_option,
            top_probability=outcome.top_probability,
            runner_up_probability=outcome.runner_up_probability,
            threshold=rule.threshold,
            margin=rule.margin,
        )
        decision = decide(judgment, rule)
        assert admitted == (decision.resolved_number is not None), (probabilities, rule)
        assert outcome.top_option == decision.top_option


def test_outcome_from_probabilities__ranks_and_breaks_ties_by_choice() -> None:
    outcome = outcome_from_probabilities(
        case_id="c1", expected=2, choice="2", probabilities={"1": 0.4, "2": 0.4, "no_match": 0.2}, tags=["partial"]
    )
    assert (outcome.top_option, outcome.top_probability, outcome.runner_up_probability) == ("2", 0.4, 0.4)
    assert outcome.correct
    assert outcome.tags == ("partial",)


def test_outcome__no_match_expected_and_answered_is_correct() -> None:
    assert CaseOutcome("c", "no_match", "no_match", 0.9, 0.1).correct
    assert not CaseOutcome("c", "no_match", "1", 0.9, 0.1).correct
    assert CaseOutcome("c", 12, "12", 0.9, 0.1).correct


def test_accuracy_by_tag__ignores_thresholds() -> None:
    by_tag = accuracy_by_tag(OUTCOMES)
    # Right: o1 o2 o3 o6 o7 o8 o10. o6 and o7 count although never admitted.
    assert by_tag["all"] == TagAccuracy(cases=10, correct=7, accuracy=0.7)
    assert by_tag["paraphrase"] == TagAccuracy(cases=3, correct=2, accuracy=2 / 3)  # o1 o3 | o9
    assert by_tag["partial"] == TagAccuracy(cases=2, correct=2, accuracy=1.0)
    assert by_tag["near_duplicate"] == TagAccuracy(cases=2, correct=1, accuracy=0.5)  # o6 | o4
    assert by_tag["no_match"] == TagAccuracy(cases=2, correct=1, accuracy=0.5)  # o7 | o5
    assert by_tag["typo"] == TagAccuracy(cases=1, correct=1, accuracy=1.0)
    assert list(by_tag)[0] == "all"
    assert list(by_tag)[1:] == sorted(list(by_tag)[1:])


def test_accuracy_by_tag__a_settled_case_is_counted_apart_and_never_admitted() -> None:
    """What the pipeline answered before the scorer weighed anything (an exact title) is not the scorer's."""
    exact = [CaseOutcome(f"e{n}", "t-toner", "no_match", 0.0, 0.0, ("exact",), settled=True) for n in range(3)]
    # Even a settled outcome that claims a top option at 1.0 is never accepted at any threshold.
    claimed = CaseOutcome("x", "1", "1", 1.0, 0.0, ("exact",), settled=True)
    weighed = [CaseOutcome("p1", "1", "1", 0.9, 0.05, ("partial",)),
               CaseOutcome("p2", "1", "2", 0.9, 0.05, ("partial", "exact"))]
    by_tag = accuracy_by_tag([*exact, claimed, *weighed])
    assert by_tag["all"] == TagAccuracy(cases=6, correct=1, accuracy=0.5, settled=4)
    assert by_tag["exact"] == TagAccuracy(cases=5, correct=0, accuracy=0.0, settled=4)
    assert by_tag["partial"] == TagAccuracy(cases=2, correct=1, accuracy=0.5, settled=0)
    assert accuracy_by_tag(exact)["exact"] == TagAccuracy(cases=3, correct=0, accuracy=None, settled=3)
    points = {p.threshold: p for p in threshold_points([*exact, claimed, *weighed], margin=0.1)}
    assert (points[0.0].admitted, points[1.0].admitted) == (2, 0)


@pytest.mark.parametrize(
    ("errors", "trials", "upper"),
    [(0, 150, 0.0243), (1, 100, 0.0545), (5, 50, 0.2181), (2, 300, 0.0239), (10, 400, 0.0455)],
)
def test_clopper_pearson_upper__known_values(errors: int, trials: int, upper: float) -> None:
    """The two-sided 95% interval's upper limits: the one-sided bound at delta 0.025."""
    assert clopper_pearson_upper(errors, trials, delta=0.025) == pytest.approx(upper, abs=1e-4)


@pytest.mark.parametrize("trials", [1, 2, 7, 40, 500])
def test_clopper_pearson_upper__closed_forms(trials: int) -> None:
    """No errors: 1 - delta^(1/n). All but one wrong: (1 - delta)^(1/n)."""
    assert clopper_pearson_upper(0, trials, delta=0.025) == pytest.approx(1 - 0.025 ** (1 / trials), abs=1e-12)
    assert clopper_pearson_upper(trials - 1, trials, delta=0.025) == pytest.approx(0.975 ** (1 / trials), abs=1e-12)
    assert clopper_pearson_upper(0, trials) == pytest.approx(1 - 0.05 ** (1 / trials), abs=1e-12)


def test_clopper_pearson_upper__edges() -> None:
    assert clopper_pearson_upper(0, 0) is None
    assert clopper_pearson_upper(4, 4) == 1.0
    assert clopper_pearson_upper(0, 10, delta=0.1) == pytest.approx(1 - 0.1 ** (1 / 10), abs=1e-12)
    with pytest.raises(ValueError):
        clopper_pearson_upper(0, 10, delta=0.0)
    with pytest.raises(ValueError):
        clopper_pearson_upper(5, 4)
    with pytest.raises(ValueError):
        clopper_pearson_upper(-1, 4)


def test_clopper_pearson_upper__falls_as_evidence_grows() -> None:
    bounds = [clopper_pearson_upper(n // 100, n) for n in (100, 200, 400, 800)]
    assert bounds == sorted(bounds, reverse=True)
    assert all(math.isfinite(b) for b in bounds if b is not None)


def test_threshold_points__count_what_is_admitted_at_each_threshold() -> None:
    """The curve checks the threshold-free rules once per outcome; the counts are those of is_admitted itself."""
    rng = random.Random(5)
    outcomes = []
    for i in range(400):
        # Two-decimal probabilities, so exact thresholds, ties and exact margins occur.
        top = rng.randint(0, 100) / 100
        runner_up = rng.randint(0, int(top * 100)) / 100
        option = rng.choice(("1", "2", "no_match", "t-uid"))
        outcomes.append(CaseOutcome(f"r{i}", 1, option, top, runner_up, verdict=rng.random() < 0.8))
    for margin in (0.0, 0.1):
        for point in threshold_points(outcomes, margin=margin):
            admitted = [o for o in outcomes if is_admitted(
                top_option=o.top_option, top_probability=o.top_probability,
                runner_up_probability=o.runner_up_probability, threshold=point.threshold, margin=margin)]
            assert point.admitted == len(admitted), (margin, point.threshold)
            assert point.errors == sum(1 for o in admitted if not o.correct), (margin, point.threshold)
