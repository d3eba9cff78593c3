"""Attempts a person may make the site perform, per person and per client address; their requests in flight.

Checking an account is a login attempt the site makes on someone's server:
unthrottled, a signed-in person could use the site to try stolen CalDAV
passwords against any provider, or to map which names exist. `AttemptLimiter`
is DRF's sliding-window arithmetic (SimpleRateThrottle: a history of attempt
times per key, in the default cache) for calls that are not DRF views: the
accounts page, the command, the service. Every key must have room; an attempt
is then counted against each of them.

Every door that reads CalDAV is also bounded per person twice more:

- `take(ident, scope=)`: the resolve rate (scope `resolve`: the project's
  REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] entry, else RESOLVER["THROTTLE_RATE"])
  in one bucket per person shared by every door (/v1/resolve, /v1/collections,
  /mcp, the pages), so switching doors does not multiply it. A door calls it
  (or `rate_wait(user_id)` / `check_rate(user_id)`) with the person's key and
  gets allowed or the seconds to wait; DRF's throttle class `ResolveThrottle`
  is only the API views' adapter over it;
- `InFlight`: at most RESOLVER["MAX_IN_FLIGHT_PER_PERSON"] of one person's
  requests at once, in every process (slots in the default cache, taken with
  the cache's atomic `add`, each expiring on its own after the deadline plus a
  margin, so a killed worker cannot keep one). Over it: `throttled` with
  `details.reason` `in_flight`. Each request holds a thread, a socket to the
  person's server and a database connection until its deadline: this bounds
  what one person can pile up.
"""
from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from django.core.cache import cache as default_cache
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle

from resolver.conf import resolver_settings
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


# The one scope every door that reads CalDAV counts against (the API views' `throttle_scope`).
RESOLVE_SCOPE = "resolve"


@dataclass(frozen=True)
class RateVerdict:
    """One request counted (allowed) or refused; `wait_seconds` is DRF's advice (None: it has none)."""

    allowed: bool
    wait_seconds: float | None = None


def rate_for(scope: str) -> str:
    """The scope's rate: the project's REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] entry, else RESOLVER["THROTTLE_RATE"].

    Read off DRF's `ScopedRateThrottle.THROTTLE_RATES`, where DRF copies that
    setting when it is first imported: the one place the API has always read it.
    """
    return ScopedRateThrottle.THROTTLE_RATES.get(scope) or str(resolver_settings.THROTTLE_RATE)


def _drf_rate(rate: str) -> tuple[int, int]:
    # DRF's own notation and strictness (SimpleRateThrottle.parse_rate): "120/min" -> (120, 60).
    count, period = rate.split("/")
    return int(count), _PERIODS[period[0]]


def take(ident: object, *, scope: str = RESOLVE_SCOPE, cache: object = None,
         clock: Callable[[], float] = time.time) -> RateVerdict:
    """Count one request of `ident` (a user's pk, else a client address) against `scope`'s rate.

    DRF's SimpleRateThrottle arithmetic, cache key and history, kept so: the
    API's throttle (`ResolveThrottle`) and every other door count in the same
    bucket, whichever door a person comes through.
    """
    store = cache or default_cache
    count, seconds = _drf_rate(rate_for(scope))
    key = f"throttle_{scope}_{ident}"
    history: list[float] = store.get(key, [])  # type: ignore[attr-defined]
    now = clock()
    while history and history[-1] <= now - seconds:
        history.pop()
    if len(history) >= count:
        remaining = seconds - (now - history[-1]) if history else seconds
        available = count - len(history) + 1
        return RateVerdict(allowed=False, wait_seconds=remaining / float(available) if available > 0 else None)
    history.insert(0, now)
    store.set(key, history, seconds)  # type: ignore[attr-defined]
    return RateVerdict(allowed=True)


class ResolveThrottle(BaseThrottle):
    """DRF's face of `take`: the API views wear it, with their `throttle_scope` (per user, else per client address).

    Only the key is DRF's business here (the view's scope, the request's user);
    the counting is the service every door calls.
    """

    scope_attr = "throttle_scope"
    verdict = RateVerdict(allowed=True)

    def allow_request(self, request: Any, view: Any) -> bool:
        scope = getattr(view, self.scope_attr, None)
        if not scope:
            return True
        user = getattr(request, "user", None)
        ident = user.pk if user is not None and user.is_authenticated else self.get_ident(request)
        self.verdict = take(ident, scope=scope)
        return self.verdict.allowed

    def wait(self) -> float | None:
        return self.verdict.wait_seconds

    def get_ident(self, request: Any) -> str:
        # DRF's own believes X-Forwarded-For from anyone unless NUM_PROXIES is set;
        # the app's rule trusts only RESOLVER["TRUSTED_PROXIES"] (resolver/client_address.py).
        from resolver.client_address import client_address

        return client_address(request)


def rate_wait(user_id: object) -> float | None:
    """None when the person may make one more request that reads CalDAV (counted), else the seconds to wait.

    The API's bucket for an authenticated user: one bucket through every door.
    """
    verdict = take(user_id, scope=RESOLVE_SCOPE)
    if verdict.allowed:
        return None
    return verdict.wait_seconds or 1.0


def check_rate(user_id: object) -> None:
    """Count one request against the person's rate, or raise Throttled (with retry_after_seconds)."""
    wait = rate_wait(user_id)
    if wait is not None:
        seconds = max(1, int(wait + 0.999))
        raise Throttled(f"Too many requests; try again in {seconds} seconds.",
                        details={"reason": "rate", "retry_after_seconds": seconds})


class InFlight:
    """At most `limit` requests of one person at once, across processes (module docstring)."""

    # A slot outlives its request's deadline by this much before it expires on its own.
    MARGIN_SECONDS = 60

    def __init__(self, limit: int, *, budget_seconds: float, cache: object = None) -> None:
        self.limit = max(1, int(limit))
        self.ttl = int(budget_seconds + 0.999) + self.MARGIN_SECONDS
        self.cache = cache or default_cache

    def _slot(self, key: str, n: int) -> str:
        return f"resolver:in_flight:{key}:{n}"

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        """One of `key`'s slots for the block, or Throttled (reason in_flight) when all are taken."""
        mine = uuid.uuid4().hex
        slot = next((self._slot(key, n) for n in range(self.limit)
                     if self.cache.add(self._slot(key, n), mine, self.ttl)), None)  # type: ignore[attr-defined]
        if slot is None:
            raise Throttled(f"Too many of your requests are running at once (at most {self.limit}); "
                            "try again in a moment.",
                            details={"reason": "in_flight", "max_in_flight": self.limit, "retry_after_seconds": 1})
        try:
            yield
        finally:
            if self.cache.get(slot) == mine:  # type: ignore[attr-defined]
                self.cache.delete(slot)  # type: ignore[attr-defined]
