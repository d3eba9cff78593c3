"""The judge used when no judge is configured: it always abstains."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from resolver.domain.judgment import Judgment, JudgmentUnavailable, Question


@dataclass(frozen=True)
class DisabledJudge:
    backend = "off"
    model = ""
    # It never answers: no threshold can be approved for it.
    fingerprint = ""

    @classmethod
    def from_settings(cls, settings: Any) -> DisabledJudge:
        return cls()

    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        return JudgmentUnavailable(reason="disabled")

    def close(self) -> None:
        """Nothing to release."""
