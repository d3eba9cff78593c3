"""Store an evaluation's recommendation as an inactive `ApprovedThreshold`.

A proposal carries its evidence (counts, risk, bound, coverage, the case set's
digest, the plot) so the operator approving it in the admin sees what earned
it. It is never active: only the admin's approve action activates a row.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from resolver.evaluation.metrics import CONFIDENCE
from resolver.evaluation.runner import EvaluationResult, InvalidEvaluation
from resolver.models import ApprovedThreshold

# Same tolerance as the metrics: 0.1 read from an environment variable and 0.1
# typed on the command line are the same margin.
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Proposal:
    row: ApprovedThreshold
    created: bool  # False: an identical inactive proposal was already stored


def check_margin_in_force(*, margin: float, in_force: float) -> None:
    """Refuse to propose a threshold evaluated under a margin the pipeline does not apply.

    The pipeline adds RESOLVER["THRESHOLD_MARGIN"] to every approved threshold;
    evidence gathered with another margin would describe another rule.
    """
    if not math.isclose(margin, float(in_force), rel_tol=0.0, abs_tol=_TOLERANCE):
        raise InvalidEvaluation(
            f"--propose needs the margin the pipeline applies ({float(in_force):.2f}, "
            f"RESOLVER['THRESHOLD_MARGIN']), not {margin:.2f}"
        )


def _point_at(report: Mapping[str, Any], threshold: float) -> Mapping[str, Any]:
    for point in report["points"]:
        if point["threshold"] == threshold:
            return point
    raise ValueError(f"the report has no point at {threshold!r}")


def evidence_for(report: Mapping[str, Any]) -> dict[str, Any]:
    """The recommended point and everything that ties it to one question, model, wording and case set."""
    meta = report["meta"]
    recommendation = report["recommendation"]
    threshold = recommendation["threshold"]
    point = _point_at(report, threshold)
    return {
        "question": meta["question"],
        "model": meta["model"],
        "model_requested": meta.get("model_requested"),
        "fingerprint": meta["fingerprint"],
        "backend": meta.get("backend", "jev"),
        "probability_source": meta.get("probability_source", "service"),
        "threshold": threshold,
        "cases_file": meta.get("cases_file"),
        "cases_digest": meta["cases_digest"],
        "cases": meta["case_count"],
        "admitted": point["admitted"],
        "errors": point["errors"],
        "no_match_resolved": point["no_match_resolved"],
        "coverage": point["coverage"],
        "risk": point["risk"],
        "risk_upper_bound": point["risk_upper"],
        "confidence": CONFIDENCE,
        "admitted_accuracy": 1.0 - point["risk"],
        "target_risk": recommendation["target_risk"],
        "min_coverage": recommendation["min_coverage"],
        "margin": meta["margin"],
        "reason": recommendation["reason"],
        "accuracy_by_tag": report["by_tag"],
        "generated_at": meta["generated_at"],
        "report_version": report["report_version"],
    }


def propose_threshold(*, result: EvaluationResult) -> Proposal | None:
    """Store the recommendation as an inactive row; None when there is nothing to propose.

    Running the same evaluation twice does not store a second copy: an
    identical inactive proposal (same question, model, wording, threshold and
    case set) is returned instead.
    """
    report = result.report
    if not result.complete or report["recommendation"]["threshold"] is None:
        return None
    evidence = evidence_for(report)
    existing = ApprovedThreshold.objects.filter(
        active=False,
        question=evidence["question"],
        model=evidence["model"],
        fingerprint=evidence["fingerprint"],
        threshold=evidence["threshold"],
        evidence__cases_digest=evidence["cases_digest"],
        evidence__margin=evidence["margin"],
    ).first()
    if existing is not None:
        return Proposal(row=existing, created=False)
    row = ApprovedThreshold.objects.create(
        question=evidence["question"],
        model=evidence["model"],
        fingerprint=evidence["fingerprint"],
        backend=evidence["backend"],
        probability_source=evidence["probability_source"],
        threshold=evidence["threshold"],
        cases=evidence["cases"],
        admitted_accuracy=evidence["admitted_accuracy"],
        coverage=evidence["coverage"],
        risk_upper_bound=evidence["risk_upper_bound"],
        evaluated_at=datetime.fromisoformat(evidence["generated_at"]),
        evidence=evidence,
        plot_png=result.plot_path.read_bytes(),
        active=False,
    )
    return Proposal(row=row, created=True)
