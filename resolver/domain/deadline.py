"""One deadline per request: a plain context variable, set by the services from the settings.

Each part has its own bound (CALDAV_TIMEOUT per socket operation, the
judgment budget, the recurrence budget per series), but a request is made of
many parts: a calendar of many collections, several accounts, a slow server
answering each request just inside its timeout, then the judge. The deadline
bounds their sum. It is kept in a context variable, so every part asks
`remaining()` without the deadline being passed through every signature, and
threads or requests never share one.

The door opens it (the API view, the page, the command, the MCP tool call:
`resolver/deadline.py` reads RESOLVER_RESOLUTION_BUDGET_SECONDS), around every
step of the request: a view that adds an account and then lists the accounts,
or that tries a pick and then shows the question again, spends one budget,
not one per step. A `running()` opened while one is active joins it (the
services' `bounded`, the pipeline's `bounded_by_default`), so a step never starts a deadline of
its own inside a request; `current()` is the request's `Deadline` itself.
This module imports nothing from Django.
"""
from __future__ import annotations

import functools
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, TypeVar

DEFAULT_SECONDS = 20.0

F = TypeVar("F", bound=Callable[..., Any])


class Deadline:
    """One request's end (a time.monotonic() value): the same object for every step of the request."""

    __slots__ = ("end", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def __repr__(self) -> str:
        return f"<Deadline of {self.seconds} s, {self.remaining():.3f} s left>"


_deadline: ContextVar[Deadline | None] = ContextVar("request_deadline", default=None)


class ResolutionTimeout(Exception):
    """The request's deadline passed (the CalDAV reader ends its read with reason timeout itself)."""


@contextmanager
def running(seconds: float) -> Iterator[Deadline]:
    """A deadline `seconds` from now for the block, unless one is already running (then that one)."""
    outer = _deadline.get()
    if outer is not None:
        yield outer
        return
    with starting(seconds) as new:
        yield new


@contextmanager
def starting(seconds: float) -> Iterator[Deadline]:
    """A new deadline for the block, whatever runs around it: only for a step that begins after a
    wait that is not the request's (the MCP door's pick after the person answered its question)."""
    new = Deadline(seconds)
    token = _deadline.set(new)
    try:
        yield new
    finally:
        _deadline.reset(token)


def current() -> Deadline | None:
    """The request's deadline, or None outside one."""
    return _deadline.get()


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


# The pipeline called on its own (tests, benchmarks): DEFAULT_SECONDS; through a service, the
# service's deadline, opened by resolver.deadline.bounded with the configured budget.
bounded_by_default = bounded_by(lambda: DEFAULT_SECONDS)


def remaining() -> float | None:
    """Seconds left, or None outside any request's deadline."""
    deadline = _deadline.get()
    return None if deadline is None else deadline.remaining()


def expired() -> bool:
    left = remaining()
    return left is not None and left <= 0


def check() -> None:
    if expired():
        raise ResolutionTimeout()
