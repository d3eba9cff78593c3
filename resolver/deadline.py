"""The whole resolution's deadline (RESOLVER_RESOLUTION_BUDGET_SECONDS).

Each part has its own bound (CALDAV_TIMEOUT per HTTP request, the judgment
budget, the recurrence budget per series), but a resolution is made of many
parts: a calendar of many collections, a slow server answering each request
just inside its timeout, then the judge. The deadline bounds their sum. It is
kept in a context variable set around `pipeline.resolve`, so every part asks
`remaining()` without the deadline being passed through every signature, and
threads or requests never share one.
"""
from __future__ import annotations

import functools
import time
from contextvars import ContextVar
from typing import Any, Callable, TypeVar

DEFAULT_SECONDS = 20.0

_deadline: ContextVar[float | None] = ContextVar("resolution_deadline", default=None)
F = TypeVar("F", bound=Callable[..., Any])


class ResolutionTimeout(Exception):
    """The resolution's deadline passed (the CalDAV reader ends its read with reason timeout itself)."""


def _configured_seconds() -> float:
    try:
        from django.conf import settings

        if settings.configured:
            from resolver.conf import resolver_settings

            return float(resolver_settings.RESOLUTION_BUDGET_SECONDS)
    except ImportError:
        pass
    return DEFAULT_SECONDS


def bounded(function: F) -> F:
    """Run `function` under a fresh deadline, unless one is already running (a nested call)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _deadline.get() is not None:
            return function(*args, **kwargs)
        token = _deadline.set(time.monotonic() + _configured_seconds())
        try:
            return function(*args, **kwargs)
        finally:
            _deadline.reset(token)

    return wrapper  # type: ignore[return-value]


def remaining() -> float | None:
    """Seconds left, or None outside a resolution (no deadline)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def expired() -> bool:
    left = remaining()
    return left is not None and left <= 0


def check() -> None:
    if expired():
        raise ResolutionTimeout()
