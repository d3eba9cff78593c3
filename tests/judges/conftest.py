from __future__ import annotations

import pytest

from resolver.judges import http


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new shared Session per test: every scripted server listens on a new port.

    Pools for dozens of loopback ports in one process can stall urllib3-future
    waiting to evict one (see tests/evaluation/scripted.py); one host per
    process, as in production, never gets there.
    """
    monkeypatch.setattr(http, "_session", None)
