"""The judges of a process: one per configuration, each with its own connections.

    judge = registry.shared(JevJudge(base_url=..., ...))

A judge is built from the settings on every request (cheap, and a changed
setting takes effect at once), but what it keeps between requests (its HTTP
Session, what it learnt of its server) belongs to the first judge built with
that configuration: `shared` returns that one. Judges compare by their
configuration (dataclass equality; sessions, clocks and sleeps are not part of
it). The least recently used judge beyond `max_judges` is dropped and closed
(`Judge.close`). The process's registry is held by the app's config, created on
its first use (resolver.apps.ResolverConfig.registries), like every registry
(resolver/registry.py).

A judge that cannot be shared (unhashable, or equal only to itself) is refused
with ImproperlyConfigured rather than used unshared: a new judge per request
would open new connections on every request. The system check resolver.E011
says so at start-up for the class RESOLVER["JUDGE_BACKEND"] names.
"""
from __future__ import annotations

from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured

from resolver.registry import Registry, held

J = TypeVar("J")

# Configurations kept at once: a site has one judge; tests and evaluations a few.
MAX_JUDGES = 8


def sharing_problem(cls: type) -> str | None:
    """Why judges of `cls` cannot be kept one per configuration, or None when they can."""
    if getattr(cls, "__hash__", None) is None:
        return "its judges are not hashable"
    if getattr(cls, "__eq__", None) is object.__eq__:
        return "its judges are equal only to themselves, not to a judge of the same configuration"
    return None


class JudgeRegistry(Registry[tuple[type, Any], Any]):
    def __init__(self, *, max_judges: int = MAX_JUDGES) -> None:
        super().__init__(max_judges)

    def create(self, key: tuple[type, Any]) -> Any:
        # The key is the judge's configuration, and the first judge built with it is the one kept.
        return key[1]

    def close(self, judge: Any) -> None:
        judge.close()

    def shared(self, judge: J) -> J:
        """The judge already kept for this configuration, or `judge`, now kept."""
        problem = sharing_problem(type(judge))
        if problem is None:
            try:
                hash(judge)
            except TypeError:  # a field that does not hash (a list, a dict)
                problem = "one of its fields is not hashable"
        if problem is not None:
            raise ImproperlyConfigured(
                f"{type(judge).__module__}.{type(judge).__qualname__} cannot be kept one per configuration: "
                f"{problem}. Make it a frozen dataclass (docs/judge.md, \"Adding a judge\").")
        return self.get((type(judge), judge))  # type: ignore[no-any-return]


def judges() -> JudgeRegistry:
    """The process's judges (held by the app's config: resolver.apps.ResolverConfig.registries)."""
    return held("judges")  # type: ignore[no-any-return]


def judge_from_settings() -> Any:
    """The backend RESOLVER['JUDGE_BACKEND'] names (a dotted path), built from its settings.

    The process's judge for that configuration: its connections outlive the request.
    """
    from resolver.conf import build_backend

    return judges().shared(build_backend("JUDGE_BACKEND"))
