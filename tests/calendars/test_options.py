"""resolver/calendars/caldav/options.py: every read option is built once from the settings, and only there."""
from __future__ import annotations

from dataclasses import fields

import pytest

from resolver.calendars.caldav import CalDAVCalendar, ReadOptions
from resolver.conf import resolver_settings

CHANGED = {"CALDAV_TIMEOUT": 7.5, "MAX_RESPONSE_BYTES": 4096, "EVENT_HORIZON_DAYS": 30,
           "EVENT_TIME_RANGE_FILTER": False, "CALDAV_SYNC": " OFF ", "CALDAV_SHARED_READS": False,
           "CALDAV_CTAG": False, "PARSE_CACHE_ITEMS": 0, "MAX_RESOURCE_BYTES": 2048,
           "SERVER_FILTER_RETRY_SECONDS": 60}


def test_from_settings__every_option_is_its_setting(settings):
    settings.RESOLVER = {**getattr(settings, "RESOLVER", {}), **CHANGED}
    options = ReadOptions.from_settings(resolver_settings)
    assert (options.timeout, options.max_response_bytes, options.horizon_days, options.event_time_range,
            options.sync, options.shared_reads, options.ctag, options.parse_cache_items,
            options.limits.max_bytes, options.filter_retry_seconds) == (
        7.5, 4096, 30, False, "off", False, False, 0, 2048, 60.0)
    assert options.incremental is False


def test_calendar__holds_the_settings_options_and_a_keyword_changes_one(settings):
    settings.RESOLVER = {**getattr(settings, "RESOLVER", {}), **CHANGED}
    calendar = CalDAVCalendar(url="http://127.0.0.1:9/", username="u", password="p", sync="auto")
    expected = ReadOptions.from_settings(resolver_settings)
    for option in fields(ReadOptions):
        want = "auto" if option.name == "sync" else getattr(expected, option.name)
        assert getattr(calendar.options, option.name) == want, option.name


def test_calendar__from_settings_is_the_settings_options_and_the_password_stays_out_of_its_repr():
    assert CalDAVCalendar.from_settings(resolver_settings).options == ReadOptions.from_settings(resolver_settings)
    calendar = CalDAVCalendar(url="http://127.0.0.1:9/", username="u", password="s3cret-pw")
    assert "s3cret-pw" not in repr(calendar) and "u" in repr(calendar)


def test_calendar__an_unknown_option_or_sync_mode_is_refused():
    with pytest.raises(TypeError):
        CalDAVCalendar(url="http://127.0.0.1:9/", username="u", password="p", no_such_option=1)
    with pytest.raises(ValueError, match="RESOLVER_CALDAV_SYNC"):
        CalDAVCalendar(url="http://127.0.0.1:9/", username="u", password="p", sync="sometimes")
