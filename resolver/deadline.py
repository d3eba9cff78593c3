"""The settings' side of the request deadline (the deadline itself: resolver/domain/deadline.py).

`budget()` opens the request's deadline with RESOLVER_RESOLUTION_BUDGET_SECONDS;
every door opens it around the whole request (all its steps), and the services
join it (or open it, called on their own). The app's code asks one module for
the deadline, so the domain's functions (running, remaining, expired, ...) are
named here too: the domain's module cannot read settings, and a caller that
needs both would otherwise import two modules of the same name.
"""
from __future__ import annotations

from contextlib import AbstractContextManager

from resolver.domain.deadline import (  # noqa: F401 - the app's one deadline module (docstring)
    DEFAULT_SECONDS, Deadline, ResolutionTimeout, bounded_by, check, current, expired, remaining, running,
    starting,
)


def configured_seconds() -> float:
    from resolver.conf import resolver_settings

    return float(resolver_settings.RESOLUTION_BUDGET_SECONDS)


def budget() -> AbstractContextManager[Deadline]:
    """The request's deadline, from the settings (the outer one when already running)."""
    return running(configured_seconds())


# A whole call under the settings' budget (tests and benchmarks that read without a service).
bounded = bounded_by(configured_seconds)
