"""Judge backends: Jev and OpenAI-compatible chat servers over requests, and a disabled one.

Each implements the one judge protocol, resolver.domain.ports.Judge
(docs/judge.md, "Adding a judge").
"""
from __future__ import annotations

from resolver.domain.ports import Judge
from resolver.judges.disabled import DisabledJudge
from resolver.judges.jev import JevJudge
from resolver.judges.openai import OpenAIJudge

__all__ = ["BUILT_IN", "DisabledJudge", "JevJudge", "Judge", "OpenAIJudge", "current_fingerprint"]

# The judges that ship with the app: thresholds evaluated for one of them stay
# checkable while another judge is configured (their fingerprints follow from
# their code alone: resolver.domain.ports.Fingerprint).
BUILT_IN: tuple[type, ...] = (JevJudge, OpenAIJudge, DisabledJudge)


def current_fingerprint(backend: str) -> str | None:
    """The fingerprint the judge of `backend` has now, asked of the judge; None when no judge here has it.

    The configured judge is asked first (RESOLVER["JUDGE_BACKEND"], as the
    services build it), then the built-in judges. A judge that never answers
    (fingerprint "") has none.
    """
    from django.core.exceptions import ImproperlyConfigured

    from resolver import services

    try:
        configured: list[object] = [services.judge_from_settings()]
    except (ImportError, ImproperlyConfigured):  # named by the system checks (resolver.E003)
        configured = []
    for judge in (*configured, *BUILT_IN):
        fingerprint = getattr(judge, "fingerprint", None)
        # A built-in class's fingerprint reads on the class; another class's may need a judge.
        if getattr(judge, "backend", None) == backend and isinstance(fingerprint, str):
            return fingerprint or None
    return None
