"""Store an evaluation's certificate as an inactive `ApprovedThreshold`.

A proposal carries its evidence (the whole certificate: alpha, delta, the
threshold, n accepted, k errors, coverage, p-value, the fixed sequence, the
case set's digest; and the plot) so the operator approving it sees what
earned it. It is never active: only an approval (the admin's action, or
`manage.py thresholds approve`) activates a row.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

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


def evidence_for(report: Mapping[str, Any]) -> dict[str, Any]:
    """The certificate and everything that ties it to one question, model, fingerprint and case set."""
    meta = report["meta"]
    certificate = report["certificate"]
    n, k = certificate["n"], certificate["k"]
    return {
        "question": meta["question"],
        "model": meta["model"],
        "model_requested": meta.get("model_requested"),
        "scorer": meta.get("scorer"),
        "fingerprint": meta["fingerprint"],
        "backend": meta.get("backend", "jev"),
        "probability_source": meta.get("probability_source", "service"),
        "threshold": certificate["threshold"],
        "cases_file": meta.get("cases_file"),
        "cases_format": meta.get("cases_format", "jsonl"),
        "cases_digest": meta["cases_digest"],
        "case_count": meta["case_count"],
        "n": n,
        "k": k,
        "coverage": certificate["coverage"],
        "risk": k / n,
        "risk_upper_bound": certificate["risk_upper"],
        "admitted_accuracy": 1.0 - k / n,
        "alpha": certificate["alpha"],
        "delta": certificate["delta"],
        "p_value": certificate["p_value"],
        "margin": meta["margin"],
        "certificate": dict(certificate),
        "accuracy_by_tag": report["by_tag"],
        "generated_at": meta["generated_at"],
        "report_version": report["report_version"],
    }


def propose_threshold(*, result: EvaluationResult) -> Proposal | None:
    """Store the certificate as an inactive row; None when nothing is certified.

    Running the same evaluation twice does not store a second copy: an
    identical inactive proposal (same question, model, fingerprint, threshold,
    case set, margin, alpha and delta) is returned instead.
    """
    report = result.report
    if not result.complete or not report["certificate"]["certified"]:
        return None
    evidence = evidence_for(report)
    existing = ApprovedThreshold.objects.filter(
        active=False,
        question=evidence["question"],
        backend=evidence["backend"],
        model=evidence["model"],
        fingerprint=evidence["fingerprint"],
        threshold=evidence["threshold"],
        evidence__cases_digest=evidence["cases_digest"],
        evidence__margin=evidence["margin"],
        evidence__alpha=evidence["alpha"],
        evidence__delta=evidence["delta"],
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
        cases=evidence["n"],
        admitted_accuracy=evidence["admitted_accuracy"],
        coverage=evidence["coverage"],
        risk_upper_bound=evidence["risk_upper_bound"],
        evaluated_at=datetime.fromisoformat(evidence["generated_at"]),
        evidence=evidence,
        plot_png=result.plot_path.read_bytes(),
        active=False,
    )
    return Proposal(row=row, created=True)
