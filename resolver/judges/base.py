"""What the pipeline needs from a judge: one question in, a judgment or a reason out."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from resolver.domain.judgment import Judgment, JudgmentUnavailable, Question


@runtime_checkable
class Judge(Protocol):
    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        """Answer `question`; never raise: every failure is a JudgmentUnavailable."""
        ...
