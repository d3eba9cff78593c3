"""The judges of a process: one per configuration, each with its own connections.

    judge = registry.shared(JevJudge(base_url=..., ...))

A judge is built from the settings on every request (cheap, and a changed
setting takes effect at once), but what it keeps between requests (its HTTP
Session, what it learnt of its server) belongs to the first judge built with
that configuration: `shared` returns that one. Judges compare by their
configuration (dataclass equality; sessions, clocks and sleeps are not part of
it). The least recently used judge beyond `max_judges` is dropped and its
connections closed. The process's registry is created with the app
(resolver.apps.ResolverConfig.ready), like every registry (resolver/registry.py).
"""
from __future__ import annotations

from typing import Any, TypeVar

from resolver.registry import Registry

J = TypeVar("J")

# Configurations kept at once: a site has one judge; tests and evaluations a few.
MAX_JUDGES = 8


class JudgeRegistry(Registry[tuple[type, Any], Any]):
    def __init__(self, *, max_judges: int = MAX_JUDGES) -> None:
        super().__init__(max_judges)

    def create(self, key: tuple[type, Any]) -> Any:
        # The key is the judge's configuration, and the first judge built with it is the one kept.
        return key[1]

    def close(self, judge: Any) -> None:
        connections = getattr(judge, "connections", None)
        if connections is not None:
            connections.close()

    def shared(self, judge: J) -> J:
        """The judge already kept for this configuration, or `judge`, now kept."""
        key = (type(judge), judge)
        try:
            hash(key)
        except TypeError:  # a judge that is not a frozen dataclass: nothing to share
            return judge
        return self.get(key)  # type: ignore[no-any-return]
