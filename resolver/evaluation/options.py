"""The options of one evaluation run, and what is wrong with them."""
from __future__ import annotations

import math
from dataclasses import dataclass

from resolver.evaluation.metrics import DEFAULT_ALPHA, DEFAULT_DELTA

MAX_CONCURRENCY = 32


@dataclass(frozen=True)
class RunOptions:
    margin: float
    alpha: float = DEFAULT_ALPHA  # the risk certified: errors among the references resolved
    delta: float = DEFAULT_DELTA  # the chance the certificate is wrong
    concurrency: int = 4
    # What chooses the candidates the judge is shown in production (the relevance model's name and
    # fingerprint, resolver.rankers.deployed_retrieval); joined into the stored fingerprint.
    retrieval: str | None = None

    def problems(self) -> list[str]:
        found = []
        if not (math.isfinite(self.alpha) and 0.0 < self.alpha < 1.0):
            found.append("--alpha must be between 0 and 1 (exclusive)")
        if not (math.isfinite(self.delta) and 0.0 < self.delta < 1.0):
            found.append("--delta must be between 0 and 1 (exclusive)")
        if not (math.isfinite(self.margin) and 0.0 <= self.margin < 1.0):
            found.append("--margin must be at least 0 and below 1")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            found.append(f"--concurrency must be 1 to {MAX_CONCURRENCY}")
        return found
