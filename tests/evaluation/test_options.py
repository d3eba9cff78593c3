"""resolver/evaluation/options.py: the bounds of one run's options, each broken bound named once.

What the command prints for them is in tests/evaluation/test_evaluate_reference_match.py.
"""
from __future__ import annotations

import math

import pytest

from resolver.evaluation.options import MAX_CONCURRENCY, RunOptions


@pytest.mark.parametrize("options", [
    RunOptions(margin=0.0),
    RunOptions(margin=0.1, alpha=0.01, delta=0.05, concurrency=1),
    RunOptions(margin=0.999, alpha=0.999, delta=0.001, concurrency=MAX_CONCURRENCY),
])
def test_options__within_the_bounds_there_is_nothing_wrong(options: RunOptions) -> None:
    assert options.problems() == []


@pytest.mark.parametrize(("options", "problem"), [
    (RunOptions(margin=0.1, alpha=0.0), "--alpha must be between 0 and 1 (exclusive)"),
    (RunOptions(margin=0.1, alpha=1.0), "--alpha must be between 0 and 1 (exclusive)"),
    (RunOptions(margin=0.1, alpha=math.nan), "--alpha must be between 0 and 1 (exclusive)"),
    (RunOptions(margin=0.1, delta=1.0), "--delta must be between 0 and 1 (exclusive)"),
    (RunOptions(margin=0.1, delta=-math.inf), "--delta must be between 0 and 1 (exclusive)"),
    (RunOptions(margin=1.0), "--margin must be at least 0 and below 1"),
    (RunOptions(margin=-0.01), "--margin must be at least 0 and below 1"),
    (RunOptions(margin=math.inf), "--margin must be at least 0 and below 1"),
    (RunOptions(margin=0.1, concurrency=0), "--concurrency must be 1 to 32"),
    (RunOptions(margin=0.1, concurrency=MAX_CONCURRENCY + 1), "--concurrency must be 1 to 32"),
])
def test_options__each_broken_bound_is_named(options: RunOptions, problem: str) -> None:
    assert options.problems() == [problem]


def test_options__every_broken_bound_is_listed_in_order() -> None:
    found = RunOptions(margin=2.0, alpha=2.0, delta=0.0, concurrency=0).problems()
    assert [p.split()[0] for p in found] == ["--alpha", "--delta", "--margin", "--concurrency"]
