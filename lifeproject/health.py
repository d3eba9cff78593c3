"""GET /healthz: does this instance reach everything a resolution needs?

200 when the database, the cache and the CalDAV server all answer, 503 naming
the ones that did not; each check reports its latency in milliseconds. No
authentication (load balancers and orchestrators call it), so it says nothing
that could help an attacker: no URLs, no user names, no exception messages
(a driver's message can quote a connection string), only a short reason code.
"""
from __future__ import annotations

import logging
import secrets
import time
from typing import Any, Callable

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from resolver.domain.errors import CalendarUnavailable

logger = logging.getLogger("lifeproject.health")

CACHE_KEY = "lifeproject:healthz"


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        if cursor.fetchone() != (1,):
            raise RuntimeError("unexpected answer")


def check_cache() -> None:
    # A fresh value each time: a cache that silently drops writes must fail.
    nonce = secrets.token_hex(8)
    cache.set(CACHE_KEY, nonce, timeout=30)
    if cache.get(CACHE_KEY) != nonce:
        raise RuntimeError("value not read back")


def check_caldav() -> None:
    from resolver.services import calendar_from_settings

    calendar_from_settings().collections()


CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "cache": check_cache,
    "caldav": check_caldav,
}


def _reason(err: Exception) -> str:
    if isinstance(err, CalendarUnavailable):
        return str(err.details.get("reason", "calendar_unavailable"))
    return type(err).__name__


def checks_in_force() -> dict[str, Callable[[], None]]:
    """With per-user accounts no resolution reads the settings' account, and each
    person's servers are theirs: /healthz then reads no CalDAV account at all, so it
    can neither fail because of one person's server nor tell anything about it."""
    from resolver import accounts

    if accounts.per_user():
        return {name: check for name, check in CHECKS.items() if name != "caldav"}
    return CHECKS


def run_checks() -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for name, check in checks_in_force().items():
        started = time.perf_counter()
        try:
            check()
        except Exception as err:  # every failure is a result, never a 500
            results[name] = {"ok": False, "latency_ms": _ms(started), "reason": _reason(err)}
            logger.warning("health check failed", extra={"check": name, "reason": _reason(err)})
        else:
            results[name] = {"ok": True, "latency_ms": _ms(started)}
    return results


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    checks = run_checks()
    failed = [name for name, result in checks.items() if not result["ok"]]
    body = {"status": "error" if failed else "ok", "failed": failed, "checks": checks}
    return JsonResponse(body, status=503 if failed else 200)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
