"""One deadline per request: a plain context variable, set by the services from the settings.

Each part has its own bound (CALDAV_TIMEOUT per socket operation, the
judgment budget, the recurrence budget per series), but a request is made of
many parts: a calendar of many collections, several accounts, a slow server
answering each request just inside its timeout, then the judge. The deadline
bounds their sum. It is kept in a context variable, so every part asks
`remaining()` without the deadline being passed through every signature, and
threads or requests never share one.

The services (resolver/services.py, resolver/accounts.py) open it around every
request that reads a calendar, with RESOLVER_RESOLUTION_BUDGET_SECONDS
(`resolver/deadline.py` reads the setting); a nested `running()` keeps the
outer deadline, so the pipeline's own `bounded` inside a service call uses the
request's. This module imports nothing from Django.
"""
from __future__ import annotations

import functools
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, TypeVar

DEFAULT_SECONDS = 20.0

_deadline: ContextVar[float | None] = ContextVar("request_deadline", default=None)
F = TypeVar("F", bound=Callable[..., Any])


class ResolutionTimeout(Exception):
    """The request's deadline passed (the CalDAV reader ends its read with reason timeout itself)."""


@contextmanager
def running(seconds: float) -> Iterator[None]:
    """A deadline `seconds` from now for the block, unless one is already running (then that one)."""
    if _deadline.get() is not None:
        yield
        return
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def bounded_by(seconds: Callable[[], float]) -> Callable[[F], F]:
    """Decorate: run under a deadline of `seconds()` (asked only when none is running)."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _deadline.get() is not None:
                return function(*args, **kwargs)
            with running(seconds()):
                return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


# The pipeline called on its own (tests, benchmarks): the default; through a service, the service's.
bounded = bounded_by(lambda: DEFAULT_SECONDS)


def remaining() -> float | None:
    """Seconds left, or None outside any request's deadline."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def expired() -> bool:
    left = remaining()
    return left is not None and left <= 0


def check() -> None:
    if expired():
        raise ResolutionTimeout()
