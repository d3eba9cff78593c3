"""The judges of a process: one per configuration, each with its own connections.

    judge = registry.shared(JevJudge(base_url=..., ...))

A judge is built from the settings on every request (cheap, and a changed
setting takes effect at once), but what it keeps between requests (its HTTP
Session, what it learnt of its server) belongs to the first judge built with
that configuration: `shared` returns that one. Judges compare by their
configuration (dataclass equality; sessions, clocks and sleeps are not part of
it). The least recently used judge beyond `max_judges` is dropped and its
connections closed. The process's registry is created with the app
(resolver.apps.ResolverConfig.ready), like the reader registry of CalDAV accounts.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, TypeVar

J = TypeVar("J")

# Configurations kept at once: a site has one judge; tests and evaluations a few.
MAX_JUDGES = 8


class JudgeRegistry:
    def __init__(self, *, max_judges: int = MAX_JUDGES) -> None:
        self._judges: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_judges

    def shared(self, judge: J) -> J:
        """The judge already kept for this configuration, or `judge`, now kept."""
        try:
            key = (type(judge), judge)
            hash(key)
        except TypeError:  # a judge that is not a frozen dataclass: nothing to share
            return judge
        dropped = []
        with self._lock:
            kept = self._judges.get(key)
            if kept is not None:
                self._judges.move_to_end(key)
                return kept
            self._judges[key] = judge
            while len(self._judges) > self._max:
                dropped.append(self._judges.popitem(last=False)[1])
        for old in dropped:
            _close(old)
        return judge

    def clear(self) -> None:
        """Drop every judge and close its connections (tests, and a process shutting down)."""
        with self._lock:
            judges, self._judges = list(self._judges.values()), OrderedDict()
        for judge in judges:
            _close(judge)

    def __len__(self) -> int:
        return len(self._judges)


def _close(judge: Any) -> None:
    connections = getattr(judge, "connections", None)
    if connections is not None:
        connections.close()
