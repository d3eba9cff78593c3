"""Judge backends: Jev over requests, and a disabled one."""
from __future__ import annotations

from resolver.judges.base import Judge
from resolver.judges.disabled import DisabledJudge
from resolver.judges.jev import JevJudge, judge_from_settings

__all__ = ["DisabledJudge", "JevJudge", "Judge", "judge_from_settings"]
