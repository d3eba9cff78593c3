"""Calendar backends. `RESOLVER["CALENDAR_BACKEND"]` names a factory like the one below."""
from __future__ import annotations

from typing import Any


def caldav_from_settings(*, settings: Any) -> Any:
    """The CalDAV backend, configured from the resolver settings (the default backend)."""
    from resolver.calendars.caldav import CalDAVCalendar

    return CalDAVCalendar(
        url=settings.CALDAV_URL,
        username=settings.CALDAV_USERNAME,
        password=settings.CALDAV_PASSWORD,
        timeout=float(settings.CALDAV_TIMEOUT),
        horizon_days=int(settings.EVENT_HORIZON_DAYS),
        event_time_range=bool(settings.EVENT_TIME_RANGE_FILTER),
        sync=str(settings.CALDAV_SYNC).strip().lower(),
        parse_cache_items=int(settings.PARSE_CACHE_ITEMS),
        max_response_bytes=int(settings.MAX_RESPONSE_BYTES),
        # Only a person's account says so (resolver.accounts); the settings' own may be private.
        check_addresses=bool(getattr(settings, "CALDAV_CHECK_ADDRESSES", False)),
    )
