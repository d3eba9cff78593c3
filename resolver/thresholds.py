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

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, transaction
from django.utils import timezone as django_timezone

from resolver.conf import resolver_settings
from resolver.domain.judgment import QUESTION_ID, ThresholdRule, with_retrieval
from resolver.domain.judgment import RANKER_BACKEND as JUDGE_RANKER_BACKEND
from resolver import rankers
from resolver.judges import BUILT_IN
from resolver.judges.registry import judge_from_settings
from resolver.models import ApprovedThreshold

logger = logging.getLogger("resolver.thresholds")

# Changing any of these on an active row voids its approval.
APPROVED_FIELDS = ("question", "model", "fingerprint", "threshold")
# The backend of thresholds certified for the built-in ranker (resolver.evaluation.ranking).
RANKER_BACKEND = JUDGE_RANKER_BACKEND


def current_fingerprint(backend: str) -> str | None:
    """The fingerprint a row of this backend must carry to be approved now; None: nothing is approvable.

    A judge's is asked of the judge (judge_fingerprint); the built-in ranker's
    comes from the deployed ranker (resolver.rankers.current_fingerprint).
    """
    if backend == RANKER_BACKEND:
        return rankers.current_fingerprint()
    prompt = judge_fingerprint(backend)
    # A judge is evaluated on the candidates the deployed ranker chooses (RunOptions.retrieval).
    return None if prompt is None else with_retrieval(prompt, rankers.deployed_retrieval())


def judge_fingerprint(backend: str) -> str | None:
    """The fingerprint the judge of `backend` has now, asked of the judge; None when no judge here has it.

    The configured judge is asked first (RESOLVER["JUDGE_BACKEND"], as the
    services build it), then the built-in judges, so thresholds of Jev and the
    OpenAI-compatible judge stay checkable whichever is configured. A judge
    that never answers (fingerprint "") has none.
    """
    try:
        configured: list[object] = [judge_from_settings()]
    except (ImportError, ImproperlyConfigured):  # named by the system checks (resolver.E003, E011)
        configured = []
    for judge in (*configured, *BUILT_IN):
        fingerprint = getattr(judge, "fingerprint", None)
        # A built-in class's fingerprint reads on the class; another class's may need a judge.
        if getattr(judge, "backend", None) == backend and isinstance(fingerprint, str):
            return fingerprint or None
    return None


def current_question(backend: str) -> str:
    """The question ID a row of this backend must be evaluated for."""
    # The ranker's thresholds are certified for the same question a judge is asked (evaluation/ranking.py).
    return QUESTION_ID


@dataclass(frozen=True)
class ApprovalResult:
    approved: tuple[int, ...] = ()
    # Primary key -> why that row was not approved.
    refused: dict[int, str] = field(default_factory=dict)


def refusal_reason(row: ApprovedThreshold, current_fingerprint: str) -> str | None:
    """Why this row may not be activated, or None when it may."""
    question = current_question(row.backend)
    if row.question != question:
        return f"it was evaluated for question {row.question!r}, not {question!r}"
    if not current_fingerprint:
        return f"no current fingerprint is known for backend {row.backend!r}, so nothing evaluated for it is approvable"
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
        current = current_fingerprint(row.backend) or ""
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


# -- the operator's door (manage.py thresholds) --------------------------------------------------
# Stable codes and exit codes, documented in the README's error table.

class ThresholdCommandError(Exception):
    code = "internal_error"
    exit_code = 1


class ThresholdNotFound(ThresholdCommandError):
    code = "threshold_not_found"
    exit_code = 2


class UnknownApprover(ThresholdCommandError):
    code = "unknown_user"
    exit_code = 3


class ApprovalRefused(ThresholdCommandError):
    code = "approval_refused"
    exit_code = 4


# Who may approve: what the admin's action needs (a staff member with the change permission).
APPROVE_PERMISSION = "resolver.change_approvedthreshold"


def threshold_row(pk: Any) -> ApprovedThreshold:
    try:
        key = int(str(pk))
    except ValueError:
        raise ThresholdNotFound(f"no threshold with ID {pk!r}: IDs are numbers (see manage.py thresholds list)") \
            from None
    row = ApprovedThreshold.objects.filter(pk=key).first()
    if row is None:
        raise ThresholdNotFound(f"no threshold with ID {key}")
    return row


def approver(username: str) -> Any:
    """The active staff user with the change permission on thresholds, or UnknownApprover naming why not."""
    from django.contrib.auth import get_user_model

    model = get_user_model()
    try:
        user = model._default_manager.get_by_natural_key(username)
    except model.DoesNotExist:
        raise UnknownApprover(f"no such user: {username!r}") from None
    if not user.is_active:
        raise UnknownApprover(f"no such user: {username!r} is inactive")
    if not (user.is_staff and user.has_perm(APPROVE_PERMISSION)):
        raise UnknownApprover(f"{username!r} may not approve thresholds: a staff member with the change "
                              "permission on approved thresholds may")
    return user


def approve_one(pk: Any, *, username: str, now: datetime | None = None) -> ApprovedThreshold:
    """Approve and activate one row as `username`, by the same rule as the admin's action."""
    row = threshold_row(pk)
    user = approver(username)
    result = approve_thresholds(rows=[row], user=user, now=now)
    if row.pk in result.refused:
        raise ApprovalRefused(f"threshold #{row.pk} was not approved: {result.refused[row.pk]}")
    row.refresh_from_db()
    return row


def deactivate_one(pk: Any) -> tuple[ApprovedThreshold, bool]:
    """Deactivate one row; whether it was active. Its approval record stays, as in the admin."""
    row = threshold_row(pk)
    changed = ApprovedThreshold.objects.filter(pk=row.pk, active=True).update(active=False) == 1
    row.refresh_from_db()
    return row, changed


def listing(row: ApprovedThreshold) -> dict[str, Any]:
    """One row as the list shows it (JSON-ready)."""
    evidence = row.evidence if isinstance(row.evidence, dict) else {}
    # Rows proposed before the certificate counted "admitted" and "errors", and `cases` was every case.
    n = evidence.get("n", evidence.get("admitted", row.cases))
    k = evidence.get("k", evidence.get("errors"))
    return {
        "id": row.pk,
        "question": row.question,
        "backend": row.backend,
        "model": row.model,
        "fingerprint": row.fingerprint,
        "fingerprint_current": row.fingerprint == current_fingerprint(row.backend)
        and row.question == current_question(row.backend),
        "threshold": row.threshold,
        "n": n if isinstance(n, int) and not isinstance(n, bool) else row.cases,
        "k": k if isinstance(k, int) and not isinstance(k, bool) else None,
        "coverage": row.coverage,
        "alpha": evidence.get("alpha"),
        "delta": evidence.get("delta"),
        "active": row.active,
        "approved_by": row.approved_by.get_username() if row.approved_by else None,
        "approved_at": row.approved_at.isoformat() if row.approved_at else None,
    }
