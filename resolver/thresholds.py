"""Read approved thresholds for the pipeline. Approving happens in the admin only."""
from __future__ import annotations

from resolver.conf import resolver_settings
from resolver.domain.judgment import ThresholdRule
from resolver.models import ApprovedThreshold


class DatabaseThresholdPolicy:
    def find(self, *, question: str, model: str, fingerprint: str) -> ThresholdRule | None:
        """The active rule for exactly this question, model and wording, or None.

        A threshold measured on one model or one wording says nothing about
        another, so all three must match exactly; the newest approval wins.
        """
        row = (
            ApprovedThreshold.objects.filter(
                active=True,
                approved_at__isnull=False,
                question=question,
                model=model,
                fingerprint=fingerprint,
            )
            .order_by("-approved_at", "-pk")
            .only("threshold")
            .first()
        )
        if row is None or not 0.0 <= row.threshold <= 1.0:
            return None
        return ThresholdRule(threshold=row.threshold, margin=float(resolver_settings.THRESHOLD_MARGIN))
