"""The evaluation report an operator reads before approving a threshold.

`write_report` writes three files into one directory:

- `report.json`: every threshold point, the recommendation, accuracy by tag and
  the meta data that ties the numbers to one question, model, prompt
  fingerprint and case set;
- `risk_coverage.png`: risk and its upper bound against coverage;
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

from resolver.evaluation.metrics import CONFIDENCE, Recommendation, TagAccuracy, ThresholdPoint

REPORT_VERSION = 1
REPORT_FILE = "report.json"
PLOT_FILE = "risk_coverage.png"
SUMMARY_FILE = "summary.md"
SUMMARY_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
# A threshold is only valid for what it was evaluated on; a report missing any
# of these could not be traced back to it.
REQUIRED_META = ("question", "model", "fingerprint", "cases_digest", "case_count", "margin")

METHOD = {
    "admitted": (
        "top option is a candidate number, top probability >= threshold, "
        "and top probability - runner-up probability >= margin (a tie never passes): "
        "the rule the pipeline applies when it resolves on confidence"
    ),
    "risk": "errors / admitted; an admitted no_match case is always an error",
    "risk_upper": (
        f"upper limit of the two-sided {CONFIDENCE:.0%} Clopper-Pearson interval on risk: "
        "Beta.ppf(0.975, errors + 1, admitted - errors); 1.0 when every admitted case is an error"
    ),
    "recommendation": "the smallest threshold with risk_upper <= target_risk and coverage >= min_coverage",
}


def _plain(value: Any) -> Any:
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else dict(value)


def build_report(
    *,
    points: Sequence[ThresholdPoint],
    recommendation: Recommendation,
    by_tag: Mapping[str, TagAccuracy],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The report as a JSON-ready dict; raises ValueError on incomplete meta."""
    missing = [key for key in REQUIRED_META if meta.get(key) in (None, "")]
    if missing:
        raise ValueError(f"report meta is missing {missing}")
    # The recommendation is the source of truth for the targets it was made for.
    for key in ("target_risk", "min_coverage"):
        given = meta.get(key)
        if given is not None and given != getattr(recommendation, key):
            raise ValueError(f"meta {key}={given!r} differs from the recommendation's {getattr(recommendation, key)!r}")
    full_meta = {
        **meta,
        "target_risk": recommendation.target_risk,
        "min_coverage": recommendation.min_coverage,
        "generated_at": meta.get("generated_at") or datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return {
        "report_version": REPORT_VERSION,
        "meta": full_meta,
        "method": dict(METHOD),
        "recommendation": _plain(recommendation),
        "points": [_plain(point) for point in points],
        "by_tag": {tag: _plain(accuracy) for tag, accuracy in by_tag.items()},
    }


def write_report(
    out_dir: Path | str,
    *,
    points: Sequence[ThresholdPoint],
    recommendation: Recommendation,
    by_tag: Mapping[str, TagAccuracy],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """Write report.json, risk_coverage.png and summary.md; return the report dict."""
    report = build_report(points=points, recommendation=recommendation, by_tag=by_tag, meta=meta)
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / REPORT_FILE).write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    plot_risk_coverage(report, directory / PLOT_FILE)
    (directory / SUMMARY_FILE).write_text(render_summary(report), encoding="utf-8")
    return report


def plot_risk_coverage(report: Mapping[str, Any], path: Path | str) -> None:
    """Risk and its upper bound against coverage, the target, the recommended point."""
    # A bare Figure on the Agg canvas: no pyplot, so no global backend switch
    # and no figure left open in a long-running process.
    figure = Figure(figsize=(8, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    shown = sorted((p for p in report["points"] if p["admitted"]), key=lambda p: (p["coverage"], -p["threshold"]))
    coverage = [p["coverage"] * 100 for p in shown]
    axes.plot(coverage, [p["risk"] * 100 for p in shown], marker=".", label="risk (errors / admitted)")
    axes.plot(
        coverage,
        [p["risk_upper"] * 100 for p in shown],
        linestyle="--",
        label=f"upper bound ({CONFIDENCE:.0%} Clopper-Pearson)",
    )
    target = report["recommendation"]["target_risk"] * 100
    axes.axhline(target, color="tab:red", linewidth=1, label=f"target risk {target:.1f}%")
    min_coverage = report["recommendation"]["min_coverage"] * 100
    axes.axvline(min_coverage, color="grey", linewidth=1, linestyle=":", label=f"minimum coverage {min_coverage:.0f}%")
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
    chosen = _point_at(report, report["recommendation"]["threshold"])
    if chosen is not None and chosen["risk_upper"] is not None:
        axes.plot(
            [chosen["coverage"] * 100],
            [chosen["risk_upper"] * 100],
            marker="o",
            markersize=9,
            color="tab:green",
            linestyle="none",
            label=f"recommended threshold {chosen['threshold']:.2f}",
        )
    # The interesting region is near the target; a bound of 100% at tiny
    # coverage would otherwise squash it flat.
    risks = [p["risk"] * 100 for p in shown]
    top = min(100.0, max([target * 3, *(r * 1.3 for r in risks)]))
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


def render_summary(report: Mapping[str, Any]) -> str:
    """A short Markdown summary of a report dict."""
    meta = report["meta"]
    recommendation = report["recommendation"]
    lines = [
        "# Reference match evaluation",
        "",
        f"- Question: `{meta['question']}`",
        f"- Model: `{meta['model']}`",
        f"- Prompt fingerprint: `{meta['fingerprint']}`",
        f"- Cases: {meta['case_count']} (sha256 `{meta['cases_digest']}`)",
        f"- Margin: {meta['margin']:.2f}; target risk: {_percent(recommendation['target_risk'])}; "
        f"minimum coverage: {_percent(recommendation['min_coverage'])}",
        f"- Generated at: {meta['generated_at']}",
    ]
    # Only the evaluation command's reports count answers; an incomplete run
    # must not read as "no threshold qualifies".
    unanswered = meta.get("unanswered") or 0
    if "answered" in meta:
        lines.insert(-1, f"- Answered: {meta['answered']} of {meta['case_count']}; unanswered: {unanswered}")
    lines += ["", "## Recommendation", ""]
    if unanswered:
        lines.append(f"**No recommendation: the run is incomplete.** {_sentence(recommendation['reason'])}")
    elif recommendation["threshold"] is None:
        # The reason already opens with "no threshold qualifies: ..."; say it once.
        reason = recommendation["reason"].removeprefix("no threshold qualifies: ")
        lines.append(f"**No threshold qualifies.** {_sentence(reason)}")
    else:
        lines.append(f"**Threshold {recommendation['threshold']:.2f}.** {_sentence(recommendation['reason'])}")
    lines += [
        "",
        "## Selected thresholds",
        "",
        f"| threshold | coverage | risk | upper bound ({CONFIDENCE:.0%}) | admitted | errors | no_match resolved |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    wanted = set(SUMMARY_THRESHOLDS)
    if recommendation["threshold"] is not None:
        wanted.add(recommendation["threshold"])
    for threshold in sorted(wanted):
        point = _point_at(report, threshold)
        if point is None:
            continue
        marker = " (recommended)" if threshold == recommendation["threshold"] else ""
        lines.append(
            f"| {point['threshold']:.2f}{marker} | {_percent(point['coverage'])} | {_percent(point['risk'])} "
            f"| {_percent(point['risk_upper'])} | {point['admitted']} | {point['errors']} "
            f"| {point['no_match_resolved']} |"
        )
    lines += [
        "",
        "## Accuracy by tag (top option, any confidence)",
        "",
        "| tag | cases | correct | accuracy |",
        "|---|---:|---:|---:|",
    ]
    for tag, accuracy in report["by_tag"].items():
        lines.append(f"| {tag} | {accuracy['cases']} | {accuracy['correct']} | {_percent(accuracy['accuracy'])} |")
    return "\n".join(lines) + "\n"


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."
