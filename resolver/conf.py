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
    # Judge backend, by dotted path to a class with from_settings(). Jev is off
    # unless TYPESAFE_* name a key or a base URL.
    "JUDGE_BACKEND": "resolver.judges.jev.JevJudge",
    # OpenAI-compatible judge (RESOLVER_JUDGE=openai)
    "OPENAI_BASE_URL": "",
    "OPENAI_API_KEY": "",
    "OPENAI_MODEL": "",
    # Corrective turns after a defective answer, inside the judgment budget.
    "JUDGE_CORRECTIONS": 1,
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
