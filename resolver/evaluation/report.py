"""The evaluation report an operator reads before approving a threshold.

`write_report` writes three files into one directory:

- `report.json`: the certificate (or why there is none), the risk-coverage
  curve (every threshold of the grid), accuracy by tag and the meta data that
  ties the numbers to one question, model, fingerprint and case set;
- `risk_coverage.png`: risk and its upper bound against coverage, the certified
  point and alpha;
- `summary.md`: the short version, also returned by `render_summary` for
  printing.

Everything is rendered from the report dict, so a report read back from JSON
renders the same summary.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from resolver.evaluation.metrics import Certificate, TagAccuracy, ThresholdPoint

REPORT_VERSION = 3
REPORT_FILE = "report.json"
PLOT_FILE = "risk_coverage.png"
SUMMARY_FILE = "summary.md"
SUMMARY_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
# A threshold is only valid for what it was evaluated on; a report missing any
# of these could not be traced back to it.
REQUIRED_META = ("question", "model", "fingerprint", "cases_digest", "case_count", "margin")

METHOD = {
    "accepted": (
        "the top option is an item (not no_match), its probability is >= the threshold, it is not tied "
        "with the runner-up and leads it by at least the margin: the rule the pipeline applies when it "
        "resolves on confidence (margin 0 keeps only the tie rule)"
    ),
    "error": (
        "an accepted case that is wrong: a wrong item, a wrong occurrence, an item for a reference that "
        "names several, or any item for a reference to nothing"
    ),
    "risk": "errors / accepted",
    "risk_upper": (
        "one-sided Clopper-Pearson upper bound on risk at confidence 1 - delta: "
        "Beta.ppf(1 - delta, errors + 1, accepted - errors); 1.0 when every accepted case is an error; "
        "it is <= alpha exactly when the threshold's p-value is <= delta"
    ),
    "p_value": "P(Binomial(accepted, alpha) <= errors): the exact p-value of 'risk > alpha'",
    "certificate": (
        "fixed-sequence Learn-then-Test: thresholds 1.00, 0.99, ..., 0.00, fixed before any label is read, "
        "tested from the most conservative down; a threshold accepting fewer than required_n cases cannot be "
        "rejected whatever its labels and is passed over; 'risk > alpha' is rejected when p_value <= delta; "
        "the sequence stops at the first threshold not rejected; the certified threshold is the lowest "
        "rejected one: with probability >= 1 - delta its risk is at most alpha"
    ),
}


def _plain(value: Any) -> Any:
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else dict(value)


def certificate_dict(certificate: Certificate) -> dict[str, Any]:
    """The certificate as JSON: every field, the steps as `sequence`, and `certified`."""
    plain = asdict(certificate)
    plain["sequence"] = list(plain.pop("steps"))  # a list, as JSON reads it back
    plain["certified"] = certificate.certified
    return plain


def build_report(
    *,
    points: Sequence[ThresholdPoint],
    certificate: Certificate,
    by_tag: Mapping[str, TagAccuracy],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The report as a JSON-ready dict; raises ValueError on incomplete meta."""
    missing = [key for key in REQUIRED_META if meta.get(key) in (None, "")]
    if missing:
        raise ValueError(f"report meta is missing {missing}")
    # The certificate is the source of truth for the levels it was made at.
    for key in ("alpha", "delta"):
        given = meta.get(key)
        if given is not None and given != getattr(certificate, key):
            raise ValueError(f"meta {key}={given!r} differs from the certificate's {getattr(certificate, key)!r}")
    full_meta = {
        **meta,
        "alpha": certificate.alpha,
        "delta": certificate.delta,
        "generated_at": meta.get("generated_at") or datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return {
        "report_version": REPORT_VERSION,
        "meta": full_meta,
        "method": dict(METHOD),
        "certificate": certificate_dict(certificate),
        "points": [_plain(point) for point in points],
        "by_tag": {tag: _plain(accuracy) for tag, accuracy in by_tag.items()},
    }


def write_report(
    out_dir: Path | str,
    *,
    points: Sequence[ThresholdPoint],
    certificate: Certificate,
    by_tag: Mapping[str, TagAccuracy],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """Write report.json, risk_coverage.png and summary.md; return the report dict."""
    report = build_report(points=points, certificate=certificate, by_tag=by_tag, meta=meta)
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / REPORT_FILE).write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    plot_risk_coverage(report, directory / PLOT_FILE)
    (directory / SUMMARY_FILE).write_text(render_summary(report), encoding="utf-8")
    return report


def plot_risk_coverage(report: Mapping[str, Any], path: Path | str) -> None:
    """Risk and its upper bound against coverage, alpha, the certified point."""
    # A bare Figure on the Agg canvas: no pyplot, so no global backend switch
    # and no figure left open in a long-running process.
    figure = Figure(figsize=(8, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    certificate = report["certificate"]
    shown = sorted((p for p in report["points"] if p["admitted"]), key=lambda p: (p["coverage"], -p["threshold"]))
    coverage = [p["coverage"] * 100 for p in shown]
    axes.plot(coverage, [p["risk"] * 100 for p in shown], marker=".", label="risk (errors / accepted)")
    axes.plot(
        coverage,
        [p["risk_upper"] * 100 for p in shown],
        linestyle="--",
        label=f"upper bound (Clopper-Pearson, {1 - certificate['delta']:.0%})",
    )
    alpha = certificate["alpha"] * 100
    axes.axhline(alpha, color="tab:red", linewidth=1, label=f"alpha {alpha:.1f}%")
    # Label a few thresholds on the risk curve so coverage can be read back
    # to the number an operator would approve.
    for threshold in SUMMARY_THRESHOLDS:
        point = _point_at(report, threshold)
        if point is not None and point["admitted"]:
            axes.annotate(
                f"{threshold:.2f}",
                (point["coverage"] * 100, point["risk"] * 100),
                textcoords="offset points",
                xytext=(-4, 8),
                ha="right",
                fontsize=8,
                color="dimgrey",
            )
    chosen = _point_at(report, certificate["threshold"])
    if chosen is not None and chosen["risk_upper"] is not None:
        axes.plot(
            [chosen["coverage"] * 100],
            [chosen["risk_upper"] * 100],
            marker="o",
            markersize=9,
            color="tab:green",
            linestyle="none",
            label=f"certified threshold {chosen['threshold']:.2f}",
        )
    # The interesting region is near alpha; a bound of 100% at tiny coverage
    # would otherwise squash it flat.
    risks = [p["risk"] * 100 for p in shown]
    top = min(100.0, max([alpha * 3, *(r * 1.3 for r in risks)]))
    axes.set_ylim(0, max(top, 1.0))
    axes.set_xlim(0, 100)
    axes.set_xlabel("coverage (% of cases resolved without asking); grey labels: thresholds")
    axes.set_ylabel("risk (% of resolved cases wrong)")
    meta = report["meta"]
    axes.set_title(f"{meta['question']} on {meta['model']} ({meta['case_count']} cases)", fontsize=11)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper left", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, format="png")


def _point_at(report: Mapping[str, Any], threshold: float | None) -> dict[str, Any] | None:
    if threshold is None:
        return None
    for point in report["points"]:
        if round(point["threshold"], 2) == round(threshold, 2):
            return point
    return None


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _first_failure(certificate: Mapping[str, Any]) -> float | None:
    for step in certificate.get("sequence") or ():
        if step["outcome"] == "not_rejected":
            return step["threshold"]
    return None


def render_certificate(report: Mapping[str, Any]) -> list[str]:
    """The certificate block of the summary: what is certified, with its evidence, or why nothing is."""
    meta = report["meta"]
    certificate = report["certificate"]
    alpha, delta = certificate["alpha"], certificate["delta"]
    unanswered = meta.get("unanswered") or 0
    lines = ["## Certificate", ""]
    if unanswered:
        lines.append(f"**Not certified: the run is incomplete.** {_sentence(certificate['refusal'])}")
    elif not certificate["certified"]:
        lines.append(f"**Not certified.** {_sentence(certificate['refusal'])}")
    else:
        lines.append(
            f"**Certified threshold {certificate['threshold']:.2f}.** With probability at least "
            f"{1 - delta:.0%}, at most {_percent(alpha)} of the references resolved at this threshold are wrong."
        )
    lines += [
        "",
        f"- alpha (risk certified): {alpha:g}; delta: {delta:g}; margin: {certificate['margin']:.2f}",
        f"- Sample size needed at zero errors: {certificate['required_n']}",
    ]
    if certificate["certified"]:
        lines += [
            f"- Threshold: {certificate['threshold']:.2f}",
            f"- Accepted (n): {certificate['n']} of {certificate['total']} cases "
            f"(coverage {_percent(certificate['coverage'])}); errors (k): {certificate['k']}",
            f"- p-value: {certificate['p_value']:.4g} <= {delta:g}; "
            f"upper bound on risk ({1 - delta:.0%}): {_percent(certificate['risk_upper'])}",
        ]
    lines += [
        f"- Model: `{certificate['model']}`",
        f"- Fingerprint: `{certificate['fingerprint']}`",
        f"- Cases digest: `{certificate['cases_digest']}`",
    ]
    return lines


def render_summary(report: Mapping[str, Any]) -> str:
    """A short Markdown summary of a report dict."""
    meta = report["meta"]
    certificate = report["certificate"]
    lines = [
        "# Reference match evaluation",
        "",
        f"- Question: `{meta['question']}`",
        f"- Model: `{meta['model']}`" + (f" (backend {meta['backend']})" if meta.get("backend") else ""),
        f"- Fingerprint: `{meta['fingerprint']}`",
        f"- Cases: {meta['case_count']} (sha256 `{meta['cases_digest']}`)",
        f"- Margin: {meta['margin']:.2f}; alpha: {certificate['alpha']:g}; delta: {certificate['delta']:g}",
    ]
    # Only the judges' runs count answers; an incomplete run must not read as
    # "nothing certified".
    if "answered" in meta:
        lines.append(f"- Answered: {meta['answered']} of {meta['case_count']}; unanswered: {meta.get('unanswered') or 0}")
    lines += [f"- Generated at: {meta['generated_at']}", ""]
    lines += render_certificate(report)
    upper = f"upper bound ({1 - certificate['delta']:.0%})"
    lines += [
        "",
        "## Risk-coverage curve (selected thresholds; every one is in report.json)",
        "",
        f"| threshold | coverage | n | k | risk | {upper} | no_match resolved |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    failed = _first_failure(certificate)
    wanted = set(SUMMARY_THRESHOLDS)
    for threshold in (certificate["threshold"], failed):
        if threshold is not None:
            wanted.add(threshold)
    for threshold in sorted(wanted):
        point = _point_at(report, threshold)
        if point is None:
            continue
        marker = (" (certified)" if threshold == certificate["threshold"]
                  else " (first failure)" if threshold == failed else "")
        lines.append(
            f"| {point['threshold']:.2f}{marker} | {_percent(point['coverage'])} | {point['admitted']} "
            f"| {point['errors']} | {_percent(point['risk'])} | {_percent(point['risk_upper'])} "
            f"| {point['no_match_resolved']} |"
        )
    lines += [
        "",
        "## Accuracy by tag (top option, any confidence)",
        "",
    ]
    settled = any(accuracy.get("settled") for accuracy in report["by_tag"].values())
    if settled:
        # The built-in ranker: what the pipeline answers before the model weighs anything is not the model's.
        lines += [
            "Answered first: cases the pipeline answered before the scorer weighed a candidate (an exact title, "
            "ID or UID, or a question by date alone). They are never resolved on confidence, and the accuracy "
            "is over the other cases.",
            "",
            "| tag | cases | answered first | correct | accuracy |",
            "|---|---:|---:|---:|---:|",
        ]
    else:
        lines += ["| tag | cases | correct | accuracy |", "|---|---:|---:|---:|"]
    for tag, accuracy in report["by_tag"].items():
        first = f" {accuracy.get('settled', 0)} |" if settled else ""
        lines.append(f"| {tag} | {accuracy['cases']} |{first} {accuracy['correct']} "
                     f"| {_percent(accuracy['accuracy'])} |")
    return "\n".join(lines) + "\n"


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."
