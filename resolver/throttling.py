"""Attempts a person may make the site perform, per person and per client address.

Checking an account is a login attempt the site makes on someone's server:
unthrottled, a signed-in person could use the site to try stolen CalDAV
passwords against any provider, or to map which names exist. `AttemptLimiter`
is DRF's sliding-window arithmetic (SimpleRateThrottle: a history of attempt
times per key, in the default cache) for calls that are not DRF views: the
accounts page, the command, the service. Every key must have room; an attempt
is then counted against each of them.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

from django.core.cache import cache as default_cache

from resolver.domain.errors import InvalidRequest, Throttled

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """"10/hour" -> (10, 3600), DRF's notation (the period's first letter counts)."""
    try:
        count, period = str(rate).split("/", 1)
        return int(count), _PERIODS[period.strip()[0].lower()]
    except (ValueError, KeyError, IndexError):
        raise InvalidRequest(f"Not a rate: {rate!r} (write it like 10/hour).", details={"field": "rate"}) from None


class AttemptLimiter:
    def __init__(self, scope: str, rate: str, *, cache: object = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.scope = scope
        self.count, self.seconds = parse_rate(rate)
        self.cache = cache or default_cache
        self.clock = clock

    def _key(self, key: str) -> str:
        return f"resolver:throttle:{self.scope}:{key}"

    def _history(self, key: str, now: float) -> list[float]:
        return [t for t in self.cache.get(self._key(key), []) if t > now - self.seconds]  # type: ignore[attr-defined]

    def attempt(self, keys: Sequence[str]) -> None:
        """Count one attempt against every key, or raise Throttled (counting nothing) when one is full."""
        now = self.clock()
        histories = {key: self._history(key, now) for key in keys}
        waits = [self.seconds - (now - min(history)) for history in histories.values() if len(history) >= self.count]
        if waits:
            wait = max(1, int(max(waits) + 0.999))
            raise Throttled(f"Too many account checks; try again in {wait} seconds.",
                            details={"retry_after_seconds": wait})
        for key, history in histories.items():
            self.cache.set(self._key(key), [*history, now], self.seconds)  # type: ignore[attr-defined]
