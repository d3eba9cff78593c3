from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from resolver.evaluation.metrics import accuracy_by_tag, recommend, threshold_points
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


def _write(out_dir: Path, *, target_risk: float, min_coverage: float, meta: dict[str, Any] = META) -> dict[str, Any]:
    points = threshold_points(OUTCOMES, margin=0.1)
    return write_report(
        out_dir,
        points=points,
        recommendation=recommend(points, target_risk=target_risk, min_coverage=min_coverage),
        by_tag=accuracy_by_tag(OUTCOMES),
        meta=meta,
    )


@pytest.fixture
def recommended(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    out_dir = tmp_path / "report"  # does not exist yet: write_report creates it
    return out_dir, _write(out_dir, target_risk=0.75, min_coverage=0.3)


def test_write_report__writes_three_files(recommended: tuple[Path, dict[str, Any]]) -> None:
    out_dir, _ = recommended
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.json", "risk_coverage.png", "summary.md"]


def test_write_report__png_is_a_small_png(recommended: tuple[Path, dict[str, Any]]) -> None:
    data = (recommended[0] / "risk_coverage.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (800, 500)


def test_write_report__json_holds_everything(recommended: tuple[Path, dict[str, Any]]) -> None:
    out_dir, returned = recommended
    report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    assert report == returned
    assert len(report["points"]) == 101
    assert report["recommendation"]["threshold"] == 0.81
    assert report["meta"] == {**META, "target_risk": 0.75, "min_coverage": 0.3}
    assert report["by_tag"]["all"] == {"cases": 10, "correct": 7, "accuracy": 0.7}
    point = next(p for p in report["points"] if p["threshold"] == 0.81)
    assert point["admitted"] == 3 and point["errors"] == 0 and point["coverage"] == 0.3
    assert report["points"][-1]["risk"] is None and report["points"][-1]["risk_upper"] is None
    assert "Clopper-Pearson" in report["method"]["risk_upper"]


def test_write_report__summary_names_the_recommendation(recommended: tuple[Path, dict[str, Any]]) -> None:
    out_dir, report = recommended
    summary = (out_dir / "summary.md").read_text(encoding="utf-8")
    assert summary == render_summary(report)
    assert "**Threshold 0.81.**" in summary
    assert "| 0.81 (recommended) | 30.0% | 0.0% | 70.8% | 3 | 0 | 0 |" in summary
    assert "| 0.50 | 80.0% | 37.5% | 75.5% | 8 | 3 | 1 |" in summary
    assert "| 0.95 | 10.0% | 0.0% | 97.5% | 1 | 0 | 0 |" in summary
    assert "| near_duplicate | 2 | 1 | 50.0% |" in summary
    for text in ("jev-1.13.0", "f" * 64, "d" * 64, "reference_match.v1", "Cases: 10"):
        assert text in summary


def test_write_report__no_threshold_qualifies(tmp_path: Path) -> None:
    report = _write(tmp_path, target_risk=0.02, min_coverage=0.5)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert report["recommendation"]["threshold"] is None
    assert "**No threshold qualifies.**" in summary
    assert "75.5% (at 0.00) > 2.0%" in summary
    assert "(recommended)" not in summary
    assert (tmp_path / "risk_coverage.png").read_bytes()[:4] == b"\x89PNG"


def test_write_report__fills_generated_at(tmp_path: Path) -> None:
    meta = {k: v for k, v in META.items() if k != "generated_at"}
    report = _write(tmp_path, target_risk=0.75, min_coverage=0.3, meta=meta)
    assert report["meta"]["generated_at"].endswith("+00:00")


@pytest.mark.parametrize("missing", ["question", "model", "fingerprint", "cases_digest", "case_count", "margin"])
def test_write_report__refuses_meta_that_cannot_be_traced(tmp_path: Path, missing: str) -> None:
    meta = {k: v for k, v in META.items() if k != missing}
    with pytest.raises(ValueError, match=missing):
        _write(tmp_path, target_risk=0.75, min_coverage=0.3, meta=meta)
    assert not (tmp_path / "report.json").exists()


def test_write_report__refuses_targets_that_disagree_with_the_recommendation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="target_risk"):
        _write(tmp_path, target_risk=0.75, min_coverage=0.3, meta={**META, "target_risk": 0.02})
