"""resolver/thresholds.py: which approved threshold applies, and the database's constraints on the rows.

Only an exact active match gives a rule; the newest approval wins.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import override_settings
from django.utils import timezone

from resolver.domain.judgment import QUESTION_ID, ThresholdRule, question_fingerprint
from resolver.models import ApprovedThreshold
from resolver.thresholds import DatabaseThresholdPolicy

pytestmark = pytest.mark.django_db

MODEL = "jev-1.13.0"


def make_threshold(**overrides: Any) -> ApprovedThreshold:
    fields: dict[str, Any] = dict(
        question=QUESTION_ID,
        model=MODEL,
        fingerprint=question_fingerprint(),
        threshold=0.82,
        cases=400,
        admitted_accuracy=0.99,
        coverage=0.7,
        risk_upper_bound=0.02,
        evaluated_at=timezone.now(),
        evidence={"cases": 400},
        active=True,
        approved_at=timezone.now(),
    )
    fields.update(overrides)
    return ApprovedThreshold.objects.create(**fields)


def find(**overrides: str) -> ThresholdRule | None:
    query = {"question": QUESTION_ID, "model": MODEL, "fingerprint": question_fingerprint(), **overrides}
    return DatabaseThresholdPolicy().find(**query)


def test_find__nothing_approved() -> None:
    assert find() is None


@override_settings(RESOLVER={"THRESHOLD_MARGIN": 0.15})
def test_find__an_exact_active_match_gives_the_rule() -> None:
    row = make_threshold(threshold=0.82)
    assert find() == ThresholdRule(threshold=0.82, margin=0.15, approved_id=row.pk)  # provenance names the row


@pytest.mark.parametrize(
    "mismatch",
    [{"model": "jev-1.14.0"}, {"model": "jev-latest"}, {"fingerprint": "0" * 64}, {"question": "reference_match.v2"}],
)
def test_find__any_mismatch_gives_nothing(mismatch: dict[str, str]) -> None:
    make_threshold()
    assert find(**mismatch) is None


def test_find__an_inactive_row_gives_nothing() -> None:
    make_threshold(active=False)
    assert find() is None


def test_find__the_newest_approval_wins() -> None:
    now = timezone.now()
    make_threshold(threshold=0.9, approved_at=now - timedelta(days=2))
    make_threshold(threshold=0.7, approved_at=now - timedelta(days=1))
    make_threshold(threshold=0.5, active=False, approved_at=now)
    rule = find()
    assert rule is not None
    assert rule.threshold == 0.7


def test_database__refuses_an_active_row_without_approval() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        make_threshold(active=True, approved_at=None)


def test_database__refuses_a_threshold_outside_the_unit_interval() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        make_threshold(threshold=1.5)
