"""Judge backends: Jev and OpenAI-compatible chat servers over requests, and a disabled one.

Each implements the one judge protocol, resolver.domain.ports.Judge
(docs/judge.md, "Adding a judge").
"""
from __future__ import annotations

from resolver.domain.ports import Judge
from resolver.judges.disabled import DisabledJudge
from resolver.judges.jev import JevJudge
from resolver.judges.openai import OpenAIJudge

__all__ = ["BUILT_IN", "DisabledJudge", "JevJudge", "Judge", "OpenAIJudge"]

# The judges that ship with the app: thresholds evaluated for one of them stay
# checkable while another judge is configured (resolver.thresholds.judge_fingerprint:
# their fingerprints follow from their code alone, resolver.domain.ports.Fingerprint).
BUILT_IN: tuple[type, ...] = (JevJudge, OpenAIJudge, DisabledJudge)

