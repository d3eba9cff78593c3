from __future__ import annotations

import pytest

from resolver.judges.registry import judges


@pytest.fixture(autouse=True)
def fresh_session() -> None:
    """New judges, so new Sessions, per test: every scripted server listens on a new port.

    Pools for dozens of loopback ports in one process can stall urllib3-future
    waiting to evict one (see tests/evaluation/scripted.py); one host per
    process, as in production, never gets there.
    """
    judges().clear()
