"""System checks: configuration problems fail loudly at start-up."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

from resolver.conf import resolver_settings


@checks.register(checks.Tags.security, deploy=False)
def check_secret_key(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    dev_key = getattr(settings, "DEV_SECRET_KEY", None)
    if not settings.DEBUG and dev_key and settings.SECRET_KEY == dev_key:
        return [
            checks.Error(
                "SECRET_KEY is the development default while DEBUG is off.",
                hint="Set the SECRET_KEY environment variable to a long random value.",
                id="resolver.E001",
            )
        ]
    return []


@checks.register()
def check_caldav(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if not resolver_settings.CALDAV_URL:
        return [
            checks.Warning(
                "RESOLVER['CALDAV_URL'] is empty; every resolution will fail.",
                hint="Set the CALDAV_URL environment variable.",
                id="resolver.W001",
            )
        ]
    return []
