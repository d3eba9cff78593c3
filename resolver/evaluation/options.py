"""The options of one evaluation run, and what is wrong with them."""
from __future__ import annotations

import math
from dataclasses import dataclass

MAX_CONCURRENCY = 32


@dataclass(frozen=True)
class RunOptions:
    target_risk: float
    min_coverage: float
    margin: float
    concurrency: int = 4

    def problems(self) -> list[str]:
        found = []
        if not (math.isfinite(self.target_risk) and 0.0 < self.target_risk < 1.0):
            found.append("--target-risk must be between 0 and 1 (exclusive)")
        if not (math.isfinite(self.min_coverage) and 0.0 < self.min_coverage <= 1.0):
            found.append("--min-coverage must be above 0 and at most 1")
        if not (math.isfinite(self.margin) and 0.0 <= self.margin < 1.0):
            found.append("--margin must be at least 0 and below 1")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            found.append(f"--concurrency must be 1 to {MAX_CONCURRENCY}")
        return found
