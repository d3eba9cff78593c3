"""Judge backends: Jev over requests, and a disabled one."""
from __future__ import annotations

from resolver.judges.base import Judge
from resolver.judges.disabled import DisabledJudge
from resolver.judges.jev import JevJudge

__all__ = ["DisabledJudge", "JevJudge", "Judge"]
