"""The report files, the certificate block and the curve, from the hand-computed outcomes of test_metrics.

At alpha 0.75, delta 0.05 a threshold needs 3 accepted cases (0.25^3 = 0.0156
<= 0.05 < 0.25^2): 1.00 - 0.86 are passed over, 0.85 - 0.81 (o1 o2 o3, no
error) are rejected with p-value 0.25^3, and 0.80 (4 accepted, o4 wrong) has
p-value 0.25^4 + 4 * 0.75 * 0.25^3 = 0.0508 > 0.05: 0.81 is certified.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from resolver.evaluation.metrics import accuracy_by_tag, certify, threshold_points
from resolver.evaluation.report import render_summary, write_report
from tests.evaluation.test_metrics import OUTCOMES

META: dict[str, Any] = {
    "question": "reference_match.v1",
    "model": "jev-1.13.0",
    "fingerprint": "f" * 64,
    "cases_digest": "d" * 64,
    "case_count": len(OUTCOMES),
    "margin": 0.1,
    "generated_at": "2025-03-07T12:00:00+00:00",
}
CERTIFICATE_KEYS = {
    "certified", "alpha", "delta", "margin", "threshold", "n", "k", "coverage", "total", "p_value", "risk_upper",
    "required_n", "model", "fingerprint", "cases_digest", "refusal", "sequence",
}


def _write(out_dir: Path, *, alpha: float, delta: float = 0.05, meta: dict[str, Any] = META) -> dict[str, Any]:
    points = threshold_points(OUTCOMES, margin=0.1, delta=delta)
    certificate = certify(OUTCOMES, alpha=alpha, delta=delta, margin=0.1, model=META["model"],
                          fingerprint=META["fingerprint"], cases_digest=META["cases_digest"])
    return write_report(out_dir, points=points, certificate=certificate, by_tag=accuracy_by_tag(OUTCOMES),
                        meta=meta)


@pytest.fixture
def certified(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    out_dir = tmp_path / "report"  # does not exist yet: write_report creates it
    return out_dir, _write(out_dir, alpha=0.75)


def test_write_report__writes_three_files(certified: tuple[Path, dict[str, Any]]) -> None:
    out_dir, _ = certified
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.json", "risk_coverage.png", "summary.md"]


def test_write_report__png_is_a_small_png(certified: tuple[Path, dict[str, Any]]) -> None:
    data = (certified[0] / "risk_coverage.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (800, 500)


def test_write_report__json_holds_the_certificate_and_the_curve(certified: tuple[Path, dict[str, Any]]) -> None:
    out_dir, returned = certified
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    assert report == returned
    assert report["report_version"] == 3
    assert len(report["points"]) == 101
    certificate = report["certificate"]
    assert set(certificate) == CERTIFICATE_KEYS
    assert (certificate["certified"], certificate["threshold"], certificate["n"], certificate["k"]) == (
        True, 0.81, 3, 0)
    assert (certificate["alpha"], certificate["delta"], certificate["required_n"], certificate["total"]) == (
        0.75, 0.05, 3, 10)
    assert certificate["coverage"] == 0.3 and certificate["refusal"] is None
    assert certificate["p_value"] == pytest.approx(0.25 ** 3, rel=1e-9)
    assert (certificate["model"], certificate["fingerprint"], certificate["cases_digest"]) == (
        "jev-1.13.0", "f" * 64, "d" * 64)
    sequence = certificate["sequence"]
    assert [s["threshold"] for s in sequence] == [round(1 - i / 100, 2) for i in range(21)]  # 1.00 .. 0.80
    assert {s["outcome"] for s in sequence[:15]} == {"passed_over"}
    assert [s["outcome"] for s in sequence[15:]] == ["rejected"] * 5 + ["not_rejected"]
    assert sequence[-1]["p_value"] == pytest.approx(0.25 ** 4 + 4 * 0.75 * 0.25 ** 3, rel=1e-9)
    assert report["meta"] == {**META, "alpha": 0.75, "delta": 0.05}
    point = next(p for p in report["points"] if p["threshold"] == 0.81)
    assert (point["admitted"], point["errors"], point["coverage"]) == (3, 0, 0.3)
    # The curve's bound is one-sided at 1 - delta: 1 - 0.05^(1/3).
    assert point["risk_upper"] == pytest.approx(1 - 0.05 ** (1 / 3), rel=1e-9)
    assert report["points"][-1]["risk"] is None and report["points"][-1]["risk_upper"] is None
    for key in ("accepted", "error", "risk_upper", "p_value", "certificate"):
        assert report["method"][key]


def test_write_report__summary_holds_the_certificate_block(certified: tuple[Path, dict[str, Any]]) -> None:
    out_dir, report = certified
    summary = (out_dir / "summary.md").read_text(encoding="utf-8")
    assert summary == render_summary(report)
    assert "**Certified threshold 0.81.** With probability at least 95%, at most 75.0% of the references" in summary
    for line in (
        "- alpha (risk certified): 0.75; delta: 0.05; margin: 0.10",
        "- Sample size needed at zero errors: 3",
        "- Threshold: 0.81",
        "- Accepted (n): 3 of 10 cases (coverage 30.0%); errors (k): 0",
        "- p-value: 0.01563 <= 0.05; upper bound on risk (95%): 63.2%",
        "- Model: `jev-1.13.0`",
        f"- Fingerprint: `{'f' * 64}`",
        f"- Cases digest: `{'d' * 64}`",
        "| 0.81 (certified) | 30.0% | 3 | 0 | 0.0% | 63.2% | 0 |",
        "| 0.80 (first failure) | 40.0% | 4 | 1 | 25.0% | 75.1% | 0 |",
        "| 0.50 | 80.0% | 8 | 3 | 37.5% | 71.1% | 1 |",
        "| near_duplicate | 2 | 1 | 50.0% |",
    ):
        assert line in summary, line


def test_write_report__a_refusal_says_why(tmp_path: Path) -> None:
    report = _write(tmp_path, alpha=0.02)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    certificate = report["certificate"]
    assert (certificate["certified"], certificate["threshold"], certificate["n"], certificate["sequence"]) == (
        False, None, None, [])
    assert certificate["refusal"].startswith(
        "needs at least 149 accepted cases with no error; the best threshold accepted 8")
    assert "**Not certified.** Needs at least 149 accepted cases with no error; the best threshold accepted 8" \
        in summary
    assert "(certified)" not in summary and "- Threshold:" not in summary
    assert (tmp_path / "risk_coverage.png").read_bytes()[:4] == b"\x89PNG"


def test_write_report__fills_generated_at(tmp_path: Path) -> None:
    meta = {k: v for k, v in META.items() if k != "generated_at"}
    report = _write(tmp_path, alpha=0.75, meta=meta)
    assert report["meta"]["generated_at"].endswith("+00:00")


@pytest.mark.parametrize("missing", ["question", "model", "fingerprint", "cases_digest", "case_count", "margin"])
def test_write_report__refuses_meta_that_cannot_be_traced(tmp_path: Path, missing: str) -> None:
    meta = {k: v for k, v in META.items() if k != missing}
    with pytest.raises(ValueError, match=missing):
        _write(tmp_path, alpha=0.75, meta=meta)
    assert not (tmp_path / "report.json").exists()


def test_write_report__refuses_levels_that_disagree_with_the_certificate(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="alpha"):
        _write(tmp_path, alpha=0.75, meta={**META, "alpha": 0.01})
