"""The app's settings: one `RESOLVER` dict in the project settings, with defaults.

Read lazily and reloaded on `setting_changed`, so `override_settings` works in
tests. The app never reads the environment itself: the project's settings do.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

DEFAULTS: dict[str, Any] = {
    # CalDAV
    "CALDAV_URL": "",
    "CALDAV_USERNAME": "",
    "CALDAV_PASSWORD": "",
    "CALDAV_TIMEOUT": 10.0,
    "EVENT_HORIZON_DAYS": 90,
    "EVENT_TIME_RANGE_FILTER": True,
    # Incremental reads: "auto" (WebDAV sync where offered) or "off" (etag-only listing).
    "CALDAV_SYNC": "auto",
    # Resources the process-wide parse memo holds; 0 turns it off (every read is full).
    "PARSE_CACHE_ITEMS": 100_000,
    # Hostile calendars: bounds on the work one resource may cost (README).
    "MAX_RESOURCE_BYTES": 1024 * 1024,
    "MAX_RESOURCE_COMPONENTS": 1000,
    "MAX_COMPONENT_DEPTH": 8,
    "MAX_RESOURCE_OVERRIDES": 1000,
    "MAX_RECURRENCE_DATES": 2000,
    "RECURRENCE_BUDGET": 10000,
    # How long a collection whose server failed on its own time-range filter
    # is read without it before the filter is tried again.
    "SERVER_FILTER_RETRY_SECONDS": 3600,
    # The whole resolution, CalDAV reads and judgment included.
    "RESOLUTION_BUDGET_SECONDS": 20.0,
    # Matching
    "MAX_CANDIDATES": 19,
    "MAX_TEXT_LENGTH": 500,
    "MAX_COLLECTION_IDS": 50,
    # API request bodies: a valid request is far smaller (500 characters of text,
    # 50 collection IDs), so anything bigger is refused before it is parsed.
    "MAX_BODY_BYTES": 65536,
    # Jev judgment
    "TYPESAFE_API_KEY": "",
    "TYPESAFE_BASE_URL": "",
    "TYPESAFE_DEFAULT_MODEL": "jev-latest",
    "JEV_CONNECT_TIMEOUT": 3.05,
    "JEV_READ_TIMEOUT": 6.0,
    "JUDGMENT_BUDGET_SECONDS": 8.0,
    "THRESHOLD_MARGIN": 0.1,
    "PROVENANCE_TTL_SECONDS": 900,
    # Clarification page
    "SITE_URL": "",
    "CLARIFICATION_MAX_AGE_SECONDS": 900,
}


class ResolverSettings:
    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown resolver setting: {name}")
        if name not in self._cache:
            user = getattr(settings, "RESOLVER", {}) or {}
            self._cache[name] = user.get(name, DEFAULTS[name])
        return self._cache[name]

    def reload(self) -> None:
        self._cache.clear()


resolver_settings = ResolverSettings()


@receiver(setting_changed)
def _reload(*, setting: str, **kwargs: Any) -> None:
    if setting == "RESOLVER":
        resolver_settings.reload()
