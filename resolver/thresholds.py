"""Approved thresholds: the rule for approving one, and reading them for the pipeline.

A threshold becomes active only through `approve_thresholds` (the admin's
"Approve and activate" action calls it), which records who approved it and
when and refuses a row evaluated for another question wording.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

from django.db import DatabaseError, transaction
from django.utils import timezone as django_timezone

from resolver.conf import resolver_settings
from resolver.domain.chat import fingerprint_for
from resolver.domain.judgment import QUESTION_ID, ThresholdRule
from resolver.models import ApprovedThreshold

logger = logging.getLogger("resolver.thresholds")

# Changing any of these on an active row voids its approval.
APPROVED_FIELDS = ("question", "model", "fingerprint", "threshold")


@dataclass(frozen=True)
class ApprovalResult:
    approved: tuple[int, ...] = ()
    # Primary key -> why that row was not approved.
    refused: dict[int, str] = field(default_factory=dict)


def refusal_reason(row: ApprovedThreshold, current_fingerprint: str) -> str | None:
    """Why this row may not be activated, or None when it may."""
    if row.question != QUESTION_ID:
        return f"it was evaluated for question {row.question!r}, not {QUESTION_ID!r}"
    if row.fingerprint != current_fingerprint:
        return "its fingerprint does not match the current question wording"
    if not 0.0 <= row.threshold <= 1.0:
        return "its threshold is outside [0, 1]"
    return None


def advice_only_refusal(row: ApprovedThreshold) -> str | None:
    """A threshold for a model that gives no probabilities (advice only) is never approved."""
    if row.probability_source == "none":
        return "its model gave no log-probabilities (advice only), so no threshold can apply to it"
    return None


def approve_thresholds(*, rows: Iterable[ApprovedThreshold], user: Any,
                       now: datetime | None = None) -> ApprovalResult:
    """Activate every row that may be activated, recording `user` and the time; refuse the rest."""
    approvable: list[int] = []
    refused: dict[int, str] = {}
    for row in rows:
        # Each backend has its own prompt, so its own current fingerprint.
        current = fingerprint_for(row.backend) or ""
        reason = refusal_reason(row, current) or advice_only_refusal(row)
        if reason is None:
            approvable.append(row.pk)
        else:
            refused[row.pk] = reason
    if approvable:
        with transaction.atomic():
            ApprovedThreshold.objects.filter(pk__in=approvable).update(
                active=True, approved_by=user, approved_at=now or django_timezone.now()
            )
    return ApprovalResult(approved=tuple(approvable), refused=refused)


def approval_voided(previous: ApprovedThreshold, current: ApprovedThreshold) -> bool:
    """Whether an edit changed what was approved (so the row must be deactivated)."""
    return any(getattr(previous, name) != getattr(current, name) for name in APPROVED_FIELDS)


class DatabaseThresholdPolicy:
    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        """The active rule for exactly this question, model and wording, or None.

        A threshold measured on one model or one wording says nothing about
        another, so all three must match exactly; the newest approval wins.
        """
        try:
            row = self._active_row(question=question, model=model, fingerprint=fingerprint)
        except DatabaseError as err:
            # No rule is no resolution on confidence: the person is asked, never guessed for.
            logger.warning("thresholds not read error=%s", type(err).__name__)
            return None
        if row is None or not 0.0 <= row.threshold <= 1.0:
            return None
        return ThresholdRule(threshold=row.threshold, margin=float(resolver_settings.THRESHOLD_MARGIN),
                             approved_id=row.pk)

    @staticmethod
    def _active_row(*, question: str, model: str, fingerprint: str) -> ApprovedThreshold | None:
        return (
            ApprovedThreshold.objects.filter(
                active=True,
                approved_at__isnull=False,
                question=question,
                model=model,
                fingerprint=fingerprint,
            )
            .order_by("-approved_at", "-pk")
            .only("pk", "threshold")
            .first()
        )
